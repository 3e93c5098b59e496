/** readEvent: the one gate every stored event passes on its way out of a store (shape check, upcast, loud failure). */
import { z } from 'zod';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { CommandHandler } from '../../src/application/commandHandler';
import { messageModel } from '../../src/application/mailboxCommands';
import { taskEnvelopeSchema } from '../../src/commands/messageFields';
import { checkNewEvent, InvalidStoredEvent, readEvent, type RawStoredEvent } from '../../src/events/readEvent';
import type { MessageEvent } from '../../src/events/types';
import { compileShapeCheck } from '../../src/events/shapeCheck';
import { EVENT_DATA_V1, eventMetadataV1, taskEnvelopeV1 } from '../../src/events/storedShapes';

const at = '2025-01-01T00:00:00.000Z';
const metadata = { commandId: 'c', correlationId: 'c', causationId: 'c', actor: '@a', at, schemaVersion: 1 };
const summary = {
  messageId: '5b7d2a3e-8f0c-4c1e-9a55-2f6c0d8e4b71',
  from: '@a',
  to: 'AGENT:*',
  subject: 's',
  priority: 'high',
  threadId: 't',
  inReplyTo: null,
  tags: ['ops'],
  sentAt: at,
  wakeSuppressed: false,
  hasTask: true,
};
const task = {
  state: 'InputRequired',
  input: {
    parts: [
      { kind: 'text', text: 'hi' },
      { kind: 'data', data: { a: 1 } },
    ],
  },
  budget: { deadline: '2026-01-01T00:00:00Z', maxTokens: 10 },
  metadata: { relatedTickets: ['T-1'] },
};
const taskId = summary.messageId;
const DATA: Record<keyof typeof EVENT_DATA_V1, Record<string, unknown>> = {
  TaskClaimed: { taskId, claimant: '@b', claimedAt: at, leaseExpiresAt: null },
  TaskStateChanged: { taskId, from: 'Submitted', to: 'Working', reason: null, note: null, changedAt: at },
  TaskArtifactAdded: { taskId, artifact: { artifactId: 'a1', name: null, parts: [{ kind: 'text', text: 'done' }] }, addedAt: at },
  TaskLeaseRenewed: { taskId, claimant: '@b', leaseExpiresAt: at, renewedAt: at },
  TaskReleased: { taskId, claimant: '@b', from: 'Working', releasedAt: at },
  TaskLeaseExpired: { taskId, claimant: '@b', from: 'Working', leaseExpiresAt: at, expiredAt: at },
  TaskExpired: { taskId, from: 'Working', to: 'Canceled', reason: 'expired', deadline: at, expiredAt: at },
  TaskOutcomeSeen: { taskId, sender: '@a', state: 'Completed', seenAt: at },
  AgentRegistered: { identity: '@a', role: 'agent', tokenHash: 'h', registeredAt: at },
  AgentRetired: { identity: '@a', retiredAt: at },
  AgentTokenRotated: { identity: '@a', tokenHash: 'h2', rotatedAt: at },
  MessageSent: { ...summary, body: 'b', task, recipients: ['@b', '@c'], idempotencyKey: null, requestHash: 'r' },
  BroadcastDelivered: { ...summary, recipient: '@b', deliveredAt: at },
  WakeObserved: { messageId: summary.messageId, recipient: '@b', via: 'stream', observedAt: at },
  ReplyRequested: { messageId: summary.messageId, dueBy: at },
  ReplyOverdue: { messageId: summary.messageId, sender: '@a', waitingOn: ['@b'], dueBy: at, overdueAt: at },
  WakeEscalated: { messageId: summary.messageId, recipients: ['@b'], slaMs: 60000, escalatedAt: at },
  ReceiptRead: { messageId: summary.messageId, reader: '@b', readAt: at, priority: 'low', sentAt: at },
  MessageArchived: {
    messageId: summary.messageId,
    recipient: '@b',
    archivedAt: at,
    wasUnread: true,
    priority: 'normal',
    sentAt: at,
  },
  MessagesSeen: { recipient: '@b', seenAt: at, messageIds: [summary.messageId] },
  MessageUnarchived: { messageId: summary.messageId, recipient: '@b', unarchivedAt: at, priority: 'normal', sentAt: at },
};

const raw = (type: string, data: unknown, meta: unknown = metadata): RawStoredEvent => ({
  eventId: 'e',
  streamName: 'mailbox-message-x',
  revision: 3n,
  position: 42n,
  type,
  data,
  metadata: meta,
});

function failure(event: RawStoredEvent): InvalidStoredEvent {
  try {
    readEvent(event);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidStoredEvent);
    return error as InvalidStoredEvent;
  }
  throw new Error('readEvent accepted an event that does not fit its stored shape');
}

describe('readEvent', () => {
  test.each(Object.entries(DATA))('a current %s is served as stored (the same object, no copy)', (type, data) => {
    const event = raw(type, data);
    expect(readEvent(event)).toBe(event);
  });

  test('an event of an older schema version is upcast to the current one', () => {
    const event = readEvent(raw('AgentRetired', DATA.AgentRetired, { ...metadata, schemaVersion: 0 }));
    expect(event.metadata.schemaVersion).toBe(1);
    expect(event.data).toEqual(DATA.AgentRetired);
  });

  test.each([
    ['a wrong enum value', 'ReceiptRead', { ...DATA.ReceiptRead, priority: 'urgent' }, metadata, 'data.priority'],
    ['a missing field', 'AgentRetired', { identity: '@a' }, metadata, 'data.retiredAt'],
    ['an unknown field', 'AgentRetired', { ...DATA.AgentRetired, reason: 'x' }, metadata, 'data'],
    [
      'a non-canonical task state',
      'MessageSent',
      { ...DATA.MessageSent, task: { state: 'input-required' } },
      metadata,
      'data.task.state',
    ],
    [
      'an unknown key deep in the task',
      'MessageSent',
      { ...DATA.MessageSent, task: { budget: { tokens: 3 } } },
      metadata,
      'data.task.budget',
    ],
    ['a wrong type in metadata', 'AgentRetired', DATA.AgentRetired, { ...metadata, actor: 7 }, 'metadata.actor'],
    [
      'metadata without a schema version',
      'AgentRetired',
      DATA.AgentRetired,
      { ...metadata, schemaVersion: undefined },
      'metadata.schemaVersion',
    ],
    ['an unknown schema version', 'AgentRetired', DATA.AgentRetired, { ...metadata, schemaVersion: 9 }, 'metadata.schemaVersion'],
    ['an unknown type', 'AgentPromoted', DATA.AgentRetired, metadata, 'type'],
  ])('%s is a loud error naming stream, position, type and field', (_what, type, data, meta, field) => {
    const error = failure(raw(type, data, meta));
    expect(error).toMatchObject({ streamName: 'mailbox-message-x', position: 42n, type, field });
    expect(error.message).toContain(`${type} at position 42 of stream mailbox-message-x`);
    expect(error.message).toContain(`${field}:`);
  });
});

describe('before an append', () => {
  test('every task envelope the input accepts (any spelling) is a valid stored envelope', () => {
    for (const input of [
      { state: 'input-required' },
      { state: 'TASK_STATE_CANCELLED' },
      task,
      {},
      { expiresAt: '2026-01-01T00:00:00+02:00' },
    ]) {
      expect(taskEnvelopeV1.safeParse(taskEnvelopeSchema.parse(input)).success).toBe(true);
    }
  });

  test('an event that would not read back is refused by the command handler, and nothing is written', async () => {
    const store = new MemoryEventStore();
    const handler = new CommandHandler(store);
    const command = {
      commandId: 'c1',
      correlationId: 'c1',
      causationId: 'c1',
      actor: { identity: '@b', role: 'agent' as const },
      at,
    };
    const misfit = { type: 'ReceiptRead', data: { ...DATA.ReceiptRead, priority: 'urgent' } } as unknown as MessageEvent;
    await expect(handler.handle('mailbox-message-x', messageModel, command, () => [misfit])).rejects.toThrow(
      /New event ReceiptRead for stream mailbox-message-x .*data\.priority.*Nothing was written/,
    );
    expect(await store.headPosition()).toBeNull();
    const fits = { type: 'ReceiptRead', data: DATA.ReceiptRead } as unknown as MessageEvent;
    await handler.handle('mailbox-message-x', messageModel, command, () => [fits]);
    expect(await store.headPosition()).toBe(1n);
    expect(() =>
      checkNewEvent({ eventId: 'e', type: 'ReceiptRead', data: DATA.ReceiptRead, metadata } as never, 's'),
    ).not.toThrow();
  });
});

/** Tiny seeded PRNG (mulberry32): a failing case is reproducible from the printed seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES: unknown[] = [
  undefined,
  null,
  '',
  'urgent',
  'InputRequired',
  0,
  -1,
  1.5,
  NaN,
  Infinity,
  2 ** 60,
  true,
  [],
  ['x'],
  [1],
  {},
  { kind: 'text' },
  'not-a-date',
  '2026-01-01T00:00:00Z',
];

/** One random edit somewhere in a JSON-like value: replace, delete or add a key, or change an array element. */
function mutate(value: unknown, next: () => number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  if (Array.isArray(value)) {
    if (value.length === 0 || next() < 0.3) return [...value, pick(ODD_VALUES)];
    const i = Math.floor(next() * value.length);
    return value.map((item, j) => (j === i ? mutate(item, next) : item));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    const roll = next();
    if (entries.length === 0 || roll < 0.1)
      return { ...value, [pick(['extra', 'state', 'constructor', '__proto__'])]: pick(ODD_VALUES) };
    const [key, inner] = pick(entries);
    if (roll < 0.2) return Object.fromEntries(entries.filter(([k]) => k !== key));
    return { ...value, [key]: next() < 0.5 ? pick(ODD_VALUES) : mutate(inner, next) };
  }
  return pick(ODD_VALUES);
}

describe('compiled shape checks', () => {
  const schemas: Array<[string, z.ZodType, unknown]> = [
    ...Object.entries(EVENT_DATA_V1).map(
      ([type, schema]) => [type, schema, DATA[type as keyof typeof DATA]] as [string, z.ZodType, unknown],
    ),
    ['metadata', eventMetadataV1, metadata],
    ['task envelope', taskEnvelopeV1, task],
  ];

  test.each(schemas)(
    '%s: accepts the valid sample, and never accepts what zod rejects (seeded random edits)',
    (_name, schema, valid) => {
      const check = compileShapeCheck(schema);
      expect(check(valid)).toBe(true);
      let rejectedByBoth = 0;
      for (let seed = 1; seed <= 3000; seed++) {
        const next = random(seed);
        let value = valid;
        const edits = 1 + Math.floor(next() * 3);
        for (let i = 0; i < edits; i++) value = mutate(value, next);
        const zodSays = schema.safeParse(value).success;
        if (check(value) && !zodSays)
          throw new Error(`seed ${seed}: the compiled check accepted ${JSON.stringify(value)}, zod rejects it`);
        if (!zodSays) rejectedByBoth++;
      }
      expect(rejectedByBoth).toBeGreaterThan(1000); // the edits do reach invalid shapes
    },
  );

  test('agrees with zod on the plain kinds it compiles, both ways', () => {
    const schema = z.strictObject({
      n: z.number().int(),
      s: z.string(),
      e: z.enum(['a', 'b']),
      o: z.string().optional(),
      l: z.array(z.boolean()).nullable(),
      u: z.unknown(),
    });
    const check = compileShapeCheck(schema);
    const cases: unknown[] = [
      { n: 1, s: '', e: 'a', l: null, u: 0 },
      { n: 1, s: '', e: 'a', l: [true], u: undefined, o: 'x' },
      { n: 1.5, s: '', e: 'a', l: null, u: 0 },
      { n: 1, s: '', e: 'c', l: null, u: 0 },
      { n: 1, s: '', e: 'a', l: [1], u: 0 },
      { n: 1, s: '', e: 'a', l: null },
      { n: 1, s: '', e: 'a', l: null, u: 0, extra: 1 },
      { n: 1, s: 2, e: 'a', l: null, u: 0 },
      null,
      [],
      'x',
    ];
    for (const value of cases) expect([value, check(value)]).toEqual([value, schema.safeParse(value).success]);
  });
});
