/** Chooses projections and wake bus from configuration: in memory unless MAILBOX_REDIS_URL is set. */
import type { Logger } from 'pino';
import type { MailboxConfig } from '../config';
import type { ProjectionStore } from '../projections/projectionStore';
import type { WakeBus } from '../projections/wakeBus';
import { MemoryProjectionStore } from './projections/memoryProjectionStore';
import { connectRedis, isClusterUrl, redactUrl, redisOptionsOf } from './projections/redisConnection';
import { RedisKeys } from './projections/redisKeys';
import { RedisSharedLimits } from './projections/redisSharedLimits';
import type { SharedLimits } from '../application/sharedLimits';
import { RedisProjectionStore } from './projections/redisProjectionStore';
import { InProcessWakeBus } from './wake/inProcessWakeBus';
import { RedisWakeBus } from './projections/redisWakeBus';

export async function createProjectionAdapters(
  config: MailboxConfig,
  logger: Logger,
): Promise<{ projectionStore: ProjectionStore; wakeBus: WakeBus; sharedLimits: SharedLimits | null }> {
  if (config.redisUrl === undefined) {
    logger.info('projections: in memory, rebuilt from the log at start; wake bus: in process');
    const wakeBus = new InProcessWakeBus();
    return { wakeBus, projectionStore: new MemoryProjectionStore(wakeBus), sharedLimits: null };
  }
  const url = config.redisUrl;
  const projectionStore = await openRedisProjectionStore(config);
  let sharedLimits: SharedLimits | null = null;
  try {
    // Every API node draws an agent's requests from one bucket (MAILBOX_RATE_LIMIT_*), on its own connection.
    sharedLimits = new RedisSharedLimits(
      await connectRedis(url, { name: 'mailbox-shared-limits', ...redisOptionsOf(config) }),
      new RedisKeys(config.redisNamespace),
    );
    const publisher = await connectRedis(url, { name: 'mailbox-wake-publisher', ...redisOptionsOf(config) });
    const wakeBus = ownViewsOnly(
      new RedisWakeBus(
        publisher,
        () => connectRedis(url, { name: 'mailbox-wake-subscriber', ...redisOptionsOf(config) }),
        new RedisKeys(config.redisNamespace),
        logger,
      ),
      projectionStore,
    );
    logger.info(
      { redis: redactUrl(url), namespace: config.redisNamespace },
      'projections: Redis (checkpoint stored with the views); wake bus: Redis pub/sub',
    );
    return { projectionStore, wakeBus, sharedLimits };
  } catch (error) {
    await sharedLimits?.close();
    await projectionStore.close();
    throw error;
  }
}

/** The Redis projection store on its own connection (also used by `mailbox projections ...`). */
export async function openRedisProjectionStore(config: MailboxConfig): Promise<RedisProjectionStore> {
  if (config.redisUrl === undefined) throw new Error('openRedisProjectionStore needs MAILBOX_REDIS_URL');
  const client = await connectRedis(config.redisUrl, { name: 'mailbox-projections', ...redisOptionsOf(config) });
  // On a Cluster a script may touch only one slot: one call per hash tag (see redisKeys.ts).
  return new RedisProjectionStore(client, { namespace: config.redisNamespace, scriptPerTag: isClusterUrl(config.redisUrl) });
}

/**
 * Wake channels are shared by every mailbox on a namespace: wakes are passed
 * on only while this log is known to hold the views (see passWake), so that
 * none of another log's ever reaches this mailbox's subscribers.
 */
function ownViewsOnly(bus: WakeBus, store: RedisProjectionStore): WakeBus {
  return {
    publish: (wakes) => bus.publish(wakes),
    subscribe: (identity, listener) =>
      bus.subscribe(identity, (wake) => {
        store.passWake(() => listener(wake));
      }),
    close: () => bus.close(),
  };
}
