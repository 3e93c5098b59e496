/**
 * The event store port's contract: one suite, run against every adapter
 * (memory, SQLite, EventStoreDB). Each test uses fresh stream names and reads
 * the log relative to the head it found, so the suite also holds on a store
 * that other tests (or a shared server) have already written to.
 */
import { randomUUID } from 'node:crypto';
import { ConcurrencyConflict } from '../../src/errors';
import type { EventStore } from '../../src/events/eventStore';
import type { NewEvent, StoredEvent } from '../../src/events/types';

export type EventStoreFactory = () => Promise<{ store: EventStore; cleanup(): Promise<void> }>;

/** A small valid mailbox event with a fresh (or given) id; `label` makes payloads distinguishable. */
export function contractEvent(label: string, eventId: string = randomUUID()): NewEvent {
  return {
    eventId,
    type: 'AgentRetired',
    data: { identity: `@${label}`, retiredAt: '2025-01-01T00:00:00.000Z' },
    metadata: {
      commandId: `cmd-${label}`,
      correlationId: `corr-${label}`,
      causationId: `cause-${label}`,
      actor: '@admin',
      at: '2025-01-01T00:00:00.000Z',
      schemaVersion: 1,
    },
  };
}

/** Stream names under the mailbox prefix (the log only carries mailbox streams), unique per test. */
export const freshStream = (): string => `mailbox-message-contract-${randomUUID()}`;

const labels = (events: readonly StoredEvent[]): string[] => events.map((event) => (event.data as { identity: string }).identity);

async function expectConflict(promise: Promise<unknown>): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(ConcurrencyConflict);
}

/** Up to `count` events of a subscription (of `stream` when given), stopping at close; resolves with what arrived. */
async function collect(iterable: AsyncIterable<StoredEvent>, count: number, stream?: string): Promise<StoredEvent[]> {
  const seen: StoredEvent[] = [];
  for await (const event of iterable) {
    if (stream !== undefined && event.streamName !== stream) continue;
    seen.push(event);
    if (seen.length >= count) break;
  }
  return seen;
}

/** `sharesOneLog`: every store the factory gives is the same log (a shared real server). */
export function describeEventStoreContract(name: string, factory: EventStoreFactory, { sharesOneLog = false } = {}): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await factory());
    });
    afterEach(async () => {
      await cleanup();
    });

    /** Events appended after `head`, restricted to the given streams. */
    async function logAfter(head: bigint | null, streams: string[]): Promise<StoredEvent[]> {
      const page = await store.readAll(head, 10_000);
      return page.filter((event) => streams.includes(event.streamName));
    }

    describe('append with an expected revision', () => {
      it("creates a new stream with 'no_stream' and numbers its events from revision 0", async () => {
        const stream = freshStream();
        const result = await store.append(stream, [contractEvent('a'), contractEvent('b')], 'no_stream');
        expect(result.nextExpectedRevision).toBe(1n);
        const stored = await store.readStream(stream);
        expect(labels(stored)).toEqual(['@a', '@b']);
        expect(stored.map((event) => event.revision)).toEqual([0n, 1n]);
        expect(stored[1].position).toBe(result.position);
        expect(stored.every((event) => event.streamName === stream)).toBe(true);
      });

      it('streamOfEvent, where the store has it, names the stream an event id is in; null for an id never appended', async () => {
        if (!store.streamOfEvent) return; // optional: EventStoreDB finds no event by its id
        const [one, two] = [freshStream(), freshStream()];
        const [a, b] = [contractEvent('a'), contractEvent('b')];
        await store.append(one, [a], 'no_stream');
        await store.append(two, [contractEvent('c'), b], 'no_stream');
        expect([await store.streamOfEvent(a.eventId), await store.streamOfEvent(b.eventId)]).toEqual([one, two]);
        expect(await store.streamOfEvent(randomUUID())).toBeNull();
      });

      it('stores type, data and metadata exactly as given', async () => {
        const stream = freshStream();
        const event = contractEvent('exact');
        await store.append(stream, [event], 'no_stream');
        const [stored] = await store.readStream(stream);
        expect({ eventId: stored.eventId, type: stored.type, data: stored.data, metadata: stored.metadata }).toEqual(event);
      });

      it('appends to an existing stream when given its last revision as a bigint', async () => {
        const stream = freshStream();
        const first = await store.append(stream, [contractEvent('a')], 'no_stream');
        expect(first.nextExpectedRevision).toBe(0n);
        const second = await store.append(stream, [contractEvent('b')], first.nextExpectedRevision);
        expect(second.nextExpectedRevision).toBe(1n);
        expect(second.position > first.position).toBe(true);
        const third = await store.append(stream, [contractEvent('c'), contractEvent('d')], 1n);
        expect(third.nextExpectedRevision).toBe(3n);
        expect(labels(await store.readStream(stream))).toEqual(['@a', '@b', '@c', '@d']);
      });

      it('rejects a stale revision with ConcurrencyConflict and writes nothing', async () => {
        const stream = freshStream();
        await store.append(stream, [contractEvent('a')], 'no_stream');
        await store.append(stream, [contractEvent('b')], 0n);
        const head = await store.headPosition();
        await expectConflict(store.append(stream, [contractEvent('stale')], 0n));
        await expectConflict(store.append(stream, [contractEvent('ahead')], 5n));
        expect(labels(await store.readStream(stream))).toEqual(['@a', '@b']);
        expect(await logAfter(head, [stream])).toEqual([]);
        expect(await store.headPosition()).toBe(head);
      });

      it("rejects 'no_stream' on an existing stream with ConcurrencyConflict and writes nothing", async () => {
        const stream = freshStream();
        await store.append(stream, [contractEvent('a')], 'no_stream');
        await expectConflict(store.append(stream, [contractEvent('again'), contractEvent('again2')], 'no_stream'));
        expect(labels(await store.readStream(stream))).toEqual(['@a']);
      });

      it('rejects a bigint revision on a stream that does not exist', async () => {
        const stream = freshStream();
        await expectConflict(store.append(stream, [contractEvent('a')], 0n));
        expect(await store.readStream(stream)).toEqual([]);
      });

      it("'any' appends whether or not the stream exists", async () => {
        const stream = freshStream();
        const first = await store.append(stream, [contractEvent('a')], 'any');
        expect(first.nextExpectedRevision).toBe(0n);
        const second = await store.append(stream, [contractEvent('b')], 'any');
        expect(second.nextExpectedRevision).toBe(1n);
        expect(labels(await store.readStream(stream))).toEqual(['@a', '@b']);
      });

      it('appends several events atomically: consecutive revisions and positions, nothing interleaved', async () => {
        const stream = freshStream();
        const other = freshStream();
        const head = await store.headPosition();
        await Promise.all([
          store.append(stream, [contractEvent('s1'), contractEvent('s2'), contractEvent('s3')], 'no_stream'),
          store.append(other, [contractEvent('o1'), contractEvent('o2'), contractEvent('o3')], 'no_stream'),
        ]);
        const log = await logAfter(head, [stream, other]);
        expect(log).toHaveLength(6);
        const streamsInOrder = log.map((event) => event.streamName);
        // each append's events sit together in the log
        expect([
          [stream, stream, stream, other, other, other],
          [other, other, other, stream, stream, stream],
        ]).toContainEqual(streamsInOrder);
      });

      it('a failed multi-event append writes none of its events', async () => {
        const stream = freshStream();
        await store.append(stream, [contractEvent('a')], 'no_stream');
        await expectConflict(store.append(stream, [contractEvent('x'), contractEvent('y'), contractEvent('z')], 'no_stream'));
        expect(labels(await store.readStream(stream))).toEqual(['@a']);
      });

      it('re-appending the same event ids is de-duplicated: one copy, the original result', async () => {
        const stream = freshStream();
        const events = [contractEvent('a'), contractEvent('b')];
        const original = await store.append(stream, events, 'no_stream');
        const retried = await store.append(stream, events, 'no_stream');
        expect(retried).toEqual(original);
        const next = [contractEvent('c')];
        const third = await store.append(stream, next, original.nextExpectedRevision);
        expect(await store.append(stream, next, original.nextExpectedRevision)).toEqual(third);
        const stored = await store.readStream(stream);
        expect(labels(stored)).toEqual(['@a', '@b', '@c']);
        expect(new Set(stored.map((event) => event.eventId)).size).toBe(3);
      });

      it('de-duplicates retries that race each other', async () => {
        const stream = freshStream();
        const events = [contractEvent('race1'), contractEvent('race2')];
        const results = await Promise.all(Array.from({ length: 5 }, () => store.append(stream, events, 'no_stream')));
        expect(new Set(results.map((r) => `${r.nextExpectedRevision}/${r.position}`)).size).toBe(1);
        expect(labels(await store.readStream(stream))).toEqual(['@race1', '@race2']);
      });
    });

    describe('readStream', () => {
      it('reads from a revision, inclusive', async () => {
        const stream = freshStream();
        await store.append(
          stream,
          ['a', 'b', 'c', 'd'].map((l) => contractEvent(l)),
          'no_stream',
        );
        expect(labels(await store.readStream(stream, 2n))).toEqual(['@c', '@d']);
        expect(labels(await store.readStream(stream, 0n))).toEqual(['@a', '@b', '@c', '@d']);
        expect(await store.readStream(stream, 4n)).toEqual([]);
      });

      it('returns [] for a stream that does not exist', async () => {
        expect(await store.readStream(freshStream())).toEqual([]);
        expect(await store.readStream(freshStream(), 3n)).toEqual([]);
      });

      it('keeps streams apart', async () => {
        const one = freshStream();
        const two = freshStream();
        await store.append(one, [contractEvent('one')], 'no_stream');
        await store.append(two, [contractEvent('two')], 'no_stream');
        expect(labels(await store.readStream(one))).toEqual(['@one']);
        expect(labels(await store.readStream(two))).toEqual(['@two']);
      });
    });

    describe('readAll and headPosition', () => {
      it('an empty log has a null head', async () => {
        const page = await store.readAll(null, 1);
        if (page.length === 0) expect(await store.headPosition()).toBeNull();
        else expect(await store.headPosition()).not.toBeNull();
      });

      it('returns events in append order with strictly increasing bigint positions', async () => {
        const one = freshStream();
        const two = freshStream();
        const head = await store.headPosition();
        await store.append(one, [contractEvent('1')], 'no_stream');
        await store.append(two, [contractEvent('2'), contractEvent('3')], 'no_stream');
        await store.append(one, [contractEvent('4')], 0n);
        const log = await logAfter(head, [one, two]);
        expect(labels(log)).toEqual(['@1', '@2', '@3', '@4']);
        for (const event of log) expect(typeof event.position).toBe('bigint');
        for (let i = 1; i < log.length; i++) expect(log[i].position > log[i - 1].position).toBe(true);
        expect(await store.headPosition()).toBe(log[3].position);
      });

      it('pages with `after` (exclusive) and `limit`', async () => {
        const stream = freshStream();
        const head = await store.headPosition();
        await store.append(
          stream,
          ['p1', 'p2', 'p3', 'p4', 'p5'].map((l) => contractEvent(l)),
          'no_stream',
        );
        const pages: string[][] = [];
        let after = head;
        for (let guard = 0; guard < 10; guard++) {
          const page = await store.readAll(after, 2);
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(2);
          pages.push(labels(page));
          after = page[page.length - 1].position;
        }
        expect(pages).toEqual([['@p1', '@p2'], ['@p3', '@p4'], ['@p5']]);
        const all = await logAfter(head, [stream]);
        expect(labels(await store.readAll(all[1].position, 100))).toEqual(['@p3', '@p4', '@p5']);
      });

      it('countEvents counts the events between two positions (not the positions), up to `atMost`', async () => {
        const stream = freshStream();
        const head = await store.headPosition();
        await store.append(
          stream,
          ['c1', 'c2', 'c3', 'c4', 'c5'].map((l) => contractEvent(l)),
          'no_stream',
        );
        const mine = await logAfter(head, [stream]);
        const through = mine[4].position;
        // What the log holds in the range, read: another writer of a shared log may have appended in between.
        const inRange = (after: bigint | null, to: bigint) =>
          store.readAll(after, 100_000).then((page) => page.filter((e) => e.position <= to).length);
        expect(await store.countEvents(head, through, 1000)).toBe(await inRange(head, through));
        expect(await store.countEvents(mine[1].position, mine[3].position, 1000)).toBe(
          await inRange(mine[1].position, mine[3].position),
        );
        expect(await store.countEvents(head, through, 2)).toBe(2);
        expect(await store.countEvents(through, through, 1000)).toBe(0);
        if (!sharesOneLog) {
          expect(await store.countEvents(head, through, 1000)).toBe(5);
          expect(await store.countEvents(mine[0].position, mine[2].position, 1000)).toBe(2);
        }
      });

      it('readAll(null) starts at the beginning of the log', async () => {
        const stream = freshStream();
        await store.append(stream, [contractEvent('first')], 'no_stream');
        const fromStart = await store.readAll(null, 1_000_000);
        expect(labels(fromStart.filter((event) => event.streamName === stream))).toEqual(['@first']);
        const [event] = await store.readStream(stream);
        expect(fromStart.findIndex((e) => e.eventId === event.eventId)).toBeGreaterThanOrEqual(0);
      });
    });

    describe('subscribe', () => {
      it('catches up strictly after `after`, then delivers later appends live, in order', async () => {
        const stream = freshStream();
        await store.append(stream, [contractEvent('before1'), contractEvent('before2')], 'no_stream');
        const [first] = await store.readStream(stream);
        const subscription = store.subscribe(first.position);
        const ours = collect(subscription, 3, stream);
        await store.append(stream, [contractEvent('live1')], 1n);
        await store.append(stream, [contractEvent('live2')], 2n);
        const seen = await ours;
        await subscription.close();
        expect(labels(seen)).toEqual(['@before2', '@live1', '@live2']);
        expect(seen.map((event) => event.revision)).toEqual([1n, 2n, 3n]);
      });

      it('from the head delivers only what is appended afterwards', async () => {
        const stream = freshStream();
        await store.append(stream, [contractEvent('old')], 'no_stream');
        const subscription = store.subscribe(await store.headPosition());
        const arriving = collect(subscription, 1, stream);
        await store.append(stream, [contractEvent('new')], 0n);
        expect(labels(await arriving)).toEqual(['@new']);
        await subscription.close();
      });

      it('close() ends an iteration that is waiting for appends', async () => {
        const stream = freshStream();
        const subscription = store.subscribe(await store.headPosition());
        const iterator = subscription[Symbol.asyncIterator]();
        await store.append(stream, [contractEvent('live')], 'no_stream');
        // The positive signal: the iteration is live (it delivered the append); the next call waits for another.
        expect(labels([(await iterator.next()).value as StoredEvent])).toEqual(['@live']);
        const waiting = iterator.next();
        await subscription.close();
        expect(await waiting).toMatchObject({ done: true });
      });
    });

    describe('logIdentity', () => {
      it('is the same on every call, also when callers race to create it', async () => {
        const racing = await Promise.all([store.logIdentity(), store.logIdentity(), store.logIdentity()]);
        expect(racing[0]).toMatch(/^\S{8,}$/);
        expect(new Set(racing).size).toBe(1);
        expect(await store.logIdentity()).toBe(racing[0]);
      });

      it('is not an event of the log: neither readAll, the head nor a subscription show it', async () => {
        const head = await store.headPosition();
        await store.logIdentity();
        expect(await store.headPosition()).toBe(head);
        expect(await store.readAll(head, 100)).toEqual([]);
        const stream = freshStream();
        const subscription = store.subscribe(head);
        const first = collect(subscription, 1);
        await store.append(stream, [contractEvent('after-identity')], 'no_stream');
        const seen = await first;
        await subscription.close();
        expect(seen.map((event) => event.streamName)).toEqual([stream]);
      });

      (sharesOneLog ? it.skip : it)('differs between two logs', async () => {
        const other = await factory();
        try {
          expect(await other.store.logIdentity()).not.toBe(await store.logIdentity());
        } finally {
          await other.cleanup();
        }
      });
    });

    describe('reads are checked against the stored shapes', () => {
      it('a stored event that does not fit its shape fails every read path loudly, naming stream, position, type and field', async () => {
        const head = await store.headPosition();
        const stream = freshStream();
        const good = contractEvent('fits');
        // append does not check (the deciders produce the shapes); a hand-written or foreign event can still land in the log
        const bad = {
          ...contractEvent('misfit'),
          data: { identity: '@misfit', retiredAt: 1_700_000_000 },
        } as unknown as NewEvent;
        await store.append(stream, [good, bad], 'no_stream');
        const position = (await store.headPosition())!;
        const loud = new RegExp(`AgentRetired at position ${position} of stream ${stream}.*data\\.retiredAt`);
        await expect(store.readStream(stream)).rejects.toThrow(loud);
        await expect(store.readAll(head, 10)).rejects.toThrow(loud);
        const subscription = store.subscribe(head);
        await expect(collect(subscription, 2, stream)).rejects.toThrow(loud);
        await subscription.close();
        // the event before it is still served: the failure is that event's, not the log's
        expect(labels(await store.readAll(head, 1))).toEqual(['@fits']);
      });
    });
  });
}
