/**
 * The in-memory unread index keeps read and archived entries until they
 * dominate (then compacts): counts, the oldest unread time and unread
 * listings must stay exact throughout, for every recipient separately.
 */
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { storeQuery } from '../contract/projectionStore.contract';
import type { ProjectedEvent, ViewChange } from '../../src/projections/viewChanges';

const at = (n: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function direct(position: number, n: number, to: string): ProjectedEvent {
  const entry = {
    messageId: id(n),
    from: '@sender',
    to,
    subject: `m${n}`,
    priority: n % 3 === 0 ? ('high' as const) : ('normal' as const),
    threadId: id(n),
    tags: [],
    sentAt: at(n),
  };
  const changes: ViewChange[] = [
    { kind: 'messageRecorded', summary: { ...entry, inReplyTo: null, task: null, recipientCount: 1 } },
    { kind: 'outboxAdded', sender: '@sender', entry: { ...entry } },
    { kind: 'inboxAdded', recipient: to, entry: { ...entry }, isBroadcast: false, wakeSuppressed: false },
  ];
  return { position: BigInt(position), at: at(n), changes };
}

const read = (position: number, n: number, reader: string): ProjectedEvent => ({
  position: BigInt(position),
  at: at(10_000 + position),
  changes: [{ kind: 'receiptRead', recipient: reader, messageId: id(n), readAt: at(10_000 + position), priority: 'normal' }],
});
const archived = (position: number, n: number, recipient: string): ProjectedEvent => ({
  position: BigInt(position),
  at: at(10_000 + position),
  changes: [{ kind: 'inboxArchived', recipient, messageId: id(n), archivedAt: at(10_000 + position) }],
});

async function unreadIds(store: MemoryProjectionStore, identity: string): Promise<string[]> {
  const ids: string[] = [];
  let before: bigint | null = null;
  do {
    const page = await store.listMessages(identity, storeQuery({ status: 'unread', limit: 37 }, before));
    ids.push(...page.messages.map((m) => m.messageId));
    before = page.nextBefore;
  } while (before !== null);
  return ids;
}

describe('memory inbox unread index', () => {
  it('stays exact while most messages are read or archived, past several compactions', async () => {
    const store = new MemoryProjectionStore(new InProcessWakeBus());
    const N = 500;
    let position = 0;
    // B gets 0..N-1, C gets N..2N-1
    await store.applyBatch(Array.from({ length: N }, (_unused, n) => direct(++position, n, '@b')));
    await store.applyBatch(Array.from({ length: N }, (_unused, n) => direct(++position, N + n, '@c')));
    // B reads every message except multiples of 7 (newest first, so stale entries pile up at the newest end),
    // archives the multiples of 49 unread; C reads the oldest 400 only.
    const bEvents: ProjectedEvent[] = [];
    for (let n = N - 1; n >= 0; n--) if (n % 7 !== 0) bEvents.push(read(++position, n, '@b'));
    for (let n = 0; n < N; n += 49) bEvents.push(archived(++position, n, '@b'));
    await store.applyBatch(bEvents);
    await store.applyBatch(Array.from({ length: 400 }, (_unused, n) => read(++position, N + n, '@c')));

    const bUnread = Array.from({ length: N }, (_unused, n) => n).filter((n) => n % 7 === 0 && n % 49 !== 0);
    expect(await unreadIds(store, '@b')).toEqual(bUnread.reverse().map(id));
    expect((await store.unreadCount('@b')).unread).toBe(bUnread.length);
    const bHigh = bUnread.filter((n) => n % 3 === 0).length;
    expect((await store.unreadCount('@b')).byPriority).toEqual({ low: 0, normal: bUnread.length - bHigh, high: bHigh });
    expect((await store.heartbeat('@b')).oldestUnreadAt).toBe(at(7));

    const cUnread = Array.from({ length: 100 }, (_unused, n) => N + 400 + n);
    expect(await unreadIds(store, '@c')).toEqual([...cUnread].reverse().map(id));
    expect((await store.heartbeat('@c')).oldestUnreadAt).toBe(at(N + 400));

    // Reading the last unread ones empties the view entirely.
    await store.applyBatch(cUnread.map((n) => read(++position, n, '@c')));
    expect(await unreadIds(store, '@c')).toEqual([]);
    expect(await store.heartbeat('@c')).toMatchObject({ unread: 0, oldestUnreadAt: null });
    // Read messages still list under status=read and all.
    const all = await store.listMessages('@c', storeQuery({ status: 'all', limit: 200 }));
    expect(all.messages).toHaveLength(200);
    expect(all.messages.every((m) => m.readAt !== null)).toBe(true);
  });

  it('keeps one entry per outbox and per inbox for a message id met again (another sender, further recipients)', async () => {
    // The store keeps a message's first outbox and first inbox entry on its record and any further one in that
    // inbox's own map: each recipient's receipt, archive and unarchive must reach its own entry only.
    const store = new MemoryProjectionStore(new InProcessWakeBus());
    const sent = direct(1, 1, '@b');
    const again: ProjectedEvent = {
      position: 2n,
      at: at(2),
      changes: sent.changes.map((change) => {
        if (change.kind === 'messageRecorded') return { ...change, summary: { ...change.summary, from: '@other' } };
        if (change.kind === 'outboxAdded') return { ...change, sender: '@other' };
        return change; // @b's entry again: changes nothing
      }),
    };
    const toC: ProjectedEvent = {
      position: 3n,
      at: at(3),
      changes: sent.changes.filter((change) => change.kind === 'inboxAdded').map((change) => ({ ...change, recipient: '@c' })),
    };
    await store.applyBatch([sent, again, toC, { ...sent, position: 4n }]);
    const ids = async (identity: string, box: 'inbox' | 'outbox', status?: 'unread' | 'archived') =>
      (await store.listMessages(identity, storeQuery({ box, status, limit: 50 }, null))).messages.map((m) => m.messageId);
    expect([await ids('@sender', 'outbox'), await ids('@other', 'outbox')]).toEqual([[id(1)], [id(1)]]);
    expect([await ids('@b', 'inbox'), await ids('@c', 'inbox')]).toEqual([[id(1)], [id(1)]]);

    await store.applyBatch([read(5, 1, '@c'), archived(6, 1, '@b')]);
    expect([(await store.unreadCount('@b')).unread, (await store.unreadCount('@c')).unread]).toEqual([0, 0]);
    expect([await ids('@b', 'inbox', 'archived'), await ids('@c', 'inbox', 'archived')]).toEqual([[id(1)], []]);
    await store.applyBatch([
      { position: 7n, at: at(7), changes: [{ kind: 'inboxUnarchived', recipient: '@b', messageId: id(1), unarchivedAt: at(7) }] },
    ]);
    expect([await ids('@b', 'inbox', 'unread'), await ids('@c', 'inbox', 'unread')]).toEqual([[id(1)], []]);
    expect((await store.listMessages('@c', storeQuery({ limit: 50 }, null))).messages[0].readAt).toBe(at(10_005));
  });
});
