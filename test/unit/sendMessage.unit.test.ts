/**
 * SendMessage: given the registry and message history, when a send is decided,
 * then exactly these events (or this error). Inputs go through the real zod
 * schema first, as they do at the edge.
 */
import { foldRegistry, initialRegistryState } from '../../src/commands/agentRegistry';
import { foldMessage, initialMessageState } from '../../src/commands/message';
import { sendMessageSchema } from '../../src/commands/schemas';
import {
  decideSendMessage,
  sendWarnings,
  type SendMessage,
  type SendPolicy,
  type SendState,
} from '../../src/commands/sendMessage';
import { parseInput } from '../../src/commands/validation';
import type { AgentEvent, MailboxEvent, MessageEvent, MessageSent } from '../../src/events/types';
import { DeciderSpecification, type Decider } from '../support/deciderSpec';
import { A, B, broadcastSent, directSent, MESSAGE_ID, meta, PARENT_ID, registered, retired, T1, T2 } from './fixtures/domain';

const PERMISSIVE: SendPolicy = { maxBodyBytes: 1024, strictRecipients: false };
const STRICT: SendPolicy = { ...PERMISSIVE, strictRecipients: true };

const isAgentEvent = (event: MailboxEvent): event is AgentEvent => event.type.startsWith('Agent');

/** The send's state comes from three streams: the registry, its own message stream, and the inReplyTo parent. */
function sendDecider(policy: SendPolicy): Decider<SendMessage, SendState, MailboxEvent> {
  return {
    initialState: (): SendState => ({ message: initialMessageState(), registry: initialRegistryState(), parent: null }),
    evolve: (state: SendState, events: readonly MailboxEvent[]): SendState => {
      const registry = foldRegistry(state.registry, events.filter(isAgentEvent));
      const messageEvents = events.filter((e): e is MessageEvent => !isAgentEvent(e));
      const own = messageEvents.filter((e) => e.data.messageId === MESSAGE_ID);
      const parentEvents = messageEvents.filter((e) => e.data.messageId !== MESSAGE_ID);
      return {
        registry,
        message: foldMessage(state.message, own),
        parent: parentEvents.length ? foldMessage(state.parent ?? initialMessageState(), parentEvents) : state.parent,
      };
    },
    decide: (command: SendMessage, state: SendState) => decideSendMessage(command, state, policy),
  };
}

const given = (events: MailboxEvent[] = [], policy = PERMISSIVE) => DeciderSpecification.for(sendDecider(policy))(events);

const send = (input: Record<string, unknown>, sender = A, requestHash = 'hash-1'): SendMessage => ({
  type: 'SendMessage',
  data: { messageId: MESSAGE_ID, input: parseInput(sendMessageSchema, input, 'add_message'), requestHash },
  metadata: meta(sender),
});

/** The MessageSent this spec expects, spelled out field by field. */
function expectedSent(overrides: Partial<MessageSent['data']>): MessageSent {
  return {
    type: 'MessageSent',
    data: {
      messageId: MESSAGE_ID,
      from: '@alice',
      to: '@bob',
      subject: 'hi',
      priority: 'normal',
      threadId: MESSAGE_ID,
      inReplyTo: null,
      tags: [],
      sentAt: T1,
      wakeSuppressed: false,
      hasTask: false,
      body: 'hello',
      task: null,
      recipients: ['@bob'],
      idempotencyKey: null,
      requestHash: 'hash-1',
      ...overrides,
    },
  };
}

const team = [registered('@alice'), registered('@bob'), registered('@carol')];

describe('SendMessage: direct', () => {
  it('records one MessageSent to the recipient, in a new thread named after the message', () => {
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello' }))
      .then([expectedSent({})]);
  });

  it('keeps every field it was given', () => {
    given(team)
      .when(
        send({
          to: '@bob',
          subject: 'hi',
          body: 'hello',
          priority: 'high',
          tags: ['ops', 'urgent'],
          threadId: 'thread-7',
          task: { state: 'working' },
        }),
      )
      .then([
        expectedSent({
          priority: 'high',
          tags: ['ops', 'urgent'],
          threadId: 'thread-7',
          hasTask: true,
          task: { state: 'Working' },
        }),
      ]);
  });

  it('rejects a wrong recipient shape with INVALID_RECIPIENT_SHAPE and suggests a near identity', () => {
    given([...team, registered('@neo-gpt')])
      .when(send({ to: 'AGENT:gpt', subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { to: 'AGENT:gpt', suggestions: ['@neo-gpt'] });
  });

  it('a body over the limit: PAYLOAD_TOO_LARGE, counting UTF-8 bytes', () => {
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'é'.repeat(513) }))
      .thenFails('PAYLOAD_TOO_LARGE', { field: 'body', bytes: 1026, limit: 1024 });
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'é'.repeat(512) }))
      .then([expectedSent({ body: 'é'.repeat(512) })]);
  });
});

describe('SendMessage: a task deadline must fall after the send', () => {
  // T1 (the send) is 2025-03-01T10:05:00.000Z; the sweeper ends a task once its deadline <= now.
  it.each([
    ['expiresAt before the send', { expiresAt: '2020-01-01T00:00:00Z' }, 'task.expiresAt', '2020-01-01T00:00:00Z'],
    ['expiresAt at the send itself', { expiresAt: T1 }, 'task.expiresAt', T1],
    [
      'expiresAt the same instant in another offset',
      { expiresAt: '2025-03-01T12:05:00+02:00' },
      'task.expiresAt',
      '2025-03-01T12:05:00+02:00',
    ],
    [
      'budget.deadline before the send',
      { budget: { deadline: '2025-03-01T10:04:59Z' } },
      'task.budget.deadline',
      '2025-03-01T10:04:59Z',
    ],
  ])('%s: VALIDATION_FAILED naming the field, the value and the send time; nothing recorded', (_, task, field, value) => {
    const error = given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', task }))
      .thenFails('VALIDATION_FAILED', { field, value, sentAt: T1 });
    expect(error.message).toBe(
      `${field} '${value}' is not after the send (${T1}): the task would be over before it arrived (the sweeper ends it ` +
        'as Canceled, expired). Give an ISO 8601 date and time after the send, with seconds and an offset ' +
        '(e.g. 2025-03-02T10:05:00Z), or leave it out.',
    );
  });

  it('both passed: one error naming both, the first as its field', () => {
    const error = given(team)
      .when(
        send({
          to: 'AGENT:*',
          subject: 'hi',
          body: 'hello',
          task: JSON.stringify({ expiresAt: '2020-01-01T00:00:00Z', budget: { deadline: '2021-01-01T00:00:00Z' } }),
        }),
      )
      .thenFails('VALIDATION_FAILED', { field: 'task.expiresAt', value: '2020-01-01T00:00:00Z', sentAt: T1 });
    expect(error.message).toMatch(
      /^task.expiresAt '2020-01-01T00:00:00Z' and task.budget.deadline '2021-01-01T00:00:00Z' are not after the send .* or leave them out\.$/,
    );
  });

  it('a millisecond after the send is accepted, as given', () => {
    const task = { expiresAt: '2025-03-01T10:05:00.001Z', budget: { deadline: '2025-03-01T12:05:00+01:00' } };
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', task }))
      .then([expectedSent({ hasTask: true, task })]);
  });
});

describe('SendMessage: broadcast', () => {
  it('snapshots the audience: registered, not retired, agents only, not the sender', () => {
    const history = [...team, registered('@dave'), retired('@dave'), registered('@audit', 'auditor')];
    const [sent, ...deliveries] = broadcastSent('@alice', ['@bob', '@carol'], MESSAGE_ID);
    given(history)
      .when(send({ to: 'AGENT:*', subject: 'hello', body: 'body' }))
      .then([
        { ...sent, data: { ...sent.data, sentAt: T1 } },
        ...deliveries.map((d) => ({ ...d, data: { ...d.data, sentAt: T1, deliveredAt: T1 } })),
      ]);
  });

  it('with no peers it is still one message, kept for audit, delivered to nobody', () => {
    given([registered('@alice')])
      .when(send({ to: 'AGENT:*', subject: 'hi', body: 'hello' }))
      .then([expectedSent({ to: 'AGENT:*', recipients: [] })]);
  });

  it('a task broadcast to no peers is refused: nobody could ever claim it (its audience is the send-time snapshot)', () => {
    const error = given([registered('@alice'), registered('@bob'), retired('@bob'), registered('@audit', 'auditor')])
      .when(send({ to: 'AGENT:*', subject: 'hi', body: 'hello', task: {} }))
      .thenFails('VALIDATION_FAILED', { field: 'to' });
    expect(error.envelope.message).toContain('no other agent is active now');
  });

  it('whoever broadcasts is left out of its own audience (@bob -> @alice, @carol)', () => {
    given(team)
      .when(send({ to: 'AGENT:*', subject: 'hi', body: 'hello' }, B))
      .then([
        expectedSent({ from: '@bob', to: 'AGENT:*', recipients: ['@alice', '@carol'] }),
        ...['@alice', '@carol'].map((recipient) => ({
          type: 'BroadcastDelivered' as const,
          data: {
            messageId: MESSAGE_ID,
            from: '@bob',
            to: 'AGENT:*',
            subject: 'hi',
            priority: 'normal' as const,
            threadId: MESSAGE_ID,
            inReplyTo: null,
            tags: [],
            sentAt: T1,
            wakeSuppressed: false,
            hasTask: false,
            recipient,
            deliveredAt: T1,
          },
        })),
      ]);
  });
});

describe('SendMessage: Idempotency-Key', () => {
  const keyed = { to: '@bob', subject: 'hi', body: 'hello', idempotencyKey: 'k-1' };

  it('the first send records the key', () => {
    given(team)
      .when(send(keyed))
      .then([expectedSent({ idempotencyKey: 'k-1' })]);
  });

  it('a replay of the same request records nothing (the original result stands)', () => {
    given([...team, expectedSent({ idempotencyKey: 'k-1' })])
      .when(send(keyed))
      .thenNothing();
  });

  it('the same key with another payload: IDEMPOTENCY_KEY_REUSED', () => {
    given([...team, expectedSent({ idempotencyKey: 'k-1' })])
      .when(send({ ...keyed, body: 'other' }, A, 'hash-2'))
      .thenFails('IDEMPOTENCY_KEY_REUSED', { idempotencyKey: 'k-1', messageId: MESSAGE_ID, changedFields: ['body'] });
  });

  it('the refusal names every field the retry changed, in the order a message lists them', () => {
    const error = given([...team, expectedSent({ idempotencyKey: 'k-1' })])
      .when(send({ ...keyed, subject: 'other', priority: 'high', tags: ['x'] }, A, 'hash-2'))
      .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['subject', 'priority', 'tags'] });
    expect(error.envelope.message).toBe(
      "The idempotency key 'k-1' was already used for a different message (this request's subject, priority and tags differ " +
        "from that message's); use a new key for a new message, or send the first request unchanged to get its result again.",
    );
  });

  it('`to` as a one-identity list is another request than `to` as the identity: named, as the log keeps them apart', () => {
    given([...team, expectedSent({ idempotencyKey: 'k-1' })])
      .when(send({ ...keyed, to: ['@bob'] }, A, 'hash-2'))
      .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['to'] });
  });

  it('a task with its keys in another order is the same task; a thread named by the retry alone is a change', () => {
    const task = { state: 'Submitted', input: { parts: [{ kind: 'text', text: 'do it' }] } };
    const reordered = { input: { parts: [{ text: 'do it', kind: 'text' }] }, state: 'Submitted' };
    const first = expectedSent({ idempotencyKey: 'k-1', hasTask: true, task: task as MessageSent['data']['task'] });
    given([...team, first])
      .when(send({ ...keyed, task: reordered, threadId: 'deploy-1' }, A, 'hash-2'))
      .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['threadId'] });
  });

  // expectsReplyBy is kept by the ReplyRequested beside the MessageSent: a retry's is read from the first send's time.
  const dueIn1h: MailboxEvent = { type: 'ReplyRequested', data: { messageId: MESSAGE_ID, dueBy: '2025-03-01T11:05:00.000Z' } };
  const retriedAt = (input: Record<string, unknown>, at: string): SendMessage => ({
    ...send(input, A, 'hash-2'),
    metadata: meta(A, at),
  });

  it('a retry whose only change is expectsReplyBy names it: added, removed, another time, or the same one written otherwise', () => {
    const error = given([...team, expectedSent({ idempotencyKey: 'k-1' })])
      .when(send({ ...keyed, expectsReplyBy: '1h' }, A, 'hash-2'))
      .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['expectsReplyBy'] });
    expect(error.envelope.message).toContain("(this request's expectsReplyBy differs from that message's)");
    for (const expectsReplyBy of [undefined, '2h', '60m', '2025-03-01T11:05:00+01:00']) {
      given([...team, expectedSent({ idempotencyKey: 'k-1' }), dueIn1h])
        .when(send({ ...keyed, expectsReplyBy }, A, 'hash-2'))
        .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['expectsReplyBy'] });
    }
  });

  it("a retry's expectsReplyBy counts from the first send: the same duration sent later is no change, nor the same due time", () => {
    for (const expectsReplyBy of ['1h', 'PT1H', '2025-03-01T11:05:00Z']) {
      given([...team, expectedSent({ idempotencyKey: 'k-1' }), dueIn1h])
        .when(retriedAt({ ...keyed, body: 'other', expectsReplyBy }, T2))
        .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['body'] });
    }
  });

  it('a list written with a repeat the log drops (["@bob", "@bob"] first, ["@bob"] now) names to', () => {
    given([...team, expectedSent({ idempotencyKey: 'k-1', to: ['@bob'] })])
      .when(send({ ...keyed, to: ['@bob'] }, A, 'hash-2'))
      .thenFails('IDEMPOTENCY_KEY_REUSED', { changedFields: ['to'] });
  });
});

describe('SendMessage: wake rules', () => {
  it('wakeSuppressed on a normal direct message is honoured', () => {
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', wakeSuppressed: true }))
      .then([expectedSent({ wakeSuppressed: true })]);
  });

  it('wakeSuppressed on a high-priority direct message is refused', () => {
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', wakeSuppressed: true, priority: 'high' }))
      .thenFails('VALIDATION_FAILED', { field: 'wakeSuppressed' });
  });

  it('wakeSuppressed on a direct message with a task is refused', () => {
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', wakeSuppressed: true, task: { state: 'Submitted' } }))
      .thenFails('VALIDATION_FAILED', { field: 'wakeSuppressed' });
  });

  it('wakeSuppressed on a high-priority broadcast is allowed (a quiet announcement)', () => {
    given([registered('@alice')])
      .when(send({ to: 'AGENT:*', subject: 'hi', body: 'hello', wakeSuppressed: true, priority: 'high' }))
      .then([expectedSent({ to: 'AGENT:*', recipients: [], wakeSuppressed: true, priority: 'high' })]);
  });
});

describe('SendMessage: threading with inReplyTo', () => {
  const parent = directSent('@alice', '@bob', { threadId: 'thread-x' });

  it('a reply by the recipient inherits the parent thread', () => {
    given([...team, parent])
      .when(send({ to: '@alice', subject: 're: hi', body: 'hello', inReplyTo: PARENT_ID }, B))
      .then([
        expectedSent({
          from: '@bob',
          to: '@alice',
          subject: 're: hi',
          recipients: ['@alice'],
          threadId: 'thread-x',
          inReplyTo: PARENT_ID,
        }),
      ]);
  });

  it('the sender may follow up on its own message', () => {
    given([...team, parent])
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', inReplyTo: PARENT_ID }))
      .then([expectedSent({ threadId: 'thread-x', inReplyTo: PARENT_ID })]);
  });

  it('a broadcast recipient may reply to the broadcast', () => {
    given([...team, ...broadcastSent('@alice', ['@bob', '@carol'])])
      .when(send({ to: '@alice', subject: 'hi', body: 'hello', inReplyTo: PARENT_ID }, B))
      .then([expectedSent({ from: '@bob', to: '@alice', recipients: ['@alice'], threadId: PARENT_ID, inReplyTo: PARENT_ID })]);
  });

  it('someone outside the conversation cannot reply into it, and learns nothing: MESSAGE_NOT_FOUND', () => {
    given([...team, parent])
      .when(send({ to: '@alice', subject: 'hi', body: 'hello', inReplyTo: PARENT_ID }, { identity: '@carol', role: 'agent' }))
      .thenFails('MESSAGE_NOT_FOUND', { field: 'inReplyTo' });
  });

  it('a reply to a message that does not exist: MESSAGE_NOT_FOUND', () => {
    given(team)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', inReplyTo: PARENT_ID }))
      .thenFails('MESSAGE_NOT_FOUND', { field: 'inReplyTo', messageId: PARENT_ID });
  });

  it('a threadId that contradicts the parent thread is refused, not overridden silently', () => {
    given([...team, parent])
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', inReplyTo: PARENT_ID, threadId: 'elsewhere' }))
      .thenFails('VALIDATION_FAILED', { field: 'threadId' });
  });

  it('a threadId equal to the parent thread is fine', () => {
    given([...team, parent])
      .when(send({ to: '@bob', subject: 'hi', body: 'hello', inReplyTo: PARENT_ID, threadId: 'thread-x' }))
      .then([expectedSent({ threadId: 'thread-x', inReplyTo: PARENT_ID })]);
  });
});

describe('SendMessage: strictRecipients (layer 2) and suggestions (layer 3)', () => {
  const withNeo = [...team, registered('@neo-gpt')];

  it('strict: an unregistered identity is UNKNOWN_RECIPIENT with near-match suggestions', () => {
    given(withNeo, STRICT)
      .when(send({ to: '@neo-gtp', subject: 'hi', body: 'hello' }))
      .thenFails('UNKNOWN_RECIPIENT', { to: '@neo-gtp', suggestions: ['@neo-gpt'] });
  });

  it('strict: a segment of a registered name suggests it (@gpt -> @neo-gpt)', () => {
    given(withNeo, STRICT)
      .when(send({ to: '@gpt', subject: 'hi', body: 'hello' }))
      .thenFails('UNKNOWN_RECIPIENT', { suggestions: ['@neo-gpt'] });
  });

  it('strict: nothing close -> no suggestions key at all', () => {
    const error = given(withNeo, STRICT)
      .when(send({ to: '@zzzzzzzzzzzz', subject: 'hi', body: 'hello' }))
      .thenFails('UNKNOWN_RECIPIENT');
    expect(error.envelope).not.toHaveProperty('suggestions');
  });

  it('strict: a retired agent is no longer a valid recipient', () => {
    given([...withNeo, retired('@bob')], STRICT)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello' }))
      .thenFails('UNKNOWN_RECIPIENT', { to: '@bob' });
  });

  it('strict: a registered agent is accepted', () => {
    given(withNeo, STRICT)
      .when(send({ to: '@bob', subject: 'hi', body: 'hello' }))
      .then([expectedSent({})]);
  });

  it('permissive (default): an unregistered identity is accepted, with a warning carrying suggestions', () => {
    const input = { to: '@neo-gtp', subject: 'hi', body: 'hello' };
    given(withNeo)
      .when(send(input))
      .then([expectedSent({ to: '@neo-gtp', recipients: ['@neo-gtp'] })]);
    const registry = foldRegistry(initialRegistryState(), withNeo);
    expect(sendWarnings(parseInput(sendMessageSchema, input, 'add_message'), registry)).toEqual([
      expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT', suggestions: ['@neo-gpt'] }),
    ]);
    expect(sendWarnings(parseInput(sendMessageSchema, { ...input, to: '@bob' }, 'add_message'), registry)).toEqual([]);
  });
});

describe('SendMessage: a list of recipients (issue 13)', () => {
  const team4 = [...team, registered('@dave')];

  it('is one MessageSent naming the listed identities, in the order given: it delivers to each (one append)', () => {
    given(team4)
      .when(send({ to: ['@carol', '@bob'], subject: 'hi', body: 'hello' }))
      .then([expectedSent({ to: ['@carol', '@bob'], recipients: ['@carol', '@bob'] })]);
  });

  it('accepts the list JSON-encoded as one string (lossless-permissive)', () => {
    given(team4)
      .when(send({ to: '["@bob","@carol"]', subject: 'hi', body: 'hello' }))
      .then([expectedSent({ to: ['@bob', '@carol'], recipients: ['@bob', '@carol'] })]);
  });

  it('delivers a repeated identity once and says so in a warning naming the repeat', () => {
    const input = { to: ['@bob', '@bob'], subject: 'hi', body: 'hello' };
    given(team4)
      .when(send(input))
      .then([expectedSent({ to: ['@bob'], recipients: ['@bob'] })]);
    const registry = foldRegistry(initialRegistryState(), team4);
    expect(sendWarnings(parseInput(sendMessageSchema, input, 'add_message'), registry)).toEqual([
      { code: 'DUPLICATE_RECIPIENT', identity: '@bob', index: 1, message: expect.stringContaining('delivered once') },
    ]);
  });

  it('rejects AGENT:* inside a list, naming its index and saying to send the broadcast on its own', () => {
    const error = given(team4)
      .when(send({ to: ['@bob', 'AGENT:gpt'], subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { index: 1, entry: 'AGENT:gpt', to: ['@bob', 'AGENT:gpt'] });
    expect(error.envelope.valid_shapes).toEqual(expect.arrayContaining([expect.stringMatching(/^@<identifier>/)]));
    const broadcast = given(team4)
      .when(send({ to: ['@bob', 'AGENT:*'], subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { index: 1 });
    expect(broadcast.message).toMatch(/Send the broadcast on its own/);
  });

  it('rejects an entry of the wrong shape with suggestions, and a non-string entry without crashing', () => {
    given([...team4, registered('@neo-gpt')])
      .when(send({ to: ['@bob', 'neo-gpt'], subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { index: 1, suggestions: ['@neo-gpt'] });
    given(team4)
      .when(send({ to: ['@bob', 42], subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { index: 1, entry: 42 });
  });

  it('refuses an empty list and one longer than 100 identities', () => {
    given(team4)
      .when(send({ to: [], subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { count: 0 });
    const many = Array.from({ length: 101 }, (_u, i) => `@agent${i}`);
    given(team4)
      .when(send({ to: many, subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { count: 101 });
  });

  it('a comma-separated string stays an error that teaches the list form', () => {
    const error = given(team4)
      .when(send({ to: '@bob,@carol', subject: 'hi', body: 'hello' }))
      .thenFails('INVALID_RECIPIENT_SHAPE', { to: '@bob,@carol' });
    expect(error.message).toContain('["@bob","@carol"]');
  });

  it('strict: an unregistered entry refuses the whole send, naming its index', () => {
    given(team4, STRICT)
      .when(send({ to: ['@bob', '@zed'], subject: 'hi', body: 'hello' }))
      .thenFails('UNKNOWN_RECIPIENT', { index: 1, entry: '@zed' });
  });

  it('permissive: each unregistered entry is a warning naming it', () => {
    const registry = foldRegistry(initialRegistryState(), team4);
    const input = parseInput(sendMessageSchema, { to: ['@bob', '@zed'], subject: 'hi', body: 'hello' }, 'add_message');
    expect(sendWarnings(input, registry)).toEqual([
      expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT', identity: '@zed' }),
    ]);
  });

  it('wakeSuppressed is refused for a high-priority list, as for a direct message', () => {
    given(team4)
      .when(send({ to: ['@bob', '@carol'], subject: 'hi', body: 'hello', wakeSuppressed: true, priority: 'high' }))
      .thenFails('VALIDATION_FAILED', { field: 'wakeSuppressed' });
  });
});
