/**
 * The mailbox HTTP server in its own process for the HTTP benchmarks, so the
 * load generator never shares its event loop and the server's RSS is its own.
 * BENCH_SERVER_CPU_PROFILE=<file> writes a CPU profile of the main thread there.
 * Protocol (IPC): -> {type: 'ready', url, adminToken}; <- 'memory' | 'cpu' | 'sample' | 'snapshot:<file>' -> {type, ...figures}; <- 'stop'.
 * 'sample' takes no GC (unlike 'memory'): RSS now, and the event loop's delay since the last sample.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import v8 from 'node:v8';
import { Session } from 'node:inspector/promises';
import { createHistogram, monitorEventLoopDelay, PerformanceObserver, type RecordableHistogram } from 'node:perf_hooks';
import pino from 'pino';
import { buildApiServer } from '../../src/server';
import { BENCH_ADMIN_TOKEN, openEmbeddedMailbox } from '../lib/mailbox';
import { memoryMb } from '../lib/memory';
import { threadHeaps } from '../lib/threadHeaps';
import { makeTmpDir, removeDir } from '../lib/tmp';
import { startStallTrace } from './stallTrace';
import { tuneCollector } from '../../src/support/collectorTuning';

async function main(): Promise<void> {
  // As `mailbox serve` runs: the CLI's collector settings, unless BENCH_V8_DEFAULTS=1 measures V8's own.
  if (process.env.BENCH_V8_DEFAULTS !== '1') tuneCollector();
  // BENCH_SERVER_DATA_DIR: serve a store a bench prepared (kept at stop); otherwise a fresh one in a temp dir.
  const given = process.env.BENCH_SERVER_DATA_DIR;
  const dir = given ?? makeTmpDir('mailbox-bench-http-');
  // BENCH_VIEWS=memory|sqlite runs the server with those views instead of the embedded default's (bench/lib/mailbox.ts).
  const mailbox = await openEmbeddedMailbox(dir, { rateLimitPerSecond: 0, maxWakeStreamsPerAgent: 100_000 });
  const http = buildApiServer(mailbox, pino({ level: 'silent' }));
  // Where a slow answer's time went, per 5 s window: the whole request inside the server, the event store's
  // append (the durable commit) and the views' apply, GC pauses, and the event loop's delay.
  const windows = { request: createHistogram(), append: createHistogram(), apply: createHistogram() };
  const record = (histogram: RecordableHistogram, startedAt: number) =>
    histogram.record(Math.max(1, Math.round((performance.now() - startedAt) * 1000)));
  http.app.addHook('onResponse', async (request) => record(windows.request, request.startedAt));
  const timed = <T extends object, K extends keyof T>(target: T, method: K, histogram: RecordableHistogram) => {
    const original = (target[method] as unknown as (...args: unknown[]) => Promise<unknown>).bind(target);
    (target as Record<K, unknown>)[method] = async (...args: unknown[]) => {
      const startedAt = performance.now();
      try {
        return await original(...args);
      } finally {
        record(histogram, startedAt);
      }
    };
  };
  timed(mailbox.eventStore, 'append', windows.append);
  timed(mailbox.projections, 'applyBatch', windows.apply);
  const gc = { count: 0, totalMs: 0, maxMs: 0, maxKind: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.totalMs += entry.duration;
      if (entry.duration > gc.maxMs) {
        gc.maxMs = entry.duration;
        gc.maxKind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  const trace = process.env.BENCH_SERVER_TRACE
    ? startStallTrace(process.env.BENCH_SERVER_TRACE, mailbox.eventStore, mailbox.projections)
    : null;
  if (trace)
    http.app.addHook('onResponse', async (request) =>
      trace.slowRequest(request.startedAt, performance.now() - request.startedAt, request.url),
    );
  // BENCH_SERVER_CPU_PROFILE=<file>: the server's main thread profiled from ready to stop (open it in Chrome DevTools);
  // --cpu-prof would lose it, the process ends by process.exit.
  const profiler = process.env.BENCH_SERVER_CPU_PROFILE ? new Session() : null;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const url = await http.listen('127.0.0.1', 0);
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  process.on('message', async (message: string) => {
    if (message === 'memory')
      process.send!({
        type: 'memory',
        ...memoryMb(true),
        bytes: process.memoryUsage(), // after that GC, unrounded (bench/http/memoryGrowth.ts fits slopes on them)
        openWakeStreams: http.context.wakeStreams.size,
        threads: threadHeaps(),
      });
    // 'snapshot:<file>': a heap snapshot there after a full GC (bench/http/memoryGrowth.ts diffs two of them).
    if (message.startsWith('snapshot:')) {
      memoryMb(true);
      v8.writeHeapSnapshot(message.slice('snapshot:'.length));
      process.send!({ type: 'snapshot' });
    }
    if (message === 'sample') {
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      process.send!({
        type: 'sample',
        rssMb: Math.round(process.memoryUsage().rss / 1048576),
        heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1048576),
        heapTotalMb: Math.round(process.memoryUsage().heapTotal / 1048576),
        loopDelayMs: {
          p50: ms(loopDelay.percentile(50)),
          p99: ms(loopDelay.percentile(99)),
          p999: ms(loopDelay.percentile(99.9)),
          max: ms(loopDelay.max),
        },
        ...Object.fromEntries(
          Object.entries(windows).map(([name, h]) => [
            `${name}Ms`,
            { p99: ms(h.percentile(99) * 1000), p999: ms(h.percentile(99.9) * 1000), max: ms(h.max * 1000) },
          ]),
        ),
        // kind: 1 scavenge (young), 2 mark-sweep-compact (full), 4 incremental marking, 8 weak callbacks
        gc: { count: gc.count, totalMs: Math.round(gc.totalMs), maxMs: Math.round(gc.maxMs * 10) / 10, maxKind: gc.maxKind },
        threads: threadHeaps(),
      });
      loopDelay.reset();
      for (const h of Object.values(windows)) h.reset();
      Object.assign(gc, { count: 0, totalMs: 0, maxMs: 0, maxKind: 0 });
    }
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ type: 'cpu', cpuMs: (user + system) / 1000 });
    }
    if (message === 'stop') {
      trace?.stop();
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        fs.writeFileSync(process.env.BENCH_SERVER_CPU_PROFILE!, JSON.stringify(profile));
      }
      await http.close();
      await mailbox.close();
      if (given === undefined) removeDir(dir);
      process.send!({ type: 'stopped' }, () => process.exit(0));
    }
  });
  process.send!({ type: 'ready', url, adminToken: BENCH_ADMIN_TOKEN });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
