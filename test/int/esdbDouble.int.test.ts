/**
 * The test double's own tests: each behaviour it claims to emulate, checked
 * through the real @eventstore/db-client over gRPC on loopback (see
 * test/support/esdbDouble/README.md).
 */
import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  excludeSystemEvents,
  jsonEvent,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type Position,
} from '@eventstore/db-client';
import { EsdbDouble, type EsdbDoubleOptions } from '../support/esdbDouble/esdbDouble';

const event = (label: string, id: string = randomUUID()) => jsonEvent({ id, type: 'Tested', data: { label } });
const labels = (events: Array<{ event?: { data: unknown } }>) => events.map((e) => (e.event!.data as { label: string }).label);

async function drain<E>(read: AsyncIterable<E>): Promise<E[]> {
  const out: E[] = [];
  for await (const item of read) out.push(item);
  return out;
}

let double: EsdbDouble;
let client: EventStoreDBClient;

async function boot(options: EsdbDoubleOptions = {}) {
  double = await EsdbDouble.start(options);
  client = EventStoreDBClient.connectionString(double.url);
}

afterEach(async () => {
  await client?.dispose();
  await double?.close();
});

describe.each([
  ['BatchAppend (21+)', {}, 'BatchAppend'],
  ['Append (20.x, ServerFeatures UNIMPLEMENTED)', { serverFeatures: false, batchAppend: false }, 'Append'],
] as const)('appends through %s', (_name, options, method) => {
  beforeEach(() => boot(options));

  it('numbers a new stream from 0 and reports the last event position (commit) and the first (prepare)', async () => {
    const result = await client.appendToStream('orders-1', [event('a'), event('b')], { expectedRevision: NO_STREAM });
    expect(double.calls[method]).toBe(1);
    const stored = await drain(client.readStream('orders-1'));
    expect(stored.map((e) => e.event!.revision)).toEqual([0n, 1n]);
    expect(result.nextExpectedRevision).toBe(1n);
    expect(result.position).toEqual({ commit: stored[1].event!.position!.commit, prepare: stored[0].event!.position!.commit });
    // positions are byte offsets: increasing, commit == prepare per event, not consecutive
    const [first, second] = stored.map((e) => e.event!.position!);
    expect(first.commit).toBe(first.prepare);
    expect(second.commit - first.commit > 1n).toBe(true);
  });

  it('answers a wrong expected revision with WrongExpectedVersionError (actual no_stream when missing) and writes nothing', async () => {
    await expect(client.appendToStream('missing', event('x'), { expectedRevision: 0n })).rejects.toMatchObject({
      constructor: WrongExpectedVersionError,
      expectedVersion: 0n,
      actualVersion: 'no_stream',
    });
    await client.appendToStream('s', event('a'), { expectedRevision: NO_STREAM });
    await expect(client.appendToStream('s', event('b'), { expectedRevision: NO_STREAM })).rejects.toMatchObject({
      constructor: WrongExpectedVersionError,
      expectedVersion: 'no_stream',
      actualVersion: 0n,
    });
    await expect(client.appendToStream('s', event('c'), { expectedRevision: 5n })).rejects.toMatchObject({
      constructor: WrongExpectedVersionError,
      expectedVersion: 5n,
      actualVersion: 0n,
    });
    expect(labels(await drain(client.readStream('s')))).toEqual(['a']);
  });

  it('de-duplicates a repeated append by event ids: success, no position, one copy', async () => {
    const events = [event('a'), event('b')];
    await client.appendToStream('d', events, { expectedRevision: NO_STREAM });
    const before = double.log.records.length;
    const repeat = await client.appendToStream('d', events, { expectedRevision: NO_STREAM });
    expect(repeat).toMatchObject({ success: true, nextExpectedRevision: 1n, position: undefined });
    expect(double.log.records.length).toBe(before);
    // a partial match is not a repeat: the revision check applies
    await expect(client.appendToStream('d', [events[0], event('new')], { expectedRevision: NO_STREAM })).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
    expect(labels(await drain(client.readStream('d')))).toEqual(['a', 'b']);
  });

  it('applies a write whose reply is lost (error), so the retry with the same ids is a de-duplicated success', async () => {
    const events = [event('once')];
    double.faults.dropNextAppendReply('error');
    await expect(client.appendToStream('lost', events, { expectedRevision: NO_STREAM })).rejects.toMatchObject({
      type: 'unavailable',
    });
    expect(labels(await drain(client.readStream('lost')))).toEqual(['once']);
    const retry = await client.appendToStream('lost', events, { expectedRevision: NO_STREAM });
    expect(retry.nextExpectedRevision).toBe(0n);
    expect(labels(await drain(client.readStream('lost')))).toEqual(['once']);
  });
});

describe('a lost append reply (silence)', () => {
  beforeEach(() => boot({ serverFeatures: false, batchAppend: false }));

  it('writes, never answers, and the client gives up at its deadline', async () => {
    double.faults.dropNextAppendReply('silence');
    await expect(client.appendToStream('hung', event('x'), { expectedRevision: NO_STREAM, deadline: 200 })).rejects.toMatchObject(
      { type: 'deadline-exceeded' },
    );
    expect(labels(await drain(client.readStream('hung')))).toEqual(['x']);
  });
});

describe('reads', () => {
  beforeEach(async () => {
    await boot();
    await client.appendToStream(
      'r',
      ['0', '1', '2', '3'].map((l) => event(l)),
      { expectedRevision: NO_STREAM },
    );
    await client.appendToStream('other', event('o'), { expectedRevision: NO_STREAM });
  });

  it('reads a stream forwards and backwards, from a revision (inclusive), with a count', async () => {
    expect(labels(await drain(client.readStream('r', { fromRevision: 1n, maxCount: 2 })))).toEqual(['1', '2']);
    expect(labels(await drain(client.readStream('r', { direction: BACKWARDS, fromRevision: END })))).toEqual([
      '3',
      '2',
      '1',
      '0',
    ]);
    expect(labels(await drain(client.readStream('r', { direction: BACKWARDS, fromRevision: 2n, maxCount: 2 })))).toEqual([
      '2',
      '1',
    ]);
  });

  it('reports a missing stream as StreamNotFoundError', async () => {
    await expect(drain(client.readStream('nope'))).rejects.toBeInstanceOf(StreamNotFoundError);
  });

  it('reads $all with the startup system events first, forwards (inclusive) and backwards (exclusive) from a position', async () => {
    const all = await drain(client.readAll());
    expect(all.map((e) => e.event!.streamId)).toEqual(['$settings', '$$$stats-127.0.0.1:2113', 'r', 'r', 'r', 'r', 'other']);
    const at = all[3].event!.position!;
    expect(labels(await drain(client.readAll({ fromPosition: at, maxCount: 2 })))).toEqual(['1', '2']);
    expect(labels(await drain(client.readAll({ fromPosition: at, direction: BACKWARDS, maxCount: 1 })))).toEqual(['0']);
    expect(labels(await drain(client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 2 })))).toEqual(['o', '3']);
  });
});

describe('subscriptions', () => {
  beforeEach(() => boot());

  /** Collects `count` events of a subscription, noting caughtUp (as '|') and checkpoints where they arrive. */
  async function follow(
    subscription: AsyncIterable<AllStreamResolvedEvent> & { on(e: string, f: () => void): unknown; unsubscribe(): Promise<void> },
    count: number,
    trace: string[],
    whenCaughtUp?: () => Promise<unknown>,
  ) {
    subscription.on('caughtUp', () => {
      trace.push('|');
      void whenCaughtUp?.();
    });
    for await (const resolved of subscription) {
      trace.push((resolved.event!.data as { label?: string }).label ?? resolved.event!.type);
      if (trace.filter((t) => t !== '|').length >= count) break;
    }
    await subscription.unsubscribe();
  }

  it('catches up on $all after a position (exclusive) with a stream prefix filter, signals caughtUp, then goes live', async () => {
    await client.appendToStream('mailbox-1', [event('a'), event('b')], { expectedRevision: NO_STREAM });
    await client.appendToStream('elsewhere', event('skip'), { expectedRevision: NO_STREAM });
    const [first] = await drain(client.readStream('mailbox-1'));
    const trace: string[] = [];
    await follow(
      client.subscribeToAll({ fromPosition: first.event!.position!, filter: streamNameFilter({ prefixes: ['mailbox-'] }) }),
      2,
      trace,
      () => client.appendToStream('mailbox-1', event('live'), { expectedRevision: 1n }),
    );
    expect(trace).toEqual(['b', '|', 'live']);
    expect(double.subscriptionRequests.at(-1)).toEqual({
      target: '$all',
      from: first.event!.position!.commit,
      filter: 'stream prefixes [mailbox-]',
    });
  });

  it('filters on event type (excludeSystemEvents) and sends checkpoints past filtered-out events', async () => {
    for (let i = 0; i < 5; i++) await client.appendToStream(`s-${i}`, event(`e${i}`), { expectedRevision: NO_STREAM });
    const checkpoints: Position[] = [];
    const trace: string[] = [];
    const filter = excludeSystemEvents({
      maxSearchWindow: 2,
      checkpointInterval: 1,
      checkpointReached: (_s, p) => void checkpoints.push(p),
    });
    await follow(client.subscribeToAll({ fromPosition: START, filter }), 5, trace);
    expect(trace).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']); // the two startup system events are filtered out
    const last = double.log.records;
    // 7 events considered with a window of 2: checkpoints after the 2nd, 4th and 6th
    expect(checkpoints.map((p) => p.commit)).toEqual([last[1].position, last[3].position, last[5].position]);
  });

  it("the right to read $all taken away (faults.denyReadsOfAll): a live $all subscription ends with access denied, a stream's goes on", async () => {
    await client.appendToStream('mailbox-1', event('a'), { expectedRevision: NO_STREAM });
    const all = client.subscribeToAll({ fromPosition: START, filter: streamNameFilter({ prefixes: ['mailbox-'] }) });
    const one = client.subscribeToStream('mailbox-1', { fromRevision: START });
    const heard: string[] = [];
    const ended = (async () => {
      try {
        for await (const resolved of all) heard.push((resolved.event!.data as { label: string }).label);
        return null;
      } catch (error) {
        return error;
      }
    })();
    const caughtUp = new Promise<void>((resolve) => all.on('caughtUp', () => resolve()));
    await caughtUp;
    double.faults.denyReadsOfAll();
    const error = (await ended) as { type?: string; code?: number };
    expect(error).toMatchObject({ type: 'access-denied', code: 7 }); // PERMISSION_DENIED, as the node ends it
    expect(heard).toEqual(['a']);
    // A new $all subscription is refused the same way; the stream's, and writes, go on.
    await expect(drain(client.subscribeToAll({ fromPosition: START }))).rejects.toMatchObject({ type: 'access-denied' });
    await client.appendToStream('mailbox-1', event('b'), { expectedRevision: 0n });
    const onStream: string[] = [];
    for await (const resolved of one) {
      onStream.push((resolved.event!.data as { label: string }).label);
      if (onStream.length === 2) break;
    }
    await one.unsubscribe();
    expect(onStream).toEqual(['a', 'b']);
  });

  it('subscribes to one stream after a revision', async () => {
    await client.appendToStream('one', [event('0'), event('1')], { expectedRevision: NO_STREAM });
    const trace: string[] = [];
    await follow(client.subscribeToStream('one', { fromRevision: 0n }) as never, 2, trace, () =>
      client.appendToStream('one', event('2'), { expectedRevision: 1n }),
    );
    expect(trace).toEqual(['1', '|', '2']);
  });
});

describe('deletes', () => {
  beforeEach(() => boot());

  it('soft delete hides the stream, records $metadata in $$stream, and a later append continues the revisions', async () => {
    await client.appendToStream('soft', [event('a'), event('b')], { expectedRevision: NO_STREAM });
    await client.deleteStream('soft', { expectedRevision: 1n });
    await expect(drain(client.readStream('soft'))).rejects.toBeInstanceOf(StreamNotFoundError);
    expect(double.log.records.at(-1)).toMatchObject({ streamName: '$$soft', type: '$metadata' });
    await client.appendToStream('soft', event('c'), { expectedRevision: NO_STREAM });
    expect(
      (await drain(client.readStream('soft'))).map((e) => [e.event!.revision, (e.event!.data as { label: string }).label]),
    ).toEqual([[2n, 'c']]);
  });

  it("soft delete as the server writes it ($tb = long.MaxValue); a write expecting the last revision undeletes the stream from there ($tb = that write's revision); one expecting it to exist is refused", async () => {
    const metadataOf = (stream: string) =>
      Buffer.from(double.log.records.filter((r) => r.streamName === `$$${stream}`).at(-1)!.data).toString('utf8');
    await client.appendToStream('soft2', [event('a'), event('b')], { expectedRevision: NO_STREAM });
    await client.deleteStream('soft2', { expectedRevision: 1n });
    expect(metadataOf('soft2')).toBe('{"$tb":9223372036854775807}');
    await expect(client.appendToStream('soft2', event('x'), { expectedRevision: STREAM_EXISTS })).rejects.toBeInstanceOf(
      StreamDeletedError,
    );
    // The revision check still sees the hidden events: the last revision is taken, as the server's commit check does.
    const written = await client.appendToStream('soft2', event('c'), { expectedRevision: 1n });
    expect(written.nextExpectedRevision).toBe(2n);
    expect(labels(await drain(client.readStream('soft2')))).toEqual(['c']);
    expect(metadataOf('soft2')).toBe('{"$tb":2}');
    // Undeleted: an ordinary stream again, at revision 2.
    await expect(client.appendToStream('soft2', event('d'), { expectedRevision: NO_STREAM })).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
  });

  it('tombstone makes reads and appends fail with StreamDeletedError; a stale delete is a wrong expected version', async () => {
    await client.appendToStream('hard', event('a'), { expectedRevision: NO_STREAM });
    await expect(client.deleteStream('hard', { expectedRevision: 7n })).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await client.tombstoneStream('hard');
    await expect(drain(client.readStream('hard'))).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(client.appendToStream('hard', event('b'))).rejects.toBeInstanceOf(StreamDeletedError);
    expect(double.log.records.at(-1)).toMatchObject({ streamName: 'hard', type: '$streamDeleted' });
  });
});

describe('stop and start', () => {
  beforeEach(() => boot());

  it('keeps its data and port across a restart; a subscription breaks on stop and the client reconnects afterwards', async () => {
    await client.appendToStream('kept', event('before'), { expectedRevision: NO_STREAM });
    const subscription = client.subscribeToAll({ fromPosition: END });
    const broken = new Promise((resolve) => subscription.on('error', resolve));
    await new Promise((resolve) => subscription.on('confirmation', resolve));
    const port = double.port;
    await double.stop();
    expect(await broken).toMatchObject({ type: expect.stringMatching(/unavailable|cancelled/) });
    await expect(client.appendToStream('kept', event('down'), { expectedRevision: 0n })).rejects.toThrow(/UNAVAILABLE/);
    await double.start();
    expect(double.port).toBe(port);
    await client.appendToStream('kept', event('after'), { expectedRevision: 0n });
    expect(labels(await drain(client.readStream('kept')))).toEqual(['before', 'after']);
  });
});
