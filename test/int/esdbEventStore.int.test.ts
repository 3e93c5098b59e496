/**
 * The EventStoreDB adapter's own behaviour beyond the shared contract: failure
 * translation, deadlines, lost acknowledgements, system events in $all,
 * resubscription after a server restart, connection strings. Real client,
 * real gRPC, the in-repo double on loopback.
 */
import pino from 'pino';
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { ConcurrencyConflict, MailboxError } from '../../src/errors';
import type { StoredEvent } from '../../src/events/types';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';

let double: EsdbDouble;
let store: EsdbEventStore;

/**
 * A deadline short enough for the hung-server tests to be quick, long enough for a first call over a new gRPC channel
 * under a full run's load (at 400 ms such a first read once missed it: test/int/esdbMailbox).
 */
const fastFailing = (url: string) => `${url}&defaultDeadline=1000`;
const labels = (events: readonly StoredEvent[]) => events.map((e) => (e.data as { identity: string }).identity);

async function expectUnavailable(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MailboxError);
  expect((error as MailboxError).toJSON()).toMatchObject({ code: 'UNAVAILABLE', error: 'Service unavailable' });
  expect((error as MailboxError).status).toBe(503);
}

afterEach(async () => {
  await store?.close();
  await double?.close();
});

describe.each([
  ['BatchAppend', {}],
  ['Append', { serverFeatures: false, batchAppend: false }],
] as const)('a lost append acknowledgement (%s path)', (_path, options) => {
  beforeEach(async () => {
    double = await EsdbDouble.start(options);
    // A deadline long enough that, on a loaded machine, the request still reaches the double before it fires.
    store = EsdbEventStore.connect(`${double.url}&defaultDeadline=2000`);
  });

  it.each(['error', 'silence'] as const)(
    '(%s) surfaces UNAVAILABLE; the retry with the same ids writes nothing more',
    async (mode) => {
      const stream = freshStream();
      const events = [contractEvent('b1'), contractEvent('b2')];
      double.faults.dropNextAppendReply(mode);
      const applied = double.faults.lostReplyApplied();
      await expectUnavailable(store.append(stream, events, 'no_stream'));
      await applied;
      const written = await store.readStream(stream);
      expect(labels(written)).toEqual(['@b1', '@b2']); // the write happened; only its reply was lost
      const retried = await store.append(stream, events, 'no_stream');
      expect(retried).toEqual({ nextExpectedRevision: 1n, position: written[1].position });
      expect(labels(await store.readStream(stream))).toEqual(['@b1', '@b2']);
    },
  );
});

describe('failures', () => {
  beforeEach(async () => {
    double = await EsdbDouble.start();
    store = EsdbEventStore.connect(fastFailing(double.url));
  });

  it("translates a wrong expected version on a missing stream to ConcurrencyConflict with actual 'no_stream'", async () => {
    // The client's default deadline: the translation is the subject, not the deadline. With fastFailing's 1 s, the first
    // call over a new gRPC channel once ran out of it in a loaded CI run (MailboxError UNAVAILABLE instead).
    await store.close();
    store = EsdbEventStore.connect(double.url);
    const stream = freshStream();
    const error = await store.append(stream, [contractEvent('x')], 3n).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConcurrencyConflict);
    expect(error).toMatchObject({ streamName: stream, expected: '3', actual: 'no_stream' });
  });

  it('a hung server (accepts calls, answers none): every operation fails with UNAVAILABLE at the deadline', async () => {
    const stream = freshStream();
    await store.append(stream, [contractEvent('a')], 'no_stream');
    double.faults.freeze();
    await expectUnavailable(store.append(stream, [contractEvent('b')], 0n));
    await expectUnavailable(store.readStream(stream));
    await expectUnavailable(store.readAll(null, 10));
    await expectUnavailable(store.headPosition());
    double.faults.thaw();
    expect(labels(await store.readStream(stream))).toEqual(['@a']); // the hung append never reached the log
  });

  it('after a server restart the first reads succeed: a read on the reset connection is tried once more', async () => {
    const stream = freshStream();
    await store.append(stream, [contractEvent('a')], 'no_stream');
    const subscription = store.subscribe(null); // a live call on the connection, as the projector has
    const iterator = subscription[Symbol.asyncIterator]();
    await iterator.next();
    await double.restart();
    expect(labels(await store.readStream(stream))).toEqual(['@a']);
    expect(labels(await store.readAll(null, 10))).toEqual(['@a']);
    await subscription.close();
  });

  it('a stopped server: appends and reads fail with UNAVAILABLE; they work again once it is back', async () => {
    const stream = freshStream();
    await store.append(stream, [contractEvent('a')], 'no_stream');
    await double.stop();
    await expectUnavailable(store.append(stream, [contractEvent('b')], 0n));
    await expectUnavailable(store.readStream(stream));
    await expectUnavailable(store.readAll(null, 10));
    await double.start();
    // The store's first call over the channel it opens again may take longer than its 1 s deadline on a loaded machine
    // (a CI run with four workers): reads, which change nothing, are retried until one is answered, then the append.
    const backBy = Date.now() + 30_000;
    while (
      !(await store.readStream(stream).then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > backBy) throw new Error('the store did not read again within 30 s of the server being back');
    }
    await store.append(stream, [contractEvent('b')], 0n);
    expect(labels(await store.readStream(stream))).toEqual(['@a', '@b']);
  });
});

describe('$all holds system events too', () => {
  beforeEach(async () => {
    double = await EsdbDouble.start();
    store = EsdbEventStore.connect(double.url, { readPageSize: 3 });
  });

  it('readAll, headPosition and subscribe see only mailbox events, paging past runs of system events', async () => {
    const stream = freshStream();
    double.log.writeSystem('$stats-127.0.0.1:2113', '$statsCollected', { cpu: 1 });
    await store.append(stream, [contractEvent('m1')], 'no_stream');
    for (let i = 0; i < 7; i++) double.log.writeSystem('$stats-127.0.0.1:2113', '$statsCollected', { cpu: i });
    await store.append(stream, [contractEvent('m2'), contractEvent('m3')], 0n);
    double.log.writeSystem(`$$${stream}`, '$metadata', { $maxAge: 60 });
    await store.append('not-mailbox-stream', [contractEvent('foreign')], 'no_stream');

    const all = await store.readAll(null, 100);
    expect(labels(all)).toEqual(['@m1', '@m2', '@m3']);
    expect(labels(await store.readAll(all[0].position, 1))).toEqual(['@m2']);
    expect(await store.readAll(all[2].position, 10)).toEqual([]);
    expect(await store.headPosition()).toBe(all[2].position);

    const subscription = store.subscribe(null);
    const seen: StoredEvent[] = [];
    for await (const event of subscription) if (seen.push(event) === 3) break;
    await subscription.close();
    expect(seen).toEqual(all);
    expect(double.subscriptionRequests.at(-1)).toMatchObject({
      target: '$all',
      from: 'start',
      filter: 'stream prefixes [mailbox-]',
    });
  });
});

describe('countEvents (the projection lag of /readyz, /metrics and the console)', () => {
  beforeEach(async () => {
    double = await EsdbDouble.start();
    store = EsdbEventStore.connect(double.url, { readPageSize: 3 });
  });

  it('counts the mailbox events between two positions, paging past system events: 7 events, not their ~5000 positions', async () => {
    const stream = freshStream();
    const head = await store.headPosition();
    for (let i = 0; i < 7; i++) {
      double.log.writeSystem('$stats-127.0.0.1:2113', '$statsCollected', { cpu: i });
      await store.append(stream, [contractEvent(`e${i}`)], i === 0 ? 'no_stream' : BigInt(i - 1));
    }
    const through = (await store.headPosition())!;
    expect(Number(through - (head ?? 0n))).toBeGreaterThan(1000); // positions are byte offsets: far from a count
    expect(await store.countEvents(head, through, 10_001)).toBe(7);
    expect(await store.countEvents(head, through, 4)).toBe(4); // bounded: reads no further than it counts
    const [, second, , fourth] = await store.readStream(stream);
    expect(await store.countEvents(second.position, fourth.position, 100)).toBe(2);
  });

  /** Events the double sent to forwards reads of $all since `mark` (what counting costs: the head is read backwards). */
  const sentSince = (mark: number) =>
    double.readsOfAll.slice(mark).reduce((sum, read) => sum + (read.direction === 'forwards' ? read.sent : 0), 0);
  /** The count a store that never counted before gives: what a remembered count must equal. */
  async function freshCount(after: bigint | null, through: bigint, atMost: number): Promise<number> {
    const fresh = EsdbEventStore.connect(double.url, { readPageSize: 3 });
    try {
      return await fresh.countEvents(after, through, atMost);
    } finally {
      await fresh.close();
    }
  }

  it('counting again reads only the events appended since (each /readyz read every event behind, every time)', async () => {
    const stream = freshStream();
    const start = await store.headPosition();
    const append = async (from: number, to: number) => {
      for (let i = from; i < to; i++) await store.append(stream, [contractEvent(`e${i}`)], i === 0 ? 'no_stream' : BigInt(i - 1));
      return (await store.headPosition())!;
    };
    const head = await append(0, 12);
    let mark = double.readsOfAll.length;
    expect(await store.countEvents(start, head, 10_001)).toBe(12);
    expect(sentSince(mark)).toBeGreaterThanOrEqual(12);

    mark = double.readsOfAll.length;
    expect(await store.countEvents(start, head, 10_001)).toBe(12); // nothing new: nothing read
    expect(sentSince(mark)).toBe(0);

    const later = await append(12, 14);
    mark = double.readsOfAll.length;
    expect(await store.countEvents(start, later, 10_001)).toBe(14);
    expect(sentSince(mark)).toBeLessThanOrEqual(3); // the two new ones (and the last one known, where the read starts)
    expect(await freshCount(start, later, 10_001)).toBe(14);

    // The views moved on (their checkpoint at the fifth event): what is remembered past it still counts, unread.
    const fifth = (await store.readStream(stream))[4].position;
    mark = double.readsOfAll.length;
    expect(await store.countEvents(fifth, later, 10_001)).toBe(9);
    expect(await store.countEvents(fifth, head, 10_001)).toBe(7); // a head read before the last appends
    expect(sentSince(mark)).toBe(0);
    expect(await freshCount(fifth, later, 10_001)).toBe(9);

    // The views went back (rebuilt from the start): what is remembered no longer reaches back, so all is read again.
    mark = double.readsOfAll.length;
    expect(await store.countEvents(start, later, 10_001)).toBe(14);
    expect(sentSince(mark)).toBeGreaterThanOrEqual(14);
  });

  it('a bounded count reads no further than its bound, and a larger bound later reads on: never less than there is', async () => {
    const stream = freshStream();
    const start = await store.headPosition();
    for (let i = 0; i < 10; i++) await store.append(stream, [contractEvent(`e${i}`)], i === 0 ? 'no_stream' : BigInt(i - 1));
    const head = (await store.headPosition())!;
    let mark = double.readsOfAll.length;
    expect(await freshCount(start, head, 10_001)).toBe(10);
    const unbounded = sentSince(mark);
    mark = double.readsOfAll.length;
    expect(await store.countEvents(start, head, 4)).toBe(4);
    expect(sentSince(mark)).toBeLessThan(unbounded - 4); // not the six events past the bound
    mark = double.readsOfAll.length;
    expect(await store.countEvents(start, head, 4)).toBe(4);
    expect(sentSince(mark)).toBe(0);
    expect(await store.countEvents(start, head, 10_001)).toBe(10);
  });

  it('the head is read in a small first page (it was a page of the full size), growing past system events', async () => {
    const big = EsdbEventStore.connect(double.url); // the default page size, 1000
    try {
      const stream = freshStream();
      for (let i = 0; i < 40; i++) await big.append(stream, [contractEvent(`e${i}`)], i === 0 ? 'no_stream' : BigInt(i - 1));
      const newest = (await big.readStream(stream))[39].position;
      const backwards = (mark: number) =>
        double.readsOfAll.slice(mark).reduce((sum, read) => sum + (read.direction === 'backwards' ? read.sent : 0), 0);
      let mark = double.readsOfAll.length;
      expect(await big.headPosition()).toBe(newest);
      expect(backwards(mark)).toBeLessThanOrEqual(8); // it sent all 40 (and 1000 on a longer log)
      for (let i = 0; i < 20; i++) double.log.writeSystem('$stats-127.0.0.1:2113', '$statsCollected', { cpu: i });
      mark = double.readsOfAll.length;
      expect(await big.headPosition()).toBe(newest); // past 20 system events: pages of 8, 16
      expect(backwards(mark)).toBeLessThanOrEqual(8 + 16);
    } finally {
      await big.close();
    }
  });

  it('counts asked side by side (a /readyz beside a /metrics scrape) each get the count a fresh read gives', async () => {
    const stream = freshStream();
    const start = await store.headPosition();
    for (let i = 0; i < 9; i++) await store.append(stream, [contractEvent(`e${i}`)], i === 0 ? 'no_stream' : BigInt(i - 1));
    const head = (await store.headPosition())!;
    const third = (await store.readStream(stream))[2].position;
    const counts = await Promise.all([
      store.countEvents(start, head, 10_001),
      store.countEvents(third, head, 10_001),
      store.countEvents(start, third, 10_001),
      store.countEvents(start, head, 5),
    ]);
    expect(counts).toEqual([9, 6, 3, 5]);
  });
});

describe('subscription drops', () => {
  /** The subscription's warnings: a drop it noticed is logged before it retries (the signal a test waits for). */
  let drops = 0;
  const logger = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        if (line.includes('subscription dropped')) drops++;
      },
    },
  );
  const dropNoticed = async (timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (drops === 0) {
      if (Date.now() > deadline) throw new Error(`the subscription did not notice the outage within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const connect = (attempts: number, backoffMs: number) =>
    EsdbEventStore.connect(`${double.url}&defaultDeadline=1000`, {
      resubscribe: { attempts, initialBackoffMs: backoffMs, maxBackoffMs: backoffMs * 5 },
      logger,
    });

  beforeEach(async () => {
    double = await EsdbDouble.start();
    drops = 0;
  });

  it('resubscribes from the last delivered position after a server restart: every event once, in order', async () => {
    store = connect(20, 20);
    const stream = freshStream();
    await store.append(stream, [contractEvent('1'), contractEvent('2')], 'no_stream');
    const subscription = store.subscribe(null);
    const iterator = subscription[Symbol.asyncIterator]();
    const first = [(await iterator.next()).value, (await iterator.next()).value] as StoredEvent[];
    await double.stop();
    const resumed = iterator.next(); // waits through the outage
    await dropNoticed();
    await double.start();
    // The client's first call after the restart may fail on its dead channel (UNAVAILABLE); callers retry with
    // the same event ids, as the command handler does. This test is about the subscription, so retry likewise.
    const third3 = [contractEvent('3')];
    await store.append(stream, third3, 1n).catch(() => store.append(stream, third3, 1n));
    const third = (await resumed).value as StoredEvent;
    await subscription.close();
    expect(labels([...first, third])).toEqual(['@1', '@2', '@3']);
    const resubscriptions = double.subscriptionRequests.slice(1);
    expect(resubscriptions.length).toBeGreaterThanOrEqual(1);
    expect(resubscriptions.at(-1)).toMatchObject({ target: '$all', from: first[1].position });
  });

  it('gives up after the configured attempts with UNAVAILABLE, so the caller can resume from its own checkpoint', async () => {
    store = connect(2, 10);
    await double.stop();
    const subscription = store.subscribe(null);
    await expectUnavailable(
      (async () => {
        for await (const event of subscription) void event;
      })(),
    );
    expect(double.subscriptionRequests).toEqual([]);
  });
});

describe('connection strings', () => {
  beforeEach(async () => {
    double = await EsdbDouble.start();
  });

  it('accepts the kurrentdb:// scheme with the 6.x client (rewritten to esdb://)', async () => {
    store = EsdbEventStore.connect(double.url.replace('esdb://', 'kurrentdb://'));
    const stream = freshStream();
    await store.append(stream, [contractEvent('k')], 'no_stream');
    expect(labels(await store.readStream(stream))).toEqual(['@k']);
  });

  it('rejects a defaultDeadline that is not a positive number of milliseconds', () => {
    expect(() => EsdbEventStore.connect(`${double.url}&defaultDeadline=soon`)).toThrow(
      expect.objectContaining({
        envelope: expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'MAILBOX_EVENTSTORE_URL' }),
      }),
    );
  });

  it("appends under the caller's event ids (deterministic ids are what make a retry de-duplicable)", async () => {
    store = EsdbEventStore.connect(double.url);
    const stream = freshStream();
    const event = contractEvent('id');
    await store.append(stream, [event], 'no_stream');
    expect(double.log.records.at(-1)).toMatchObject({ id: event.eventId, streamName: stream, type: event.type });
  });
});

describe('an empty append', () => {
  beforeEach(async () => {
    double = await EsdbDouble.start();
    store = EsdbEventStore.connect(double.url);
  });

  it('only checks the expected revision: writes nothing, reports the head, and still refuses a wrong revision', async () => {
    const stream = freshStream();
    await store.append(stream, [contractEvent('a')], 'no_stream');
    const head = await store.headPosition();
    const before = double.log.records.length;
    expect(await store.append(stream, [], 0n)).toEqual({ nextExpectedRevision: 0n, position: head });
    await expect(store.append(stream, [], 3n)).rejects.toBeInstanceOf(ConcurrencyConflict);
    expect(double.log.records.length).toBe(before);
  });
});
