/**
 * Chooses projections and wake bus from configuration: Redis when MAILBOX_REDIS_URL is set; else the SQLite views
 * file beside the log (MAILBOX_VIEWS=sqlite, the default) or views in memory (MAILBOX_VIEWS=memory, or a log in memory).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { MailboxConfig } from '../config';
import type { ProjectionStore } from '../projections/projectionStore';
import type { WakeBus } from '../projections/wakeBus';
import { MemoryProjectionStore } from './projections/memoryProjectionStore';
import { closeRedis, connectRedis, isClusterUrl, redactUrl, redisOptionsOf } from './projections/redisConnection';
import { RedisKeys } from './projections/redisKeys';
import { RedisSharedLimits } from './projections/redisSharedLimits';
import type { SharedLimits } from '../application/sharedLimits';
import { RedisProjectionStore } from './projections/redisProjectionStore';
import { InProcessWakeBus } from './wake/inProcessWakeBus';
import { ThreadedSqliteProjectionStore } from './projections/threadedSqliteProjectionStore';
import { ReopeningSqliteViews } from './projections/reopeningSqliteViews';
import { sqliteLogFile } from './eventStoreFactory';
import { RedisWakeBus } from './projections/redisWakeBus';
import { RedisLease } from './projections/redisLease';
import { evictionRisk, evictionWarning } from './projections/redisEvictionPolicy';
import type { Leases } from '../projections/projectorLease';

export async function createProjectionAdapters(
  config: MailboxConfig,
  logger: Logger,
  { viewsOwner }: { viewsOwner: boolean } = { viewsOwner: true },
): Promise<{ projectionStore: ProjectionStore; wakeBus: WakeBus; sharedLimits: SharedLimits | null }> {
  if (config.redisUrl === undefined) {
    const wakeBus = new InProcessWakeBus();
    const file = sqliteViewsFile(config);
    if (file === null) {
      logger.info('projections: in memory, rebuilt from the log at start; wake bus: in process');
      return { wakeBus, projectionStore: new MemoryProjectionStore(wakeBus), sharedLimits: null };
    }
    const options = { viewsOwner, lockWaitMs: config.viewsLockWaitMs };
    return { wakeBus, projectionStore: await openSqliteViews(file, wakeBus, logger, options), sharedLimits: null };
  }
  const url = config.redisUrl;
  const projectionStore = await openRedisProjectionStore(config, logger);
  let sharedLimits: SharedLimits | null = null;
  try {
    // Every API node draws an agent's requests from one bucket (MAILBOX_RATE_LIMIT_*), on its own connection.
    const limits = new RedisSharedLimits(
      await connectRedis(url, { name: 'mailbox-shared-limits', ...redisOptionsOf(config) }),
      new RedisKeys(config.redisNamespace),
    );
    sharedLimits = limits;
    // What the request's rate limit found (Redis silent) is not waited for again by its read (one deadline, not two).
    if (!isClusterUrl(url)) projectionStore.shareSilence(() => limits.silence);
    const publisher = await connectRedis(url, { name: 'mailbox-wake-publisher', ...redisOptionsOf(config) });
    const wakeBus = ownViewsOnly(
      new RedisWakeBus(
        publisher,
        () => connectRedis(url, { name: 'mailbox-wake-subscriber', subscriber: true, ...redisOptionsOf(config) }),
        new RedisKeys(config.redisNamespace),
        logger,
      ),
      projectionStore,
    );
    logger.info(
      { redis: redactUrl(url), namespace: config.redisNamespace },
      'projections: Redis (checkpoint stored with the views); wake bus: Redis pub/sub',
    );
    const risk = await evictionRisk(publisher);
    if (risk !== null) logger.warn({ redis: redactUrl(url), ...risk }, `projections: ${evictionWarning(risk)}`);
    return { projectionStore, wakeBus, sharedLimits };
  } catch (error) {
    await sharedLimits?.close();
    await projectionStore.close();
    throw error;
  }
}

/**
 * The SQLite views file of this configuration (null: views in memory or in Redis): beside the SQLite log
 * (views.sqlite next to the default events.sqlite, <name>.views.sqlite next to sqlite:<name>.sqlite). With the log
 * on EventStoreDB and no Redis, views stay in memory unless MAILBOX_VIEWS=sqlite asks for MAILBOX_DATA_DIR/views.sqlite.
 */
export function sqliteViewsFile(config: MailboxConfig): string | null {
  if (config.redisUrl !== undefined || config.views === 'memory') return null;
  if (config.eventStoreUrl === 'memory:') return null; // views of a log that ends with the process need no file
  const log = sqliteLogFile(config);
  if (log === null) return config.views === 'sqlite' ? path.resolve(config.dataDir, 'views.sqlite') : null;
  const name = path.basename(log, path.extname(log));
  return path.join(path.dirname(log), name === 'events' ? 'views.sqlite' : `${name}.views.sqlite`);
}

/**
 * The SQLite views file of this configuration when it is not there (null: it is, or the views are not in a file).
 * A command that only reads the views (projections status, audit verify) must not open it then: opening creates it,
 * and the data dir would no longer be as the reader found it.
 */
export function missingSqliteViewsFile(config: MailboxConfig): string | null {
  const file = sqliteViewsFile(config);
  return file !== null && !fs.existsSync(file) ? file : null;
}

/**
 * Opens the views file and says what the projector will do with it: resume from its checkpoint, or build it from the
 * log. Only the views' owner (the mailbox that projects into them) moves a damaged file aside: a separate reader
 * (heartbeat daemon, audit verify) doing so would leave the running server writing to the file it moved. Nor does a
 * reader drop views of another schema (it refuses, saying who rebuilds them): it emptied them under the server. A separate
 * reader follows the path instead: when the server replaces the file (builds the views anew), it reads the new one
 * (reopeningSqliteViews.ts).
 */
/** A reader's map of the views file: SQLite clamps it to what it was built for (2 GiB by default); past that, reads. */
const READER_MAP_BYTES = 2 ** 40;

export async function openSqliteViews(
  file: string,
  wakeBus: InProcessWakeBus,
  logger: Logger,
  { viewsOwner, lockWaitMs }: { viewsOwner: boolean; lockWaitMs?: number } = { viewsOwner: true },
): Promise<ProjectionStore> {
  const existed = fs.existsSync(file);
  // Written on a worker thread, read here. Only the owner moves a damaged file aside or rebuilds views of another schema;
  // a separate reader maps the file (SqliteProjectionOptions.mapBytes says why).
  const open = () =>
    ThreadedSqliteProjectionStore.open(file, wakeBus, {
      recoverDamaged: viewsOwner,
      rebuildOtherSchema: viewsOwner,
      ownerLock: viewsOwner,
      lockWaitMs,
      ...(viewsOwner ? {} : { mapBytes: READER_MAP_BYTES }),
    });
  const store = await open();
  const { checkpoint, logIdentity } = await store.binding();
  if (store.driver !== 'better-sqlite3')
    logger.warn(
      { file, driver: store.driver },
      'projections: the SQLite views run on libsql: better-sqlite3 is not installed (npm install compiles it from its ' +
        'sources and needs python3, make and a C++ compiler); the views are the same, their writes cost about 3x more CPU',
    );
  if (store.damagedFileMovedAside !== null) {
    const { reason, movedTo } = store.damagedFileMovedAside;
    logger.warn(
      { file, reason, movedTo },
      `projections: SQLite views file unreadable (${reason}): moved aside to ${movedTo}; ` +
        'building the views from the whole log (the log is the truth); wake bus: in process',
    );
  } else if (store.schemaReset !== null) {
    logger.warn(
      { file, reason: store.schemaReset },
      `projections: SQLite views file dropped (${store.schemaReset}): building the views from the whole log (the log is the truth); wake bus: in process`,
    );
  } else if (!viewsOwner) {
    logger.info(
      { file, checkpoint: checkpoint?.toString() ?? null, viewsOf: logIdentity },
      `projections: reading the SQLite views file that the server keeps (at checkpoint ${checkpoint ?? 'none yet'})`,
    );
  } else if (!existed) {
    logger.info(
      { file },
      'projections: SQLite views file not found (first start, or deleted while stopped): building the views from the whole log; wake bus: in process',
    );
  } else if (checkpoint === null) {
    logger.info(
      { file },
      // An empty log's second start met "holds no views yet", which read as views lost: none were ever projected.
      'projections: SQLite views file has no checkpoint yet (nothing projected into it so far): projecting the log ' +
        'from its start; wake bus: in process',
    );
  } else {
    logger.info(
      { file, checkpoint: checkpoint.toString(), viewsOf: logIdentity },
      `projections: SQLite views resume from their stored checkpoint ${checkpoint} (no rebuild); wake bus: in process`,
    );
  }
  return viewsOwner ? store : new ReopeningSqliteViews(store, open, logger);
}

/** The Redis projection store on its own connection (also used by `mailbox projections ...`). */
export async function openRedisProjectionStore(config: MailboxConfig, logger?: Logger): Promise<RedisProjectionStore> {
  if (config.redisUrl === undefined) throw new Error('openRedisProjectionStore needs MAILBOX_REDIS_URL');
  const client = await connectRedis(config.redisUrl, { name: 'mailbox-projections', ...redisOptionsOf(config) });
  // On a Cluster a script may touch only one slot: one call per hash tag (see redisKeys.ts).
  return new RedisProjectionStore(client, {
    namespace: config.redisNamespace,
    scriptPerTag: isClusterUrl(config.redisUrl),
    logger,
  });
}

/**
 * Wake channels are shared by every mailbox on a namespace: wakes are passed
 * on only while this log is known to hold the views (see passWake), so that
 * none of another log's ever reaches this mailbox's subscribers.
 */
function ownViewsOnly(bus: WakeBus, store: RedisProjectionStore): WakeBus {
  return {
    publish: (wakes) => bus.publish(wakes),
    subscribe: (identity, listener, onGap) =>
      bus.subscribe(
        identity,
        (wake) => {
          store.passWake(() => listener(wake));
        },
        onGap,
      ),
    close: () => bus.close(),
  };
}

/**
 * The leases of the shared jobs (projector, task sweeper, heartbeat) when Redis holds the views, on their own
 * connection (a renewal never waits behind a long apply); null without Redis: the embedded views are per process
 * (memory) or per file (the SQLite views file has one writer), so this process is the only worker.
 */
export async function createLeases(config: MailboxConfig): Promise<Leases | null> {
  if (config.redisUrl === undefined) return null;
  const client = await connectRedis(config.redisUrl, { name: 'mailbox-leases', ...redisOptionsOf(config) });
  const keys = new RedisKeys(config.redisNamespace);
  return {
    lease: (name) => new RedisLease(client, keys, name),
    close: async () => {
      await closeRedis(client);
    },
  };
}
