import { WakeLatencyTracker } from '../../../src/adapters/http/wakeLatency';

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
