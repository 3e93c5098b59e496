/**
 * The mailbox HTTP server in its own process for the HTTP benchmarks, so the
 * load generator never shares its event loop and the server's RSS is its own.
 * Protocol (IPC): -> {type: 'ready', url, adminToken}; <- 'memory' | 'cpu' -> {type, ...figures}; <- 'stop'.
 */
import 'reflect-metadata';
import pino from 'pino';
import { buildApiServer } from '../../src/server';
import { BENCH_ADMIN_TOKEN, openEmbeddedMailbox } from '../lib/mailbox';
import { memoryMb } from '../lib/memory';
import { makeTmpDir, removeDir } from '../lib/tmp';

async function main(): Promise<void> {
  const dir = makeTmpDir('mailbox-bench-http-');
  const mailbox = await openEmbeddedMailbox(dir, { rateLimitPerSecond: 0, maxWakeStreamsPerAgent: 100_000 });
  const http = buildApiServer(mailbox, pino({ level: 'silent' }));
  const url = await http.listen('127.0.0.1', 0);
  process.on('message', async (message: string) => {
    if (message === 'memory') process.send!({ type: 'memory', ...memoryMb(true), openWakeStreams: http.context.wakeStreams.size });
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
