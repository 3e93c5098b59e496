/** Acceptance (issue 2): every rejection has the right code and writes zero events, on both embedded stores. */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { registerAgents } from '../support/fixtures';
import { expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

describe.each(STORE_KINDS)('rejections write nothing ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  async function team() {
    const mailbox = await harness.open();
    const agents = await registerAgents(mailbox, ['@a', '@b', '@c']);
    return { mailbox, a: agents['@a'], b: agents['@b'], c: agents['@c'] };
  }

  it('an unknown key -> UNKNOWN_FIELD naming it and the allowed keys', async () => {
    const { mailbox, a } = await team();
    const error = await expectRejectedWithoutEvents(mailbox, 'UNKNOWN_FIELD', () =>
      a.send({ to: '@b', subject: 'hi', body: 'x', urgency: 'high' } as never),
    );
    expect(error.status).toBe(400);
    expect(error.envelope).toMatchObject({ field: 'urgency' });
    expect(error.envelope.allowed).toEqual(expect.arrayContaining(['to', 'subject', 'body', 'priority', 'task']));
  });

  it.each(['from', 'sender', 'sentBy'])('%j in the body -> UNKNOWN_FIELD (identity comes from the token)', async (field) => {
    const { mailbox, a } = await team();
    const error = await expectRejectedWithoutEvents(mailbox, 'UNKNOWN_FIELD', () =>
      a.send({ to: '@b', subject: 'hi', body: 'x', [field]: '@c' }),
    );
    expect(error.envelope.field).toBe(field);
  });

  it('an inapplicable filter -> FILTER_NOT_APPLICABLE listing the applicable ones', async () => {
    const { mailbox, a } = await team();
    await a.send({ to: '@b', subject: 'hi', body: 'x' });
    const error = await expectRejectedWithoutEvents(mailbox, 'FILTER_NOT_APPLICABLE', () =>
      a.listMessages({ box: 'outbox', status: 'unread' }),
    );
    expect(error.status).toBe(400);
    expect(error.envelope).toMatchObject({ filter: 'status', box: 'outbox' });
    expect(error.envelope.applicable).not.toContain('status');
  });

  // A filter value no message can carry matched nothing and answered an empty page: `--outbox --to bob` (a
  // missing @) read as "you never wrote to bob". Refused like the inbox's `from`, with the forms it takes.
  it.each([
    ['to', { box: 'outbox', to: 'bob' }],
    ['to', { box: 'outbox', to: '@b,@c' }],
    ['to', { box: 'outbox', to: 'AGENT:gpt' }],
    ['to', { box: 'outbox', to: '' }],
    ['threadId', { threadId: '' }],
    ['threadId', { box: 'outbox', threadId: 't'.repeat(201) }],
  ])('a %s filter no message can match -> VALIDATION_FAILED naming it (%j)', async (field, query) => {
    const { mailbox, a } = await team();
    await a.send({ to: '@b', subject: 'hi', body: 'x' });
    const error = await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () => a.listMessages(query as never));
    expect(error.status).toBe(400);
    expect(error.envelope.field).toBe(field);
  });

  it('the outbox to filter takes an @identity or AGENT:*', async () => {
    const { a } = await team();
    const sent = await a.send({ to: ['@b', '@c'], subject: 'pair', body: 'x' });
    const broadcast = await a.send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    const toC = await a.listMessages({ box: 'outbox', to: '@c' });
    expect(toC.messages.map((m) => m.messageId)).toEqual([sent.messageId]);
    const toAll = await a.listMessages({ box: 'outbox', to: 'AGENT:*' });
    expect(toAll.messages.map((m) => m.messageId)).toEqual([broadcast.messageId]);
  });

  it('an oversized body -> 413 PAYLOAD_TOO_LARGE; exactly the limit is accepted', async () => {
    const mailbox = await harness.open({ maxBodyBytes: 4096 });
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const error = await expectRejectedWithoutEvents(mailbox, 'PAYLOAD_TOO_LARGE', () =>
      a.send({ to: '@b', subject: 'big', body: 'x'.repeat(4097) }),
    );
    expect(error.status).toBe(413);
    expect(error.envelope).toMatchObject({ field: 'body', bytes: 4097, limit: 4096 });
    await a.send({ to: '@b', subject: 'fits', body: 'x'.repeat(4096) });
    expect((await b.unreadCount()).unreadCount).toBe(1);
  });

  it('the default limit is 64 KiB', async () => {
    const { mailbox, a } = await team();
    await expectRejectedWithoutEvents(mailbox, 'PAYLOAD_TOO_LARGE', () =>
      a.send({ to: 'AGENT:*', subject: 'big', body: 'x'.repeat(64 * 1024 + 1) }),
    );
  });

  it('a bad task state -> VALIDATION_FAILED naming task.state; a good spelling is stored canonically', async () => {
    const { mailbox, a, b } = await team();
    const error = await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () =>
      a.send({ to: '@b', subject: 'task', body: 'x', task: { state: 'finished' } } as never),
    );
    expect(error.envelope.field).toBe('task.state');
    const sent = await a.send({
      to: '@b',
      subject: 'task',
      body: 'x',
      task: JSON.stringify({ state: 'TASK_STATE_INPUT_REQUIRED' }),
    });
    expect((await b.getMessage(sent.messageId)).task).toEqual({ state: 'InputRequired' });
    expect((await b.listMessages({})).messages[0].task).toEqual({ state: 'InputRequired' });
  });

  it('an unknown key inside the task -> UNKNOWN_FIELD', async () => {
    const { mailbox, a } = await team();
    const error = await expectRejectedWithoutEvents(mailbox, 'UNKNOWN_FIELD', () =>
      a.send({ to: '@b', subject: 'task', body: 'x', task: { state: 'Working', assignee: '@c' } } as never),
    );
    expect(error.envelope.field).toBe('task.assignee');
  });

  it('wakeSuppressed on a high-priority direct message -> VALIDATION_FAILED', async () => {
    const { mailbox, a } = await team();
    await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () =>
      a.send({ to: '@b', subject: 'hi', body: 'x', priority: 'high', wakeSuppressed: true }),
    );
  });

  it('a reused Idempotency-Key with another payload -> IDEMPOTENCY_KEY_REUSED', async () => {
    const { mailbox, a } = await team();
    await a.send({ to: '@b', subject: 'hi', body: 'x' }, { idempotencyKey: 'k1' });
    const error = await expectRejectedWithoutEvents(mailbox, 'IDEMPOTENCY_KEY_REUSED', () =>
      a.send({ to: '@b', subject: 'hi', body: 'different' }, { idempotencyKey: 'k1' }),
    );
    expect(error.status).toBe(422);
    // What changed is named, so a client that thought it was retrying can tell its request apart from the first.
    expect(error.envelope).toMatchObject({ idempotencyKey: 'k1', changedFields: ['body'] });
    expect(error.message).toContain("this request's body differs from that message's");
  });

  it('two different idempotency keys (header option and body field) -> VALIDATION_FAILED, neither dropped', async () => {
    const { mailbox, a } = await team();
    const error = await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () =>
      a.send({ to: '@b', subject: 'hi', body: 'x', idempotencyKey: 'body-key' }, { idempotencyKey: 'header-key' }),
    );
    expect(error.envelope.field).toBe('idempotencyKey');
    const same = await a.send({ to: '@b', subject: 'hi', body: 'x', idempotencyKey: 'k' }, { idempotencyKey: 'k' });
    expect(await a.send({ to: '@b', subject: 'hi', body: 'x' }, { idempotencyKey: 'k' })).toEqual(same);
  });

  it('registering an existing identity -> AGENT_EXISTS (409); non-admins cannot register', async () => {
    const { mailbox, a } = await team();
    const error = await expectRejectedWithoutEvents(mailbox, 'AGENT_EXISTS', () =>
      mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@b' }),
    );
    expect(error.status).toBe(409);
    await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => a.registerAgent({ identity: '@z' }));
  });

  it("a retired agent's token stops working (UNAUTHENTICATED); auditors cannot send or move a task (FORBIDDEN)", async () => {
    const { mailbox, a, c } = await team();
    const admin = mailbox.asActor(ADMIN_ACTOR);
    const auditor = await mailbox.as((await admin.registerAgent({ identity: '@auditor', role: 'auditor' })).token);
    await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => auditor.send({ to: '@b', subject: 'hi', body: 'x' }));
    // Auditors write nothing: a task move is refused for the role, as a send and a claim are. It was 409
    // INVALID_TRANSITION "From Submitted you may make no transition" (as if another state would allow one), and the
    // admin was told that "Changing a task needs the agent or auditor role".
    const { messageId: taskId } = await a.send({ to: '@b', subject: 'a task', body: 'x', task: {} });
    const refused = await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => auditor.updateTask({ taskId, to: 'Canceled' }));
    expect(refused.envelope).toMatchObject({ requiredRoles: ['agent'], role: 'auditor' });
    const forAdmin = await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => admin.updateTask({ taskId, to: 'Canceled' }));
    expect(forAdmin.envelope.message).toMatch(
      /^Changing a task needs the agent role; your token is the admin token\. The admin token acts as no agent/,
    );
    await admin.retireAgent('@c');
    await expectRejectedWithoutEvents(mailbox, 'UNAUTHENTICATED', () => mailbox.as(c.token));
    await expectRejectedWithoutEvents(mailbox, 'UNAUTHENTICATED', () => mailbox.as('not-a-token'));
  });

  it('a reply into a conversation the caller is not part of -> MESSAGE_NOT_FOUND (as if missing)', async () => {
    const { mailbox, a, c } = await team();
    const sent = await a.send({ to: '@b', subject: 'private', body: 'x' });
    await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () =>
      c.send({ to: '@a', subject: 're', body: 'x', inReplyTo: sent.messageId }),
    );
  });
});
