/**
 * The wake recorder keeps the first wake per (message, recipient) in memory so as not to append it twice (issue 15:
 * nothing that grows with the messages a process sees stays in memory): at most `remembered` pairs, then the memory
 * starts afresh. A repeat past the bound costs one more WakeObserved, and the delivery ledger still says each
 * recipient was woken when it first was. Also how the recorder and the seen marks tell a store that does not answer from
 * one that answers refusing their stream.
 */
import pino from 'pino';
import { WakeRecorder, type WakeRecorderOptions } from '../../src/application/wakeRecorder';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, allEvents, registerAgents } from '../support/fixtures';
import { waitFor } from '../support/waitFor';
import { recordingLogger } from '../support/recordingLogger';
import { DELIVERY_STREAM, seenStream } from '../../src/events/streams';
import { SeenMarks } from '../../src/application/seenMarks';
import type { MailboxConfig } from '../../src/config';
import { randomUUID } from 'node:crypto';
import { operatorNeeded, unavailable } from '../../src/errors';
import { REFUSED_RETRY_MS } from '../../src/application/refusedStreams';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
let mailbox: Mailbox | undefined;
let stopRecorder: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopRecorder?.();
  stopRecorder = undefined;
  await mailbox?.close();
  mailbox = undefined;
});

/** A mailbox on `clock` (closed after the test) where @s sent one message to @a, @b and @c; the log as it then is. */
async function messageForThree(clock: { now: () => Date }) {
  const own = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }), clock },
  );
  mailbox = own;
  const { '@s': s } = await registerAgents(own, ['@s', '@a', '@b', '@c']);
  const { messageId } = await s.send({ to: ['@a', '@b', '@c'], subject: 'for three', body: 'x' });
  return { own, messageId, before: await allEvents(own) };
}

/**
 * `own`'s event store as the test sets it (`mode`): not answering, as the EventStoreDB client says of a stopped node;
 * answering and refusing `refused` as it does a stream deleted under the mailbox; or taking every append.
 */
function downThenRefusing(own: Mailbox, refused: string) {
  const store = {
    mode: 'down' as 'down' | 'refusing' | 'taking',
    wrapped: Object.create(own.eventStore) as Mailbox['eventStore'],
  };
  store.wrapped.append = (stream, events, expected) => {
    if (store.mode === 'down')
      return Promise.reject(unavailable('The event store', new Error('14 UNAVAILABLE: connect ECONNREFUSED 127.0.0.1:2113')));
    if (store.mode === 'refusing' && stream === refused)
      return Promise.reject(
        operatorNeeded(`The event store holds ${stream} deleted`, 'restore the event log from a backup', { stream }),
      );
    return own.eventStore.append(stream, events, expected);
  };
  return store;
}

/**
 * Flushes with the store not answering (T0, T0 + 1 s), then refusing (T0 + 3 s, T0 + 63 s: nothing written meanwhile, the
 * `written` check), then taking appends (at `takenAt`).
 */
async function downRefusedTaken(
  store: ReturnType<typeof downThenRefusing>,
  setNow: (ms: number) => void,
  flush: () => Promise<unknown>,
  takenAt: number,
): Promise<void> {
  const appends: string[] = [];
  const append = store.wrapped.append;
  store.wrapped.append = (stream, events, expected) =>
    append(stream, events, expected).then((result) => (appends.push(stream), result));
  for (const [at, mode] of [
    [T0, 'down'],
    [T0 + 1_000, 'down'],
    [T0 + 3_000, 'refusing'],
    [T0 + 63_000, 'refusing'],
  ] as const) {
    store.mode = mode;
    setNow(at);
    await flush();
  }
  expect(appends).toEqual([]); // nothing written while down or refused
  store.mode = 'taking';
  setNow(takenAt);
  await flush();
}

test('at most `remembered` pairs are kept; a repeat past the bound is one more event and the ledger keeps the first wake', async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }), clock },
  );
  const own = mailbox;
  const { '@s': s } = await registerAgents(own, ['@s', '@a', '@b', '@c']);
  const { messageId } = await s.send({ to: ['@a', '@b', '@c'], subject: 'for three', body: 'x' });
  const observed = async () =>
    (await allEvents(own))
      .filter((event) => event.type === 'WakeObserved')
      .map((event) => (event.data as { recipient: string }).recipient);
  const before = await observed();
  const recorder = new WakeRecorder(own.eventStore, clock, pino({ level: 'silent' }), { actor: 'system:test', remembered: 2 });

  // Within the bound: each pair once, however often observed.
  now = T0 + 1000;
  for (const recipient of ['@a', '@b', '@a', '@b']) recorder.observed(messageId, recipient, 'stream');
  await recorder.flush();
  expect(recorder.appended).toBe(2);
  // A third pair: the memory holds two, so it starts afresh with this one.
  now = T0 + 2000;
  recorder.observed(messageId, '@c', 'stream');
  recorder.observed(messageId, '@c', 'stream');
  // @a again, forgotten: appended once more (and then remembered).
  now = T0 + 3000;
  recorder.observed(messageId, '@a', 'stream');
  recorder.observed(messageId, '@a', 'stream');
  await recorder.close();
  expect(recorder.appended).toBe(4);
  expect((await observed()).slice(before.length)).toEqual(['@a', '@b', '@c', '@a']);

  // The ledger keeps each recipient's first wake.
  const woken = async () =>
    (await own.projections.deliveryLedger(messageId, { after: null, limit: 10 }))!.rows.map((row) => [row.recipient, row.woken]);
  await waitFor(async () => (await woken()).every(([, wake]) => wake !== null), { what: 'three recipients woken in the ledger' });
  expect(await woken()).toEqual([
    ['@a', { at: new Date(T0 + 1000).toISOString(), via: 'stream' }],
    ['@b', { at: new Date(T0 + 1000).toISOString(), via: 'stream' }],
    ['@c', { at: new Date(T0 + 2000).toISOString(), via: 'stream' }],
  ]);
});

test('a full queue (the ledger stream refused): the observations dropped are counted and said once, naming the stream and the remedy; taken again, the kept ones are written', async () => {
  const clock = { now: () => new Date(T0) };
  const { own, messageId, before } = await messageForThree(clock);
  // The store refuses the delivery stream as EventStoreDB does one deleted under the mailbox.
  let refusing = true;
  const store = Object.create(own.eventStore) as typeof own.eventStore;
  store.append = (stream, events, expected) =>
    refusing && stream === DELIVERY_STREAM
      ? Promise.reject(
          operatorNeeded(`The event store holds ${stream} deleted`, 'restore the event log from a backup', { stream }),
        )
      : own.eventStore.append(stream, events, expected);
  const log = recordingLogger();
  const recorder = new WakeRecorder(store, clock, log.logger, { actor: 'system:test', maxQueued: 2 });

  recorder.observed(messageId, '@a', 'stream');
  recorder.observed(messageId, '@b', 'stream');
  await recorder.flush(); // refused: both kept
  recorder.observed(messageId, '@c', 'stream'); // the queue is full: dropped
  recorder.observed('another', '@c', 'stream');
  expect(recorder.dropped).toBe(2);
  expect(recorder.refusal()).toMatchObject({
    writer: 'delivery ledger',
    stream: DELIVERY_STREAM,
    operatorAction: 'restore the event log from a backup',
    waiting: 2,
    dropped: 2,
  });
  expect(log.lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([
    `could not record observed wakes (the delivery ledger): The event store holds ${DELIVERY_STREAM} deleted An operator ` +
      "must act: restore the event log from a backup The observations are kept (up to the queue's bound), nothing written.",
    'could not record observed wakes (the delivery ledger): 2 wait to be written, as many as are kept, and the store ' +
      `refuses ${DELIVERY_STREAM} (an operator must act: restore the event log from a backup); new ones are not ` +
      'recorded (the ledger will show those wakes as not woken)',
  ]);
  expect(await allEvents(own)).toEqual(before);

  refusing = false;
  await recorder.close();
  expect(recorder.refusal()).toBeNull();
  const added = (await allEvents(own)).slice(before.length);
  expect(added.map((event) => (event.data as { recipient: string }).recipient)).toEqual(['@a', '@b']);
  expect(log.lines.at(-1)).toMatchObject({
    level: 30,
    msg: `observed wakes (the delivery ledger): ${DELIVERY_STREAM} takes them again; the observations kept are written`,
    dropped: 2,
  });
});

/**
 * A recorder on a mailbox whose store refuses the delivery stream (from the start; `store.mode` changes it), on a clock
 * the test moves (`time.now`); stopped after the test with the stream taking again.
 */
async function refusedLedger(options: Omit<WakeRecorderOptions, 'actor'>, logger = pino({ level: 'silent' })) {
  const time = { now: T0 };
  const clock = { now: () => new Date(time.now) };
  const { own, messageId, before } = await messageForThree(clock);
  const store = downThenRefusing(own, DELIVERY_STREAM);
  store.mode = 'refusing';
  const recorder = new WakeRecorder(store.wrapped, clock, logger, { actor: 'system:test', ...options });
  stopRecorder = async () => {
    store.mode = 'taking';
    await recorder.close();
  };
  return { time, own, messageId, before, store, recorder };
}

// The refusal's `dropped` (the heartbeat's wakes_refused alarm) counted only the drops after a flush had seen the refusal:
// observations dropped before it, while the stream took nothing all the same, were missing from it.
test('the refusal counts every observation dropped since the stream last took one, those dropped before the refusal was seen included', async () => {
  const log = recordingLogger();
  // Flushed by the test alone (no timer's flush between its steps).
  const { time, own, messageId, before, store, recorder } = await refusedLedger({ maxQueued: 1, flushMs: 600_000 }, log.logger);
  for (const recipient of ['@a', '@b', '@c']) recorder.observed(messageId, recipient, 'stream'); // @b and @c dropped
  expect(recorder.dropped).toBe(2);
  await recorder.flush(); // the refusal, seen now
  expect(recorder.refusal()).toMatchObject({ stream: DELIVERY_STREAM, waiting: 1, dropped: 2 });
  recorder.observed('another', '@a', 'stream'); // dropped after it was seen
  expect(recorder.refusal()).toMatchObject({ waiting: 1, dropped: 3 });

  // Taken again: said with every drop; a later refusal counts from there.
  store.mode = 'taking';
  time.now += REFUSED_RETRY_MS;
  await recorder.flush();
  expect(recorder.refusal()).toBeNull();
  expect(log.lines.at(-1)).toMatchObject({
    msg: `observed wakes (the delivery ledger): ${DELIVERY_STREAM} takes them again; the observations kept are written`,
    dropped: 3,
  });
  store.mode = 'refusing';
  recorder.observed('later', '@a', 'stream');
  recorder.observed('later', '@b', 'stream'); // dropped
  await recorder.flush();
  expect(recorder.refusal()).toMatchObject({ waiting: 1, dropped: 1 });
  expect(recorder.dropped).toBe(4);
  expect((await allEvents(own)).slice(before.length).map((event) => (event.data as { recipient: string }).recipient)).toEqual([
    '@a',
  ]);
});

// The ledger's writer waited a real 5 s timer for a refused stream (the seen marks the injected clock): a clock moved on
// did not bring the retry, and a flush before it was due appended again.
test('a refused ledger stream is tried again once REFUSED_RETRY_MS of the injected clock has passed since its last try, not before', async () => {
  const { time, own, messageId, before, store, recorder } = await refusedLedger({ flushMs: 5 });
  const tries: number[] = [];
  const append = store.wrapped.append;
  store.wrapped.append = (stream, events, expected) => {
    if (stream === DELIVERY_STREAM) tries.push(time.now);
    return append(stream, events, expected);
  };
  // The recorder's own flushes (its timer), counted: each one looks at the clock.
  let flushes = 0;
  const flush = recorder.flush.bind(recorder);
  recorder.flush = () => ((flushes += 1), flush());
  for (const recipient of ['@a', '@b', '@c']) recorder.observed(messageId, recipient, 'stream');
  await waitFor(() => tries.length === 1, { what: 'the first try, refused', timeoutMs: 30_000 });
  expect(recorder.refusal()).toMatchObject({ stream: DELIVERY_STREAM, waiting: 3 });

  // Mended, but not yet REFUSED_RETRY_MS after the try by the clock: the timer's flushes do not try it.
  store.mode = 'taking';
  time.now = T0 + REFUSED_RETRY_MS - 1;
  const seen = flushes;
  await waitFor(() => flushes >= seen + 5, { what: 'five more flushes by the timer', timeoutMs: 30_000 });
  await recorder.flush();
  expect(tries).toEqual([T0]);
  expect(recorder.appended).toBe(0);

  // The clock reaches it: the next flush of the timer tries it, and the observations are written.
  time.now = T0 + REFUSED_RETRY_MS;
  await waitFor(() => recorder.appended === 3, { what: 'the kept observations written', timeoutMs: 30_000 });
  expect(tries).toEqual([T0, T0 + REFUSED_RETRY_MS]);
  expect(recorder.refusal()).toBeNull();
  const added = (await allEvents(own)).slice(before.length);
  expect(added.map((event) => (event.data as { recipient: string }).recipient)).toEqual(['@a', '@b', '@c']);
});

test('the event store down under the recorder: said once at warn, the retries at debug, one line when it answers again; the observations kept are written', async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  const { own, messageId, before } = await messageForThree(clock);
  // The store does not answer, as the EventStoreDB client says of a node stopped: each batch retried at its interval.
  let down = true;
  let failures = 0;
  const store = Object.create(own.eventStore) as typeof own.eventStore;
  store.append = (stream, events, expected) => {
    if (!down) return own.eventStore.append(stream, events, expected);
    failures += 1;
    now += 100;
    return Promise.reject(unavailable('The event store', new Error('14 UNAVAILABLE: connect ECONNREFUSED 127.0.0.1:2113')));
  };
  const log = recordingLogger('debug');
  const recorder = new WakeRecorder(store, clock, log.logger, { actor: 'system:test', flushMs: 5 });

  // Whatever the test finds, the recorder stops retrying with it.
  stopRecorder = async () => {
    down = false;
    await recorder.close();
  };
  for (const recipient of ['@a', '@b', '@c']) recorder.observed(messageId, recipient, 'stream');
  await waitFor(() => failures >= 20, { what: 'twenty failed batches', timeoutMs: 30_000 });
  expect(log.warnings()).toEqual([
    'observed wakes (the delivery ledger): the event store does not answer; the observations are kept and written once it does',
  ]);
  expect(log.lines.filter((line) => line.level >= 40)).toHaveLength(1);
  expect(
    log.lines.filter((line) => line.msg === 'observed wakes (the delivery ledger): the event store still does not answer').length,
  ).toBeGreaterThanOrEqual(19);
  expect(await allEvents(own)).toEqual(before);

  down = false;
  await waitFor(() => recorder.appended === 3, { what: 'the kept observations written', timeoutMs: 30_000 });
  await recorder.close();
  const added = (await allEvents(own)).slice(before.length);
  expect(added.map((event) => (event.data as { recipient: string }).recipient)).toEqual(['@a', '@b', '@c']);
  const back = log.lines.filter((line) => line.level === 30);
  expect(back).toHaveLength(1);
  expect(back[0]).toMatchObject({
    msg: 'observed wakes (the delivery ledger): the event store answers again; the observations kept are written',
    retries: failures,
    downMs: (failures - 1) * 100,
  });
  expect(log.lines.filter((line) => line.level >= 40)).toHaveLength(1);
});

test("the event store down, then answering with the ledger's stream refused, then taking it: downMs counts only the time it did not answer", async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  const { own, messageId, before } = await messageForThree(clock);
  const store = downThenRefusing(own, DELIVERY_STREAM);
  const log = recordingLogger('debug');
  // Flushed by the test alone (no timer's flush between its steps).
  const recorder = new WakeRecorder(store.wrapped, clock, log.logger, { actor: 'system:test', flushMs: 600_000 });
  stopRecorder = async () => {
    store.mode = 'taking';
    await recorder.close();
  };
  for (const recipient of ['@a', '@b', '@c']) recorder.observed(messageId, recipient, 'stream');

  await downRefusedTaken(
    store,
    (ms) => (now = ms),
    () => recorder.flush(),
    T0 + 68_000,
  ); // 5 s after its last try
  expect((await allEvents(own)).slice(0, before.length)).toEqual(before);
  expect(recorder.appended).toBe(3);
  expect((await allEvents(own)).slice(before.length).map((event) => (event.data as { recipient: string }).recipient)).toEqual([
    '@a',
    '@b',
    '@c',
  ]);

  // The store answered at T0 + 3 s: its outage said then, 3 s long; the refusal's minute is the refusal's own line.
  expect(
    log.lines
      .filter((line) => line.level === 30)
      .map(({ msg, downMs, retries, refusedSince }) => ({ msg, downMs, retries, refusedSince })),
  ).toEqual([
    {
      msg: `observed wakes (the delivery ledger): the event store answers again and refuses ${DELIVERY_STREAM}; the observations are kept`,
      downMs: 3_000,
      retries: 2,
      refusedSince: undefined,
    },
    {
      msg: `observed wakes (the delivery ledger): ${DELIVERY_STREAM} takes them again; the observations kept are written`,
      downMs: undefined,
      retries: undefined,
      refusedSince: new Date(T0 + 3_000).toISOString(),
    },
  ]);
});

test("seen marks: the event store down, then refusing @b's seen stream, then taking it: downMs counts only the time it did not answer", async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  const { own, messageId, before } = await messageForThree(clock);
  const stream = seenStream('@b');
  const store = downThenRefusing(own, stream);
  const log = recordingLogger('debug');
  // Flushed by the test alone (no timer's flush between its steps).
  const config = { seenFlushMs: 600_000 } as MailboxConfig;
  const seen = new SeenMarks(store.wrapped, clock, { next: () => randomUUID() }, config, log.logger);
  stopRecorder = async () => {
    store.mode = 'taking';
    await seen.close();
  };
  seen.note('@b', [messageId]);

  await downRefusedTaken(
    store,
    (ms) => (now = ms),
    () => seen.flush(),
    T0 + 68_000,
  ); // 5 s after its last try
  expect((await allEvents(own)).slice(0, before.length)).toEqual(before);
  expect((await allEvents(own)).slice(before.length).map((event) => [event.type, event.data])).toEqual([
    ['MessagesSeen', { recipient: '@b', seenAt: new Date(T0).toISOString(), messageIds: [messageId] }],
  ]);

  // The store answered at T0 + 3 s: its outage said then, 3 s long; the refusal's minute is the refusal's own line.
  expect(
    log.lines
      .filter((line) => line.level === 30)
      .map(({ msg, downMs, retries, refusedSince }) => ({ msg, downMs, retries, refusedSince })),
  ).toEqual([
    {
      msg: `seen marks: the event store answers again and refuses ${stream}; the marks are kept`,
      downMs: 3_000,
      retries: 2,
      refusedSince: undefined,
    },
    {
      msg: `seen marks: ${stream} takes marks again; the marks kept are written`,
      downMs: undefined,
      retries: undefined,
      refusedSince: new Date(T0 + 3_000).toISOString(),
    },
  ]);
});
