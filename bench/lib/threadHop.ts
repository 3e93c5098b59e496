/**
 * What one round trip to a worker thread costs when both threads were asleep: a message posted to an echoing
 * worker and its answer, with a pause between round trips in which both threads wait on their event loops (as
 * the writer thread, the views thread and the event loop do between one caller's operations). Each leg wakes a
 * sleeping thread; on a virtual machine an idle vCPU may be halted, and waking it costs far more than the
 * message itself (measured here: ~0.05 ms after 1 ms asleep, ~0.11 ms after 5 ms, against ~0.01 ms back to back).
 *
 * Why: a durable send on the embedded default makes two such round trips (to the log's writer thread, then to the
 * views thread), so a single caller's latency carries them above the disk's fsync floor; the sequential bench
 * reports them beside that floor, measured in the same run.
 */
import { Worker } from 'node:worker_threads';
import { summarize, type Summary } from './stats';
import { nowMs } from './timing';

const ECHO = `require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));`;

export async function idleThreadRoundTrip(samples = 200, pauseMs = 1): Promise<Summary> {
  const worker = new Worker(ECHO, { eval: true });
  try {
    const once = () =>
      new Promise<number>((resolve) => {
        const started = nowMs();
        worker.once('message', () => resolve(nowMs() - started));
        worker.postMessage(0);
      });
    await once(); // the worker's start-up is not a round trip
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      times.push(await once());
    }
    return summarize(times);
  } finally {
    await worker.terminate();
  }
}
