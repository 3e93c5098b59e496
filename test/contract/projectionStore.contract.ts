/**
 * The projection store contract: one suite, run against every adapter
 * (memory and Redis). Views are observed only through the port, wakes only
 * through the wake bus the store publishes to, as a user of the mailbox would.
 * Identities: @a sends, @b and @c receive (and @b also sends to @c).
 */
import type { TaskEnvelope } from '../../src/commands/messageFields';
import { storeQuery } from './storeQuery';
import { recordWakes } from './wakeRecorder';

export { recordWakes, storeQuery };
import type { ListedMessage, ProjectionStore } from '../../src/projections/projectionStore';
import { GenerationGap } from '../../src/projections/rebuildGenerations';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import type { WakeBus } from '../../src/projections/wakeBus';
import { wakeDue } from '../../src/projections/readModel/wakes';
import { generateLog, LogBuilder, projectAll, shuffledWithDuplicates } from './projectionStoreLog';
import { expectEqualLarge } from '../support/expectEqualLarge';

export interface ProjectionStoreHarness {
  store: ProjectionStore;
  /** The bus the store's wakes arrive on. */
  wakeBus: WakeBus;
  close(): Promise<void>;
}

export type ProjectionStoreFactory = () => Promise<ProjectionStoreHarness>;

const TASK = { state: 'Working', expectedOutput: { shape: 'review' } } as TaskEnvelope;

/** A caller's query as the store receives it: parsed, with the position bound of the page to read. */

/** Every page of one listing, following nextBefore. */
export async function listAll(store: ProjectionStore, identity: string, filters: Record<string, unknown> = {}, limit = 200) {
  const messages: ListedMessage[] = [];
  let before: bigint | null = null;
  do {
    const page = await store.listMessages(identity, storeQuery({ ...filters, limit }, before));
    messages.push(...page.messages);
    before = page.nextBefore;
  } while (before !== null);
  return messages;
}

/** Everything a user can see: checkpoint, agents, counts, and every listing of every identity. */
export async function snapshotViews(store: ProjectionStore) {
  const heartbeats = await store.allHeartbeats();
  const views: Record<string, unknown> = {};
  for (const { identity } of heartbeats) {
    views[identity] = {
      all: await listAll(store, identity),
      unread: await listAll(store, identity, { status: 'unread' }),
      read: await listAll(store, identity, { status: 'read' }),
      outbox: await listAll(store, identity, { box: 'outbox' }),
      unreadCount: await store.unreadCount(identity),
    };
  }
  return { checkpoint: await store.checkpoint(), agents: await store.listAgents(), heartbeats, views };
}

const ids = (messages: readonly ListedMessage[]) => messages.map((m) => m.messageId);

/** @a, @b, @c registered; direct mail to @b and @c, a reply with a task, a broadcast, a suppressed wake. */
function scenario() {
  const log = new LogBuilder().register('@a', '@b', '@c');
  const m1 = log.send('@a', '@b', { priority: 'high', tags: ['ops', 'review'] });
  const m2 = log.send('@a', '@b', { priority: 'low', tags: ['ops'] });
  const m3 = log.send('@c', '@b', { replyTo: m1, task: TASK });
  const m4 = log.send('@a', 'AGENT:*', {}, ['@b', '@c']);
  const m5 = log.send('@b', '@c', { priority: 'high', wakeSuppressed: true });
  return { log, m1, m2, m3, m4, m5 };
}

export function describeProjectionStoreContract(name: string, factory: ProjectionStoreFactory): void {
  describe(`projection store contract: ${name}`, () => {
    let harnesses: ProjectionStoreHarness[] = [];
    const open = async () => {
      const harness = await factory();
      harnesses.push(harness);
      return harness;
    };
    afterEach(async () => {
      await Promise.all(harnesses.map((h) => h.close()));
      harnesses = [];
    });

    it('starts empty', async () => {
      const { store } = await open();
      expect(await store.checkpoint()).toBeNull();
      expect(await store.listMessages('@b', storeQuery({}))).toEqual({ messages: [], nextBefore: null, unreadCount: 0 });
      expect(await store.unreadCount('@b')).toEqual({ unread: 0, unseen: 0, byPriority: { low: 0, normal: 0, high: 0 } });
      expect(await store.heartbeat('@b')).toEqual({
        identity: '@b',
        unread: 0,
        unseen: 0,
        byPriority: { low: 0, normal: 0, high: 0 },
        oldestUnreadAt: null,
        lastActivityAt: null,
        tasksWaiting: 0,
        tasksWaitingSince: null,
        repliesOwed: 0,
        nextReplyDueBy: null,
      });
      expect(await store.allHeartbeats()).toEqual([]);
      expect(await store.listAgents()).toEqual([]);
    });

    it('records the log it belongs to with the checkpoint: empty views are claimed, a later claim by another log finds them held', async () => {
      const { store } = await open();
      expect(await store.binding()).toMatchObject({ logIdentity: null, checkpoint: null });
      expect(await store.claim('log-a')).toMatchObject({ logIdentity: 'log-a', checkpoint: null });
      const { log } = scenario();
      await store.applyBatch(log.projected());
      expect(await store.binding()).toMatchObject({ logIdentity: 'log-a', checkpoint: BigInt(log.events.length) });
      expect(await store.claim('log-b')).toMatchObject({ logIdentity: 'log-a', checkpoint: BigInt(log.events.length) });
    });

    it('a generation being built refuses a batch that follows a position it does not hold: nothing applied, GenerationGap', async () => {
      const { store } = await open();
      if (store.generations === undefined) return expect(store.backend).toBe('memory'); // the one store without generations
      const { log, m1, m2 } = scenario();
      const events = log.projected();
      const generation = await store.generations().create('log-a');
      await generation.applyBatch(events.slice(0, 3), null); // the registrations, from the log's start
      // The batch before (the first two sends) never went in: the next one, which follows it, is refused whole.
      const refused = await generation.applyBatch(events.slice(5), events[4].position).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GenerationGap);
      expect(refused).toMatchObject({ stands: events[2].position, follows: events[4].position });
      expect(await generation.checkpoint()).toBe(events[2].position);
      // Once the batch before is in, the same batch goes in, and the generation holds every event once.
      await generation.applyBatch(events.slice(3, 5), events[2].position);
      await generation.applyBatch(events.slice(5), events[4].position);
      expect(await generation.checkpoint()).toBe(BigInt(log.events.length));
      await store.generations().activate(generation, (await store.generations().active()).name, true);
      expect(ids(await listAll(store, '@b'))).toEqual(expect.arrayContaining([m1, m2]));
      expect((await store.unreadCount('@b')).unread).toBe(4);
    });

    it('applies events with their checkpoint: inboxes newest first, outbox, summaries with reply and task', async () => {
      const { store } = await open();
      const { log, m1, m2, m3, m4, m5 } = scenario();
      await store.applyBatch(log.projected());
      expect(await store.checkpoint()).toBe(BigInt(log.events.length));
      expect(ids(await listAll(store, '@b'))).toEqual([m4, m3, m2, m1]);
      expect(ids(await listAll(store, '@c'))).toEqual([m5, m4]);
      expect(await listAll(store, '@a')).toEqual([]);
      expect(ids(await listAll(store, '@a', { box: 'outbox' }))).toEqual([m4, m2, m1]);
      expect(ids(await listAll(store, '@b', { box: 'outbox' }))).toEqual([m5]);
      const reply = (await listAll(store, '@b')).find((m) => m.messageId === m3);
      expect(reply).toEqual({
        messageId: m3,
        from: '@c',
        to: '@b',
        subject: `subject of ${m3}`,
        priority: 'normal',
        threadId: m1,
        inReplyTo: m1,
        tags: [],
        sentAt: log.sentAt(m3),
        readAt: null,
        seenAt: null,
        task: TASK,
      });
      const broadcast = (await listAll(store, '@c')).find((m) => m.messageId === m4);
      expect(broadcast).toEqual({
        messageId: m4,
        from: '@a',
        to: 'AGENT:*',
        subject: `subject of ${m4}`,
        priority: 'normal',
        threadId: m4,
        inReplyTo: null,
        tags: [],
        sentAt: log.sentAt(m4),
        readAt: null,
        seenAt: null,
      });
      expect((await store.listAgents()).map((a) => [a.identity, a.role, a.retired])).toEqual([
        ['@a', 'agent', false],
        ['@b', 'agent', false],
        ['@c', 'agent', false],
      ]);
    });

    it('reads several whole delivery ledgers at once, each equal to its pages; ids without a ledger are absent', async () => {
      const { store } = await open();
      const { log, m1, m3, m4, m5 } = scenario();
      log.read('@b', m1);
      await store.applyBatch(log.projected());
      const ids = [m4, m1, 'no-such-message', m3, m5];
      const ledgers = await store.deliveryLedgers(ids);
      expect([...ledgers.keys()].sort()).toEqual([m1, m3, m4, m5].sort());
      for (const messageId of [m1, m3, m4, m5]) {
        // The same ledger read page by page (one recipient a page): header and counts of the first, every row in order.
        const first = (await store.deliveryLedger(messageId, { after: null, limit: 1 }))!;
        const rows = [...first.rows];
        for (let after = first.nextAfter; after !== null;) {
          const page = (await store.deliveryLedger(messageId, { after, limit: 1 }))!;
          rows.push(...page.rows);
          after = page.nextAfter;
        }
        const { nextAfter: _next, ...head } = first;
        expect(ledgers.get(messageId)).toEqual({ ...head, rows });
      }
      expect(ledgers.get(m4)!.rows.map((row) => row.recipient)).toEqual(['@b', '@c']);
      expect(ledgers.get(m1)!).toMatchObject({ message: { messageId: m1, sender: '@a', recipientCount: 1 } });
      expect(ledgers.get(m1)!.counts.read).toBe(1);
      expect(ledgers.get(m1)!.rows[0]).toMatchObject({ recipient: '@b', read: { at: expect.any(String) } });
      expect(await store.deliveryLedgers([])).toEqual(new Map());
      // In send order (as verify asks): a range of the store's own order, m2 inside it not asked for, so not answered.
      const inOrder = await store.deliveryLedgers([m1, m3, m4]);
      expect([...inOrder.keys()].sort()).toEqual([m1, m3, m4].sort());
      for (const messageId of [m1, m3, m4]) expect(inOrder.get(messageId)).toEqual(ledgers.get(messageId));
    });

    it('lists every message it keeps a ledger for, page by page, and none when it keeps none', async () => {
      const { store } = await open();
      const empty = await store.deliveryLedgerIds(null, 100);
      expect(empty.messageIds).toEqual([]);
      const { log, m1, m2, m3, m4, m5 } = scenario();
      await store.applyBatch(log.projected());
      for (const limit of [1, 2, 1000]) {
        const seen = new Set<string>();
        let pages = 0;
        for (let after: string | null = null; ; pages++) {
          const page = await store.deliveryLedgerIds(after, limit);
          for (const messageId of page.messageIds) seen.add(messageId); // an id may come twice (Redis SCAN), never missed
          if (page.next === null) break;
          after = page.next;
        }
        expect([...seen].sort()).toEqual([m1, m2, m3, m4, m5].sort());
        // It ends. (Redis pages as SCAN does: through every key of the database, other namespaces' too, `limit` at a time.)
        expect(pages).toBeLessThan(100_000);
      }
    });

    it('redelivered and late events change nothing', async () => {
      const { store } = await open();
      const { log, m1 } = scenario();
      const events = log.projected();
      await store.applyBatch(events);
      const before = await snapshotViews(store);
      await store.applyBatch(events);
      await store.applyBatch(events.slice(3, 7));
      await store.applyBatch([events[9], events[4], events[0]]);
      expect(await snapshotViews(store)).toEqual(before);
      // A read, then the whole history again with the read in the middle: the read counts once.
      log.read('@b', m1);
      await store.applyBatch(log.projected(events.length));
      const afterRead = await snapshotViews(store);
      await store.applyBatch(log.projected());
      expect(await snapshotViews(store)).toEqual(afterRead);
      expect((await store.unreadCount('@b')).unread).toBe(3);
    });

    it('lists with filters: status, from, threadId, tags (all of them), priority; outbox by recipient', async () => {
      const { store } = await open();
      const { log, m1, m2, m3, m4 } = scenario();
      const readAt = log.read('@b', m2);
      await store.applyBatch(log.projected());
      expect(ids(await listAll(store, '@b', { status: 'unread' }))).toEqual([m4, m3, m1]);
      const read = await listAll(store, '@b', { status: 'read' });
      expect(ids(read)).toEqual([m2]);
      expect(read[0].readAt).toBe(readAt);
      expect(ids(await listAll(store, '@b', { status: 'all' }))).toEqual([m4, m3, m2, m1]);
      expect(ids(await listAll(store, '@b', { from: '@c' }))).toEqual([m3]);
      expect(ids(await listAll(store, '@b', { threadId: m1 }))).toEqual([m3, m1]);
      expect(ids(await listAll(store, '@b', { tags: ['ops'] }))).toEqual([m2, m1]);
      expect(ids(await listAll(store, '@b', { tags: ['ops', 'review'] }))).toEqual([m1]);
      expect(ids(await listAll(store, '@b', { priority: 'high' }))).toEqual([m1]);
      expect(ids(await listAll(store, '@b', { from: '@a', priority: 'low' }))).toEqual([m2]);
      expect(ids(await listAll(store, '@b', { status: 'unread', from: '@a' }))).toEqual([m4, m1]);
      expect(await listAll(store, '@b', { from: '@nobody' })).toEqual([]);
      const outbox = await listAll(store, '@a', { box: 'outbox', to: '@b' });
      expect(ids(outbox)).toEqual([m2, m1]);
      expect(outbox.map((m) => m.readAt)).toEqual([null, null]); // the recipient's receipt is not the sender's
      expect(ids(await listAll(store, '@a', { box: 'outbox', tags: ['review'] }))).toEqual([m1]);
    });

    it('a message whose task data is nested 999 deep lists under every filter, in the inbox and the outbox; later mail too', async () => {
      const { store } = await open();
      let data: unknown = 'leaf';
      for (let depth = 0; depth < 999; depth++) data = { data };
      const deep = { state: 'Working', input: { parts: [{ kind: 'data', data }] } } as unknown as TaskEnvelope;
      const log = new LogBuilder().register('@a', '@b', '@c');
      const nested = log.send('@a', '@b', { tags: ['t'], task: deep });
      await store.applyBatch(log.projected());
      const later = log.send('@c', '@b', { tags: ['t'] });
      await store.applyBatch(log.projected());
      const inbox = await listAll(store, '@b', { tags: ['t'] });
      expect(ids(inbox)).toEqual([later, nested]);
      expect(inbox[1].task).toEqual(deep);
      expect(ids(await listAll(store, '@b', { tags: ['t'], from: '@a', priority: 'normal', threadId: nested }))).toEqual([
        nested,
      ]);
      expect(ids(await listAll(store, '@a', { box: 'outbox', tags: ['t'], to: '@b' }))).toEqual([nested]);
    });

    it('filters compare whole values, whatever characters they hold (separators, escapes, JSON-looking text)', async () => {
      const { store } = await open();
      const log = new LogBuilder().register('@a', '@b', '@c');
      const comma = log.send('@a', '@b', { tags: ['a,b'], subject: '"tags":["a"],"from":"@c",' });
      const bar = log.send('@a', '@b', { tags: ['x|y', '%2C'] });
      const plain = log.send('@a', '@b', { tags: ['a', 'b', ','] });
      await store.applyBatch(log.projected());
      // A log written before tags lost the comma may hold 'a,b' and ',' as tags: the views keep them whole ('a' finds
      // neither), though no filter may name them now (a comma separates a filter's tags).
      expect(ids(await listAll(store, '@b', { tags: ['a'] }))).toEqual([plain]);
      expect(ids(await listAll(store, '@b', { tags: ['a', 'b'] }))).toEqual([plain]);
      expect(ids(await listAll(store, '@b', { tags: ['x|y'] }))).toEqual([bar]);
      expect(ids(await listAll(store, '@b', { tags: ['%2C'] }))).toEqual([bar]);
      expect(ids(await listAll(store, '@b', { tags: ['x'] }))).toEqual([]);
      expect(ids(await listAll(store, '@b', { from: '@c' }))).toEqual([]);
      expect(ids(await listAll(store, '@b', { threadId: `${comma},` }))).toEqual([]);
      expect((await listAll(store, '@b', {})).find((m) => m.messageId === comma)?.tags).toEqual(['a,b']);
    });

    it('paginates newest first by position bound, filters included, with no gaps or repeats', async () => {
      const { store } = await open();
      const { log, m1, m2, m3, m4 } = scenario();
      await store.applyBatch(log.projected());
      const first = await store.listMessages('@b', storeQuery({ limit: 3 }));
      expect(ids(first.messages)).toEqual([m4, m3, m2]);
      expect(first.unreadCount).toBe(4);
      const second = await store.listMessages('@b', storeQuery({ limit: 3 }, first.nextBefore));
      expect(ids(second.messages)).toEqual([m1]);
      expect(second.nextBefore).toBeNull();
      expect(ids(await listAll(store, '@b', {}, 1))).toEqual([m4, m3, m2, m1]);
      expect(ids(await listAll(store, '@b', { from: '@a' }, 1))).toEqual([m4, m2, m1]);
      // A page that ends exactly at the last match says there is no more.
      expect((await store.listMessages('@b', storeQuery({ limit: 4 }))).nextBefore).toBeNull();
    });

    it('a filter that matches rarely in a large inbox finds every match, newest first, page after page', async () => {
      const { store } = await open();
      const log = new LogBuilder().register('@a', '@b', '@c');
      const fromC: string[] = [];
      for (let i = 0; i < 3000; i++) {
        if (i % 500 === 7) fromC.unshift(log.send('@c', '@b', { tags: ['rare'] }));
        else log.send('@a', '@b');
      }
      await store.applyBatch(log.projected());
      expect(ids(await listAll(store, '@b', { from: '@c' }, 2))).toEqual(fromC);
      expect(ids(await listAll(store, '@b', { tags: ['rare'], status: 'unread' }, 4))).toEqual(fromC);
      expect(ids(await listAll(store, '@b', { from: '@c', status: 'read' }))).toEqual([]);
    });

    it('counts unread exactly, by priority; reads count once, unknown reads count nothing', async () => {
      const { store } = await open();
      const { log, m1 } = scenario();
      await store.applyBatch(log.projected());
      expect(await store.unreadCount('@b')).toEqual({ unread: 4, unseen: 4, byPriority: { low: 1, normal: 2, high: 1 } });
      expect(await store.unreadCount('@c')).toEqual({ unread: 2, unseen: 2, byPriority: { low: 0, normal: 1, high: 1 } });
      expect(await store.unreadCount('@a')).toEqual({ unread: 0, unseen: 0, byPriority: { low: 0, normal: 0, high: 0 } });
      const mark = log.events.length;
      log.read('@b', m1);
      log.read('@b', m1);
      log.read('@b', 'm-unknown');
      log.read('@c', m1); // not @c's message
      await store.applyBatch(log.projected(mark));
      expect(await store.unreadCount('@b')).toEqual({ unread: 3, unseen: 3, byPriority: { low: 1, normal: 2, high: 0 } });
      expect(await store.unreadCount('@c')).toEqual({ unread: 2, unseen: 2, byPriority: { low: 0, normal: 1, high: 1 } });
    });

    it('archiving hides a message from the inbox and from unread counts; the outbox keeps it', async () => {
      const { store } = await open();
      const { log, m1, m2, m3, m4 } = scenario();
      log.read('@b', m1);
      log.archive('@b', m1, false);
      log.archive('@b', m2);
      log.archive('@b', m2);
      await store.applyBatch(log.projected());
      expect(ids(await listAll(store, '@b'))).toEqual([m4, m3]);
      expect(ids(await listAll(store, '@b', { status: 'unread' }))).toEqual([m4, m3]);
      expect(await listAll(store, '@b', { status: 'read' })).toEqual([]);
      expect(await store.unreadCount('@b')).toEqual({ unread: 2, unseen: 2, byPriority: { low: 0, normal: 2, high: 0 } });
      expect(ids(await listAll(store, '@a', { box: 'outbox' }))).toEqual([m4, m2, m1]);
      // Reading an archived message records the receipt but counts nothing twice.
      const mark = log.events.length;
      log.read('@b', m2);
      await store.applyBatch(log.projected(mark));
      expect(await store.unreadCount('@b')).toEqual({ unread: 2, unseen: 2, byPriority: { low: 0, normal: 2, high: 0 } });
    });

    it('issue 13: a list message reaches each listed identity; unarchive brings an entry back; status=archived; seen marks and unseen', async () => {
      const { store } = await open();
      const log = new LogBuilder().register('@a', '@b', '@c', '@d');
      const m1 = log.send('@a', ['@b', '@c'], { priority: 'high' });
      const m2 = log.send('@a', '@b');
      const m3 = log.send('@a', '@b');
      log.archive('@b', m1);
      log.archive('@b', m2);
      log.unarchive('@b', m1);
      const seenAt = log.seen('@b', m1, m3, 'no-such-message');
      log.seen('@b', m1); // a second mark: the first seenAt stands
      await store.applyBatch(log.projected());
      expect((await listAll(store, '@b')).map((m) => [m.messageId, m.to, m.seenAt])).toEqual([
        [m3, '@b', seenAt],
        [m1, ['@b', '@c'], seenAt],
      ]);
      expect((await listAll(store, '@b', { status: 'archived' })).map((m) => [m.messageId, m.archivedAt])).toEqual([
        [m2, expect.any(String)],
      ]);
      expect(await store.unreadCount('@b')).toEqual({ unread: 2, unseen: 0, byPriority: { low: 0, normal: 1, high: 1 } });
      expect(await store.unreadCount('@c')).toEqual({ unread: 1, unseen: 1, byPriority: { low: 0, normal: 0, high: 1 } });
      expect(await listAll(store, '@d')).toEqual([]);
      expect(ids(await listAll(store, '@a', { box: 'outbox', to: '@c' }))).toEqual([m1]);
    });

    it('heartbeat counts: unread by priority, oldest unread, last activity (sent or read); every identity listed', async () => {
      const { store } = await open();
      const { log, m1, m2, m3, m4, m5 } = scenario();
      await store.applyBatch(log.projected());
      expect(await store.heartbeat('@b')).toEqual({
        identity: '@b',
        unread: 4,
        unseen: 4,
        byPriority: { low: 1, normal: 2, high: 1 },
        oldestUnreadAt: log.sentAt(m1),
        lastActivityAt: log.sentAt(m5),
        tasksWaiting: 1, // m3 carries a task in Working, sent to @b directly: it waits on @b
        tasksWaitingSince: { position: expect.any(Number) as number, at: log.sentAt(m3), taskId: m3 }, // since its send
        repliesOwed: 0,
        nextReplyDueBy: null,
      });
      const mark = log.events.length;
      const readAt = log.read('@b', m1);
      await store.applyBatch(log.projected(mark));
      const b = await store.heartbeat('@b');
      expect([b.unread, b.oldestUnreadAt, b.lastActivityAt]).toEqual([3, log.sentAt(m2), readAt]);
      const all = await store.allHeartbeats();
      expect(all.map((h) => h.identity)).toEqual(['@a', '@b', '@c']);
      expect(all[0]).toEqual({
        identity: '@a',
        unread: 0,
        unseen: 0,
        byPriority: { low: 0, normal: 0, high: 0 },
        oldestUnreadAt: null,
        lastActivityAt: log.sentAt(m4),
        tasksWaiting: 0,
        tasksWaitingSince: null,
        repliesOwed: 0,
        nextReplyDueBy: null,
      });
      expect(all[2]).toMatchObject({ identity: '@c', unread: 2, oldestUnreadAt: log.sentAt(m4), lastActivityAt: log.sentAt(m3) });
    });

    it('agentEntries: one identity’s entry in listAgents and in allHeartbeats, undefined where it has none', async () => {
      const { store } = await open();
      const { log } = scenario();
      log.send('@a', '@x', { task: TASK }); // mail and a waiting task for an identity never registered
      log.retire('@c');
      await store.applyBatch(log.projected());
      const [agents, heartbeats] = [await store.listAgents(), await store.allHeartbeats()];
      const identities = [...new Set([...agents, ...heartbeats].map((entry) => entry.identity))];
      expect(identities.sort()).toEqual(['@a', '@b', '@c', '@x']);
      for (const identity of [...identities, '@ghost']) {
        expect(await store.agentEntries(identity)).toEqual({
          agent: agents.find((agent) => agent.identity === identity),
          heartbeat: heartbeats.find((heartbeat) => heartbeat.identity === identity),
        });
      }
      expect(await store.agentEntries('@x')).toMatchObject({ agent: undefined, heartbeat: { identity: '@x', unread: 1 } });
      expect(await store.agentEntries('@c')).toMatchObject({ agent: { identity: '@c', retired: true } });
      expect(await store.agentEntries('@ghost')).toEqual({ agent: undefined, heartbeat: undefined });
    });

    it('lists agents with retirement; retiring an unknown identity lists nothing', async () => {
      const { store } = await open();
      const log = new LogBuilder().register('@a', '@b', '@c');
      const retiredAt = log.nextAt;
      log.retire('@c').retire('@ghost');
      await store.applyBatch(log.projected());
      const agents = await store.listAgents();
      expect(agents.map((a) => a.identity)).toEqual(['@a', '@b', '@c']);
      expect(agents[2]).toEqual({
        identity: '@c',
        role: 'agent',
        registeredAt: log.events[2].metadata.at,
        retired: true,
        retiredAt,
      });
      expect(agents[0]).toMatchObject({ retired: false, retiredAt: null });
    });

    it('wakes: one per recipient, only when wake=true, unreadCount after the change, only once the view shows it', async () => {
      const { store, wakeBus } = await open();
      const recorder = await recordWakes(wakeBus, ['@a', '@b', '@c']);
      const visible: boolean[] = [];
      const listings: Promise<unknown>[] = [];
      const unsubscribe = await wakeBus.subscribe('@b', (wake) => {
        if (wake.messageId.startsWith('flush-')) return;
        listings.push(
          store.listMessages('@b', storeQuery({})).then((page) => visible.push(ids(page.messages).includes(wake.messageId))),
        );
      });
      const { log, m1, m2, m3, m4 } = scenario();
      await store.applyBatch(log.projected());
      await recorder.flush();
      expect(recorder.of('@b').map((w) => [w.messageId, w.unreadCount])).toEqual([
        [m1, 1],
        [m2, 2],
        [m3, 3],
        [m4, 4],
      ]);
      expect(recorder.of('@c').map((w) => [w.messageId, w.unreadCount])).toEqual([[m4, 1]]); // m5 suppressed its wake
      expect(recorder.of('@a')).toEqual([]); // no wake to the sender of its own broadcast
      expect(recorder.of('@c')[0]).toEqual({
        type: 'wake/message',
        messageId: m4,
        from: '@a',
        to: 'AGENT:*',
        recipient: '@c',
        subject: `subject of ${m4}`,
        priority: 'normal',
        isBroadcast: true,
        unreadCount: 1,
        position: '9',
      });
      await Promise.all(listings); // each listing began as its wake arrived; flush() saw every wake arrive
      expect(visible).toEqual([true, true, true, true]);
      // Redelivery: no second wake.
      await store.applyBatch(log.projected());
      await store.applyBatch(log.projected(4));
      await recorder.flush();
      expect(recorder.wakes).toHaveLength(5);
      await unsubscribe();
      await recorder.stop();
    });

    it('a replay (publishWakes: false) makes the same views and no wake; the events after it wake as usual', async () => {
      // The projector replays so what views lost while running had held (their wakes went out then).
      const { store, wakeBus } = await open();
      const recorder = await recordWakes(wakeBus, ['@a', '@b', '@c']);
      const { log, m4 } = scenario();
      const events = log.projected();
      const cut = events.findIndex((event) =>
        event.changes.some((change) => change.kind === 'inboxAdded' && change.entry.messageId === m4),
      );
      await store.applyBatch(events.slice(0, cut), { publishWakes: false });
      await recorder.flush();
      expect(recorder.wakes).toEqual([]);
      await store.applyBatch(events.slice(cut));
      await recorder.flush();
      expect(recorder.wakes.map((wake) => [wake.recipient, wake.messageId, 'unreadCount' in wake && wake.unreadCount])).toEqual([
        ['@b', m4, 4],
        ['@c', m4, 1],
      ]);
      const clean = await open();
      await clean.store.applyBatch(events);
      expect(await snapshotViews(store)).toEqual(await snapshotViews(clean.store));
      await recorder.stop();
    });

    it('reset drops every view and the checkpoint; the log then rebuilds the same views', async () => {
      const { store } = await open();
      const { log } = scenario();
      await store.applyBatch(log.projected());
      const before = await snapshotViews(store);
      await store.reset();
      expect(await store.checkpoint()).toBeNull();
      expect(await store.allHeartbeats()).toEqual([]);
      expect(await store.listAgents()).toEqual([]);
      expect(await listAll(store, '@b')).toEqual([]);
      await store.applyBatch(log.projected());
      expect(await snapshotViews(store)).toEqual(before);
    });

    it('a 4,000-event log fed twice, and in shuffled batches with duplicates, gives the views of one clean pass', async () => {
      const events = projectAll(generateLog(4_000));
      const feed = async (store: ProjectionStore, batches: ProjectedEvent[][]) => {
        for (const batch of batches) await store.applyBatch(batch);
      };
      const inBatches = (size: number) =>
        Array.from({ length: Math.ceil(events.length / size) }, (_u, i) => events.slice(i * size, (i + 1) * size));
      const clean = await open();
      await feed(clean.store, inBatches(1000));
      const expected = await snapshotViews(clean.store);
      expect(expected.checkpoint).toBe(BigInt(events.length));
      expect(expected.heartbeats.reduce((sum, h) => sum + h.unread, 0)).toBeGreaterThan(100);

      const twice = await open();
      await feed(twice.store, inBatches(700));
      await feed(twice.store, inBatches(1000));
      expectEqualLarge(await snapshotViews(twice.store), expected);

      const shuffled = await open();
      const recorder = await recordWakes(shuffled.wakeBus, ['@b']);
      await feed(shuffled.store, shuffledWithDuplicates(events));
      expectEqualLarge(await snapshotViews(shuffled.store), expected);
      await recorder.flush();
      const wakesToB = events
        .flatMap((e) => e.changes)
        .filter(
          (c) =>
            c.kind === 'inboxAdded' && c.recipient === '@b' && wakeDue(c.recipient, c.entry, c.isBroadcast, c.wakeSuppressed),
        );
      expect(recorder.of('@b').map((w) => w.messageId)).toEqual(
        wakesToB.map((c) => c.kind === 'inboxAdded' && c.entry.messageId),
      );
      await recorder.stop();
    }, 120_000); // three passes over 4,000 events: a correctness test, given time on a loaded machine
  });
}
