/**
 * Stall diagnosis for the bench server (BENCH_SERVER_TRACE=<file>): one JSON
 * line per noteworthy moment, stamped with the monotonic clock in ms
 * (CLOCK_MONOTONIC, the clock `perf record -k mono` stamps syscalls with), so
 * that a blocked event loop can be lined up with the fsyncs, checkpoints and GC
 * pauses around it:
 * - `stall`: a 5 ms timer fired late by more than 20 ms (the loop was blocked);
 * - `commit`: an event store group commit (sent to the writer thread until its
 *   COMMIT, fsynced, is answered) slower than 5 ms;
 * - `checkpoint`: each WAL checkpoint the sidecar ran (start, duration, result);
 * - `apply`: a batch of the views' apply (queued, then written) slower than 5 ms, with its size;
 * - `request`: a request slower than 20 ms in the server (start, duration, url);
 * - `gc`: a GC pause longer than 5 ms (kind as in serverProcess);
 * - `sched`: every second, the main thread's CPU time and run-queue wait
 *   (/proc schedstat): time the loop could not run because the CPU was busy.
 * Reaches into the SQLite store's private parts: a diagnostic, not an API.
 */
import fs from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;
/** performance.now() is on the monotonic clock, shifted by the process start. */
const perfToMono = monoMs() - performance.now();

export interface StallTrace {
  stop: () => void;
  /** A request that took over 20 ms in the server (`startedAt` on performance.now()'s clock). */
  slowRequest: (startedAt: number, ms: number, url: string) => void;
}

export function startStallTrace(file: string, eventStore: unknown, projections: unknown): StallTrace {
  const out = fs.openSync(file, 'w');
  const lines: string[] = [];
  const write = (record: Record<string, unknown>) => lines.push(JSON.stringify(record));
  const flush = () => {
    if (lines.length) fs.writeSync(out, lines.splice(0).join('\n') + '\n');
  };

  // The adapter under the log the mailbox holds to (application/heldLog.ts), whose writer and sidecar are traced.
  const store = ((eventStore as { log?: unknown }).log ?? eventStore) as {
    writer?: Record<string, unknown>;
    sidecar?: { request: (r: { kind: string }) => Promise<unknown> };
  };
  /** Replaces `target[method]` (one array argument) with a version that writes each call slower than 5 ms. */
  const traceSlow = (target: Record<string, unknown> | undefined, method: string, k: string, sized: string) => {
    const original = target?.[method] as ((items: unknown[]) => Promise<unknown>) | undefined;
    if (target === undefined || original === undefined) return;
    target[method] = (items: unknown[]) => {
      const at = monoMs();
      const answer = original.call(target, items);
      const done = () => {
        const ms = monoMs() - at;
        if (ms > 5) write({ k, at, ms, [sized]: items.length });
      };
      answer.then(done, done);
      return answer;
    };
  };
  traceSlow(store.writer, 'commit', 'commit', 'appends');
  traceSlow(projections as Record<string, unknown>, 'applyBatch', 'apply', 'events');
  const sidecar = store.sidecar;
  if (sidecar) {
    const request = sidecar.request.bind(sidecar);
    sidecar.request = (r) => {
      const at = monoMs();
      const answer = request(r);
      if (r.kind === 'checkpoint')
        answer.then(
          (result) => write({ k: 'checkpoint', at, ms: monoMs() - at, result }),
          (error: unknown) => write({ k: 'checkpoint', at, ms: monoMs() - at, error: String(error) }),
        );
      return answer;
    };
  }

  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if (entry.duration > 5)
        write({
          k: 'gc',
          at: entry.startTime + perfToMono,
          ms: entry.duration,
          kind: (entry as unknown as { detail?: { kind?: number } }).detail?.kind,
        });
  });
  gc.observe({ entryTypes: ['gc'] });

  let expected = monoMs() + 5;
  const ticker = setInterval(() => {
    const now = monoMs();
    if (now - expected > 20) write({ k: 'stall', at: expected, ms: now - expected });
    expected = now + 5;
  }, 5);

  const schedFile = `/proc/${process.pid}/task/${process.pid}/schedstat`;
  const readSched = () => fs.readFileSync(schedFile, 'utf8').split(' ').map(Number);
  let last = readSched();
  const sampler = setInterval(() => {
    const now = readSched();
    write({ k: 'sched', at: monoMs(), cpuMs: (now[0] - last[0]) / 1e6, waitMs: (now[1] - last[1]) / 1e6 });
    last = now;
    flush();
  }, 1000);

  return {
    slowRequest: (startedAt, ms, url) => {
      if (ms > 20) write({ k: 'request', at: startedAt + perfToMono, ms, url });
    },
    stop: () => {
      clearInterval(ticker);
      clearInterval(sampler);
      gc.disconnect();
      flush();
      fs.closeSync(out);
    },
  };
}
