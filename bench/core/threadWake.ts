/**
 * What waking a worker thread costs the thread that wakes it, by mechanism (a probe, not a benchmark: run after
 * `npm run build` with `node dist/bench/core/threadWake.js`). A sequential send wakes the log's writer thread and
 * then the views thread and is woken by each (threadHop.ts prices the round trip); this says where that time goes:
 *
 * - postMessage to a worker waiting on its event loop (as the writer and views threads do): the call itself, and the
 *   round trip to its answer;
 * - Atomics.notify to a worker blocked in Atomics.wait (a futex), the answer awaited with Atomics.waitAsync;
 * - Atomics.notify to a worker that waits with Atomics.waitAsync (its event loop kept).
 *
 * Why: a CPU profile of core/sequential put ~40% of the event loop's busy time in postMessage (December 2026, this kind
 * of virtual machine, where a cross-thread wake is a paravirtualized interrupt). The figures tell whether another
 * wake would buy the sequential target anything: bench/README.md, "Where a sequential send's time goes".
 */
import { Worker } from 'node:worker_threads';

const ROUNDS = Number(process.env.WAKE_ROUNDS ?? 3000);
/** A pause between round trips, as between one caller's operations: both threads fall asleep. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 0.3));
const p = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))].toFixed(1);

async function measure(name: string, once: () => Promise<number>): Promise<void> {
  const calls: number[] = [];
  const trips: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    await pause();
    const started = process.hrtime.bigint();
    const called = await once();
    calls.push(called);
    trips.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  console.log(
    `${name.padEnd(48)} wake call p50 ${p(calls, 0.5)} us, p90 ${p(calls, 0.9)} | round trip p50 ${p(trips, 0.5)} us, p90 ${p(trips, 0.9)}`,
  );
}

/** Atomics.waitAsync (Node 16+), which this project's TypeScript lib (ES2022) does not declare. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(cells: Int32Array, index: number, value: number): { async: boolean; value: Promise<string> | string };
  }
).waitAsync;

/** Microseconds since `started`. */
const since = (started: bigint) => Number(process.hrtime.bigint() - started) / 1000;

async function main(): Promise<void> {
  const echo = new Worker(
    `const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m));`,
    {
      eval: true,
    },
  );
  const blockingCells = new Int32Array(new SharedArrayBuffer(8));
  const blocking = new Worker(
    `const { workerData } = require('node:worker_threads'); const a = new Int32Array(workerData);
     for (;;) { Atomics.wait(a, 0, 0); Atomics.store(a, 0, 0); Atomics.store(a, 1, 1); Atomics.notify(a, 1); }`,
    { eval: true, workerData: blockingCells.buffer },
  );
  const asyncCells = new Int32Array(new SharedArrayBuffer(8));
  const waitingAsync = new Worker(
    `const { workerData } = require('node:worker_threads'); const a = new Int32Array(workerData);
     setInterval(() => {}, 1e9); // waitAsync keeps no event loop alive
     (async () => { for (;;) { const r = Atomics.waitAsync(a, 0, 0); if (r.async) await r.value;
       Atomics.store(a, 0, 0); Atomics.store(a, 1, 1); Atomics.notify(a, 1); } })();`,
    { eval: true, workerData: asyncCells.buffer },
  );
  const notifyAndWait = (cells: Int32Array) => async () => {
    const started = process.hrtime.bigint();
    Atomics.store(cells, 1, 0);
    Atomics.store(cells, 0, 1);
    Atomics.notify(cells, 0);
    const called = since(started);
    const answer = waitAsync(cells, 1, 0);
    if (answer.async) await answer.value;
    return called;
  };
  await new Promise((resolve) => setTimeout(resolve, 200)); // the workers started
  for (let round = 0; round < 2; round++) {
    await measure('postMessage, worker on its event loop', async () => {
      const answered = new Promise((resolve) => echo.once('message', resolve));
      const started = process.hrtime.bigint();
      echo.postMessage(0);
      const called = since(started);
      await answered;
      return called;
    });
    await measure('Atomics.notify, worker blocked in Atomics.wait', notifyAndWait(blockingCells));
    await measure('Atomics.notify, worker in Atomics.waitAsync', notifyAndWait(asyncCells));
  }
  await Promise.all([echo.terminate(), blocking.terminate(), waitingAsync.terminate()]);
}

void main();
