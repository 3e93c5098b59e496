/** A Redis projection store and wake bus on their own namespace, on any topology (URL), for the contract suites. */
import pino from 'pino';
import { connectRedis, isClusterUrl } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore, type RedisProjectionOptions } from '../../src/adapters/projections/redisProjectionStore';
import { RedisWakeBus } from '../../src/adapters/projections/redisWakeBus';
import type { ProjectionStoreHarness } from './projectionStore.contract';
import { CONTRACT_TIMEOUT_MS } from './contractRedisTimeout';

let namespaces = 0;

/** Its own namespace, so that suites sharing a REDIS_URL never meet; a Cluster URL always gets one script per hash tag. */
export async function openRedisHarness(
  url: string,
  options: RedisProjectionOptions = {},
): Promise<ProjectionStoreHarness & { store: RedisProjectionStore }> {
  const namespace = options.namespace ?? `t${process.pid}n${++namespaces}`;
  const scriptPerTag = options.scriptPerTag ?? isClusterUrl(url);
  const store = new RedisProjectionStore(await connectRedis(url, { name: 'contract-store', timeoutMs: CONTRACT_TIMEOUT_MS }), {
    ...options,
    namespace,
    scriptPerTag,
  });
  const wakeBus = new RedisWakeBus(
    await connectRedis(url, { name: 'contract-publisher', timeoutMs: CONTRACT_TIMEOUT_MS }),
    () => connectRedis(url, { name: 'contract-subscriber', timeoutMs: CONTRACT_TIMEOUT_MS }),
    store.keys,
    pino({ level: 'silent' }),
  );
  return {
    store,
    wakeBus,
    close: async () => {
      await wakeBus.close();
      await store.reset();
      await store.close();
    },
  };
}
