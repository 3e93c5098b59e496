/**
 * The mailbox HTTP server in its own process for the HTTP benchmarks, so the
 * load generator never shares its event loop and the server's RSS is its own.
 * Protocol (IPC): -> {type: 'ready', url, adminToken}; <- 'memory' | 'cpu' | 'sample' -> {type, ...figures}; <- 'stop'.
 * 'sample' takes no GC (unlike 'memory'): RSS now, and the event loop's delay since the last sample.
 */
import 'reflect-metadata';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { buildHttpServer } from '../../src/adapters/http/httpServer';
import { BENCH_ADMIN_TOKEN, openEmbeddedMailbox } from '../lib/mailbox';
import { memoryMb } from '../lib/memory';
import { makeTmpDir, removeDir } from '../lib/tmp';

async function main(): Promise<void> {
  const dir = makeTmpDir('mailbox-bench-http-');
  const mailbox = await openEmbeddedMailbox(dir, { rateLimitPerSecond: 0, maxWakeStreamsPerAgent: 100_000 });
  const http = buildHttpServer(mailbox, pino({ level: 'silent' }));
  const url = await http.listen('127.0.0.1', 0);
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  process.on('message', async (message: string) => {
    if (message === 'memory') process.send!({ type: 'memory', ...memoryMb(true), openWakeStreams: http.context.wakeStreams.size });
    if (message === 'sample') {
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      process.send!({ type: 'sample', rssMb: Math.round(process.memoryUsage().rss / 1048576),
        heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1048576),
        loopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), p999: ms(loopDelay.percentile(99.9)), max: ms(loopDelay.max) } });
      loopDelay.reset();
    }
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ type: 'cpu', cpuMs: (user + system) / 1000 });
    }
    if (message === 'stop') {
      await http.close();
      await mailbox.close();
      removeDir(dir);
      process.send!({ type: 'stopped' }, () => process.exit(0));
    }
  });
  process.send!({ type: 'ready', url, adminToken: BENCH_ADMIN_TOKEN });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
