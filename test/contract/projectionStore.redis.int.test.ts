/**
 * The projection store contract on the Redis adapter, against a real
 * redis-server: one script per chunk of events (single node, the default) and
 * one script per hash tag (the Redis Cluster layout, run here on one node).
 */
import pino from 'pino';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore, type RedisProjectionOptions } from '../../src/adapters/projections/redisProjectionStore';
import { RedisWakeBus } from '../../src/adapters/wake/redisWakeBus';
import { startRedis, type TestRedis } from '../support/redisServer';
import { describeProjectionStoreContract, type ProjectionStoreHarness } from './projectionStore.contract';

let redis: TestRedis;
let namespaces = 0;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

/** A store and wake bus on their own namespace, so that suites sharing a REDIS_URL never meet. */
export async function openRedisHarness(url: string, options: RedisProjectionOptions = {}): Promise<ProjectionStoreHarness & { store: RedisProjectionStore }> {
  const namespace = options.namespace ?? `t${process.pid}n${++namespaces}`;
  const store = new RedisProjectionStore(await connectRedis(url, { name: 'contract-store' }), { ...options, namespace });
  const wakeBus = new RedisWakeBus(await connectRedis(url, { name: 'contract-publisher' }),
    () => connectRedis(url, { name: 'contract-subscriber', autoPipelining: false }), store.keys, pino({ level: 'silent' }));
  return {
    store, wakeBus,
    close: async () => {
      await wakeBus.close();
      await store.reset();
      await store.close();
    },
  };
}

describeProjectionStoreContract('redis (one script per chunk of events)', () => openRedisHarness(redis.url));
describeProjectionStoreContract('redis (one script per hash tag, Cluster layout)',
  () => openRedisHarness(redis.url, { scriptPerTag: true, eventsPerScript: 16 }));
