/**
 * The live flow's words and filter (application/liveFlow.ts), and the console's
 * batched rendering buffer (web/src/flowBuffer.ts): pure, no I/O.
 */
import { flowEntryOf, passesFilter, type FlowEntry } from '../../src/application/liveFlow';
import type { MailboxEvent, StoredEvent } from '../../src/events/types';
import { FlowBuffer } from '../../web/src/flowBuffer';
import { broadcastSent, directSent, PARENT_ID, readBy, registered, T1 } from './fixtures/domain';

let position = 0n;
const stored = (event: MailboxEvent, actor: string): StoredEvent =>
  ({
    ...event,
    eventId: `e${++position}`,
    streamName: 'mailbox-x',
    revision: 0n,
    position,
    metadata: { commandId: 'c', correlationId: 'c', causationId: 'c', actor, at: T1, schemaVersion: 1 },
  }) as StoredEvent;

const noLookup = async (): Promise<string | null> => {
  throw new Error('no lookup expected');
};

describe('flowEntryOf: one line per event, naming everyone it concerns', () => {
  test('a broadcast is one send with its audience size, then one delivery per recipient', () => {
    const [sent, ...deliveries] = broadcastSent('@alice', ['@bob', '@carol']);
    const entry = flowEntryOf(stored(sent, '@alice'));
    expect(entry).toMatchObject({ type: 'MessageSent', actor: '@alice', to: 'AGENT:*', audienceSize: 2, agents: ['@alice'] });
    expect(deliveries.map((d) => flowEntryOf(stored(d, '@alice')).agents)).toEqual([
      ['@alice', '@bob'],
      ['@alice', '@carol'],
    ]);
  });

  test('a direct send concerns both ends; a read concerns its reader; a registration its agent', () => {
    expect(flowEntryOf(stored(directSent('@alice', '@bob'), '@alice'))).toMatchObject({
      agents: ['@alice', '@bob'],
      audienceSize: 1,
    });
    expect(flowEntryOf(stored(readBy('@bob'), '@bob'))).toMatchObject({
      agents: ['@bob'],
      messageId: PARENT_ID,
      recipient: '@bob',
    });
    expect(flowEntryOf(stored(registered('@dave'), 'admin'))).toMatchObject({ actor: 'admin', agents: ['@dave'], role: 'agent' });
  });
  // An unarchive was shown by its actor only: the console's row named no message (its archive did).
  test('an unarchive names its message and recipient, as its archive does', () => {
    const data = { messageId: PARENT_ID, recipient: '@bob', priority: 'normal' as const, sentAt: T1 };
    const archived = flowEntryOf(
      stored({ type: 'MessageArchived', data: { ...data, archivedAt: T1, wasUnread: true } } as MailboxEvent, '@bob'),
    );
    const unarchived = flowEntryOf(
      stored({ type: 'MessageUnarchived', data: { ...data, unarchivedAt: T1 } } as MailboxEvent, '@bob'),
    );
    expect(unarchived).toMatchObject({ type: 'MessageUnarchived', agents: ['@bob'], messageId: PARENT_ID, recipient: '@bob' });
    expect({ ...unarchived, type: undefined, position: undefined }).toEqual({
      ...archived,
      type: undefined,
      position: undefined,
    });
  });
});

describe('flowEntryOf: task events', () => {
  const TASK = PARENT_ID;
  test('a claim concerns its claimant and points at the task message; changes say from -> to and why', () => {
    const claim = stored(
      { type: 'TaskClaimed', data: { taskId: TASK, claimant: '@bob', claimedAt: T1, leaseExpiresAt: null } },
      '@bob',
    );
    expect(flowEntryOf(claim)).toMatchObject({
      type: 'TaskClaimed',
      agents: ['@bob'],
      messageId: TASK,
      detail: 'task claimed by @bob',
    });
    const failed = stored(
      {
        type: 'TaskStateChanged',
        data: { taskId: TASK, from: 'Working', to: 'Failed', reason: 'no access', note: null, changedAt: T1 },
      },
      '@bob',
    );
    expect(flowEntryOf(failed)).toMatchObject({ messageId: TASK, detail: 'task Working -> Failed (reason: no access)' });
  });

  test('a lapsed lease, written by the sweeper, concerns the claimant who lost it', () => {
    const lapsed = stored(
      {
        type: 'TaskLeaseExpired',
        data: { taskId: TASK, claimant: '@carol', from: 'Working', leaseExpiresAt: T1, expiredAt: T1 },
      },
      'system',
    );
    expect(flowEntryOf(lapsed)).toMatchObject({
      actor: 'system',
      agents: ['@carol'],
      detail: 'task lease of @carol lapsed (Working -> Submitted, claimable again)',
    });
  });
});

describe("the delivery ledger's events: the agents and the message they concern, in words", () => {
  const event = (type: string, data: object) => ({ type, data }) as unknown as MailboxEvent;
  test('an escalation concerns the recipients it went to; an overdue reply the sender and those it waits on', () => {
    const escalated = event('WakeEscalated', { messageId: 'm1', recipients: ['@bob', '@carol'], slaMs: 60000, escalatedAt: T1 });
    expect(flowEntryOf(stored(escalated, 'system:heartbeat'))).toMatchObject({
      agents: ['@bob', '@carol'],
      messageId: 'm1',
      detail:
        'woke nobody within 60000 ms: escalated; due a wake: @bob, @carol (a retired, opted-out or unregistered one is not nudged)',
    });
    const overdue = event('ReplyOverdue', { messageId: 'm1', sender: '@alice', waitingOn: ['@bob'], dueBy: T1, overdueAt: T1 });
    expect(flowEntryOf(stored(overdue, 'system:heartbeat'))).toMatchObject({
      agents: ['@alice', '@bob'],
      messageId: 'm1',
      detail: `reply overdue since ${T1}, waiting on @bob`,
    });
  });

  test('a seen mark of several messages is in a thread when one of them is', async () => {
    const seen = flowEntryOf(stored(event('MessagesSeen', { recipient: '@bob', seenAt: T1, messageIds: ['m1', 'm2'] }), '@bob'));
    expect(seen).toMatchObject({
      agents: ['@bob'],
      messageIds: ['m1', 'm2'],
      detail: expect.stringMatching(/^saw 2 messages at /),
    });
    expect(seen.messageId).toBeUndefined();
    const threadOf = async (messageId: string) => (messageId === 'm2' ? 'thread-2' : 'thread-1');
    await expect(passesFilter({ ...seen }, { threadId: 'thread-2' }, threadOf)).resolves.toBe(true);
    await expect(passesFilter({ ...seen }, { threadId: 'thread-3' }, threadOf)).resolves.toBe(false);
  });
});

describe('passesFilter', () => {
  const send = flowEntryOf(stored(directSent('@alice', '@bob', { threadId: 'thread-1' }), '@alice'));
  const read = (): FlowEntry => flowEntryOf(stored(readBy('@bob'), '@bob'));

  test('by type and by agent, without looking anything up', async () => {
    await expect(passesFilter(send, { types: ['ReceiptRead'] }, noLookup)).resolves.toBe(false);
    await expect(passesFilter(send, { types: ['MessageSent'], agent: '@bob' }, noLookup)).resolves.toBe(true);
    await expect(passesFilter(send, { agent: '@carol' }, noLookup)).resolves.toBe(false);
  });

  test('by thread: a read, which carries no thread, is placed by looking its message up (and then shows it)', async () => {
    const lookups: string[] = [];
    const threadOf = async (messageId: string) => (lookups.push(messageId), 'thread-1');
    const entry = read();
    await expect(passesFilter(entry, { threadId: 'thread-1' }, threadOf)).resolves.toBe(true);
    expect([lookups, entry.threadId]).toEqual([[PARENT_ID], 'thread-1']);
    await expect(passesFilter(read(), { threadId: 'thread-2' }, threadOf)).resolves.toBe(false);
    await expect(passesFilter(flowEntryOf(stored(registered('@x'), 'admin')), { threadId: 'thread-1' }, noLookup)).resolves.toBe(
      false,
    );
  });
});

describe('FlowBuffer: many arrivals, one render per flush, bounded memory', () => {
  test('entries wait until a flush, then show newest first', () => {
    const buffer = new FlowBuffer<number>(5);
    buffer.push(1);
    buffer.push(2);
    expect(buffer.hasPending).toBe(true);
    expect(buffer.flush()).toEqual({ shown: [2, 1], received: 2, dropped: 0 });
    buffer.push(3);
    expect(buffer.flush().shown).toEqual([3, 2, 1]);
    expect(buffer.hasPending).toBe(false);
  });

  test('never holds more than its capacity, pending or shown, and counts what it let go', () => {
    const buffer = new FlowBuffer<number>(5);
    for (let n = 1; n <= 4; n++) buffer.push(n);
    buffer.flush();
    for (let n = 5; n <= 1000; n++) buffer.push(n); // a burst between two frames
    expect(buffer.flush()).toEqual({ shown: [1000, 999, 998, 997, 996], received: 1000, dropped: 995 });
  });
});
