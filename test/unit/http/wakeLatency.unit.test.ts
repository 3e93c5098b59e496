import { WAKE_LATENCY_MAX_ENTRIES, WakeLatencyTracker } from '../../../src/adapters/http/wakeLatency';

test('pairs a send with its wakes in either order, once each', () => {
  let now = 0;
  const observed: number[] = [];
  const tracker = new WakeLatencyTracker(
    (s) => observed.push(s),
    () => now,
  );
  now = 4;
  tracker.wakeWritten('m1'); // the usual order: the wake goes out before the send is acknowledged
  tracker.wakeWritten('m1'); // a broadcast: a second recipient
  tracker.sendAcknowledged('m1', 1);
  expect(observed).toEqual([0.003, 0.003]);
  now = 10;
  tracker.wakeWritten('m1'); // a recipient woken after the acknowledgement
  expect(observed).toEqual([0.003, 0.003, 0.009]);
  tracker.sendAcknowledged('m2', 10); // no subscriber: nothing observed
  expect(observed).toHaveLength(3);
});

test('holds at most its bound of unmatched sends, and still pairs the recent ones', () => {
  let now = 0;
  const observed: number[] = [];
  const tracker = new WakeLatencyTracker(
    (s) => observed.push(s),
    () => now,
  );
  // sends nobody subscribed to, all within the TTL: only the bound limits them
  for (let i = 0; i < WAKE_LATENCY_MAX_ENTRIES + 1_000; i++) tracker.sendAcknowledged(`m${i}`, now);
  expect(tracker.size).toBeLessThanOrEqual(WAKE_LATENCY_MAX_ENTRIES);
  now = 2;
  tracker.wakeWritten(`m${WAKE_LATENCY_MAX_ENTRIES + 999}`); // the newest send is still known
  expect(observed).toEqual([0.002]);
  tracker.wakeWritten('m0'); // the oldest was dropped: its wake waits for a send that will not come, and is not observed
  expect(observed).toEqual([0.002]);
});

test('drops entries older than the TTL once the bound is reached', () => {
  let now = 0;
  const tracker = new WakeLatencyTracker(
    () => undefined,
    () => now,
  );
  for (let i = 0; i < WAKE_LATENCY_MAX_ENTRIES; i++) tracker.sendAcknowledged(`old${i}`, now);
  now = 60_000; // all of them past the 30 s TTL
  tracker.sendAcknowledged('new', now);
  tracker.sendAcknowledged('newer', now); // over the bound: the expired ones go
  expect(tracker.size).toBe(2);
});
