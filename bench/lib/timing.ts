/** Wall-clock timing with sub-millisecond resolution. */
import { performance } from 'node:perf_hooks';

export const nowMs = (): number => performance.now();

/** Runs `work` and returns how long it took, in milliseconds. */
export async function timeMs(work: () => unknown | Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Times `work` `iterations` times in a row; returns each duration in ms. */
export async function sampleMs(iterations: number, work: (i: number) => unknown | Promise<unknown>): Promise<number[]> {
  const samples = new Array<number>(iterations);
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await work(i);
    samples[i] = performance.now() - started;
  }
  return samples;
}

/**
 * Runs `total` operations from `concurrency` workers, each worker starting its
 * next operation when its previous one completes (closed loop). Returns each
 * operation's latency and the elapsed wall time.
 */
export async function closedLoop(
  total: number,
  concurrency: number,
  operation: (index: number, worker: number) => Promise<unknown>,
): Promise<{ latencies: number[]; elapsedMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_unused, worker) => {
      while (next < total) {
        const index = next++;
        const opStarted = performance.now();
        await operation(index, worker);
        latencies.push(performance.now() - opStarted);
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - started };
}
