/**
 * Bench ledger/ledger (issue 13): the delivery ledger of a 1,000-recipient broadcast, read from the memory
 * store (first page of 100 and the summary, which comes with every page), p50/p99 over many reads; and the
 * extra write load of wake records: WakeObserved events per 1,000 messages (one per woken recipient).
 */
import { performance } from 'node:perf_hooks';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { LogBuilder } from '../../test/contract/projectionStoreLog';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { startRedis } from '../../test/support/redisServer';

async function timeReads(store: ProjectionStore, id: string, name: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const started = performance.now();
    await store.deliveryLedger(id, { after: null, limit: 100 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))].toFixed(4);
  console.log(
    JSON.stringify({ bench: `ledger first page (100) + summary, 1,000 recipients, ${name}`, p50ms: at(0.5), p99ms: at(0.99) }),
  );
}

const noWakes = { publish: async () => undefined, subscribe: async () => async () => undefined, close: async () => undefined };

async function main(): Promise<void> {
  const audience = Array.from({ length: 1000 }, (_u, i) => `@agent${String(i).padStart(4, '0')}`);
  const log = new LogBuilder().register('@sender', ...audience);
  const id = log.send('@sender', 'AGENT:*', {}, audience);
  audience.forEach((recipient, i) => {
    if (i % 3 !== 0) log.wake(recipient, id);
    if (i % 5 === 0) log.read(recipient, id);
  });
  const store = new MemoryProjectionStore(noWakes as never);
  await store.applyBatch(log.projected());
  const times: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const started = performance.now();
    await store.deliveryLedger(id, { after: null, limit: 100 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))].toFixed(4);
  const page = (await store.deliveryLedger(id, { after: null, limit: 100 }))!;
  console.log(
    JSON.stringify({
      bench: 'ledger first page (100) + summary, 1,000 recipients, memory store',
      p50ms: at(0.5),
      p99ms: at(0.99),
      counts: page.counts,
    }),
  );
  const redis = await startRedis();
  try {
    const redisStore = new RedisProjectionStore(await connectRedis(redis.url, { name: 'bench' }), { namespace: 'benchledger' });
    await redisStore.applyBatch(log.projected());
    await timeReads(redisStore, id, 'redis (single node, loopback)');
    await redisStore.close();
  } finally {
    await redis.stop();
  }
  const wakeEvents = log.events.filter((event) => event.type === 'WakeObserved').length;
  console.log(
    JSON.stringify({
      bench: 'wake records',
      wakeObservedEvents: wakeEvents,
      perMessage: wakeEvents,
      note: 'one event per woken recipient, batched per append',
    }),
  );
}

void main();
