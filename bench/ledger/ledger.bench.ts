/**
 * Bench ledger/ledger (issue 13): the delivery ledger of a 1,000-recipient broadcast, read from the memory
 * store (first page of 100 and the summary, which comes with every page), p50/p99 over many reads; and the
 * extra write load of wake records: WakeObserved events per 1,000 messages (one per woken recipient).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { LogBuilder } from '../../test/contract/projectionStoreLog';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { startRedis } from '../../test/support/redisServer';
import { atMost } from '../lib/report';
import type { BenchReport } from '../lib/report';
import { runBench } from '../lib/runBench';
import { round, summarize } from '../lib/stats';

/** The line: a 1,000-recipient broadcast's ledger (first page and summary) p99 <= 5 ms. */
async function timeReads(report: BenchReport, store: ProjectionStore, id: string, name: string, reads: number): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < reads; i++) {
    const started = performance.now();
    await store.deliveryLedger(id, { after: null, limit: 100 });
    times.push(performance.now() - started);
  }
  report.latency(`ledger first page (100) + summary, 1,000 recipients, ${name}`, summarize(times), atMost(5));
}

const noWakes = { publish: async () => undefined, subscribe: async () => async () => undefined, close: async () => undefined };

/**
 * The extra write load of wake records: 1,000 direct messages sent through the library on a SQLite log (the
 * baseline), then one wake observed for each (1,000 WakeObserved, appended in batches of 500), same run.
 */
async function wakeRecordLoad(report: BenchReport): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-bench-'));
  const mailbox = await createMailbox(
    { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: 'bench-admin-token-0123456789abcdef', logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  try {
    const admin = mailbox.asActor({ identity: 'admin', role: 'admin' } as never);
    const a = await mailbox.as((await admin.registerAgent({ identity: '@a' })).token);
    await admin.registerAgent({ identity: '@b' });
    const ids: string[] = [];
    let started = performance.now();
    for (let i = 0; i < 1000; i++) ids.push((await a.send({ to: '@b', subject: 's', body: 'b' })).messageId);
    const sendsMs = performance.now() - started;
    const before = (await mailbox.eventStore.headPosition()) ?? 0n;
    started = performance.now();
    for (const id of ids) mailbox.wakeRecorder.observed(id, '@b', 'stream');
    await mailbox.wakeRecorder.flush();
    const wakesMs = performance.now() - started;
    const written = Number(((await mailbox.eventStore.headPosition()) ?? 0n) - before);
    report.metric(
      'wake records per 1,000 messages (SQLite log): time vs the sends of the same run',
      wakesMs / sendsMs,
      'ratio',
      undefined,
      {
        sendsMs: round(sendsMs),
        wakeRecordsMs: round(wakesMs),
        eventsWritten: written,
        appends: Math.ceil(written / 500),
      },
    );
  } finally {
    await mailbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench('ledger/ledger', async (report) => {
  const audience = Array.from({ length: 1000 }, (_u, i) => `@agent${String(i).padStart(4, '0')}`);
  const log = new LogBuilder().register('@sender', ...audience);
  const id = log.send('@sender', 'AGENT:*', {}, audience);
  audience.forEach((recipient, i) => {
    if (i % 3 !== 0) log.wake(recipient, id);
    if (i % 5 === 0) log.read(recipient, id);
  });
  const store = new MemoryProjectionStore(noWakes as never);
  await store.applyBatch(log.projected());
  await timeReads(report, store, id, 'memory store', 5000);
  report.note('ledger counts', (await store.deliveryLedger(id, { after: null, limit: 100 }))!.counts);
  const redis = await startRedis();
  try {
    const redisStore = new RedisProjectionStore(await connectRedis(redis.url, { name: 'bench' }), { namespace: 'benchledger' });
    await redisStore.applyBatch(log.projected());
    await timeReads(report, redisStore, id, 'redis (single node, loopback)', 3000);
    await redisStore.close();
  } finally {
    await redis.stop();
  }
  await wakeRecordLoad(report);
});
