/**
 * The composition root: the only place that picks and registers adapters.
 * Adapters are chosen by configuration; tests build a child container and
 * override. Separate processes (`mailbox heartbeat`, `mailbox audit`) open
 * their stores here too and receive them; they never build a container.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import pino, { type Logger } from 'pino';
import { nodeIdOf, type MailboxConfig } from './config';
import { TOKENS } from './tokens';
import type { SharedLimits } from './application/sharedLimits';
import { timeOrderedIds, systemClock, type Clock, type IdGenerator } from './application/runtime';
import { CommandHandler } from './application/commandHandler';
import { AgentDirectory } from './application/agentDirectory';
import { ProjectionRunner } from './projections/projectionRunner';
import { createEventStore, missingSqliteLog, requireExistingLog, sqliteLogFile } from './adapters/eventStoreFactory';
import { SqliteJsonLog } from './adapters/eventstore/sqliteJsonLog';
import {
  backupSqliteLog,
  BackupInterrupted,
  type BackupProgress,
  type SqliteBackupOptions,
  type SqliteLogBackup,
} from './adapters/eventstore/sqliteBackup';
import { causeOf, isMailboxError, MailboxError } from './errors';
import { briefCause } from './startupBackends';
import { esdbFailureCause } from './adapters/eventstore/esdbConnectFailure';
import { isEsdbUrl } from './adapters/eventstore/esdbClientCompat';
import { esdbHosts, unreadableLogRefusal } from './startupChecks';
import { UnreadableLogFile } from './adapters/eventstore/sqliteErrors';
import { AUDIT_URL, MailboxHttpClient } from './adapters/http/client/mailboxHttpClient';
import {
  createLeases,
  createProjectionAdapters,
  missingSqliteViewsFile,
  openRedisProjectionStore,
  sqliteViewsFile,
} from './adapters/projectionFactory';
import type { Leases } from './projections/projectorLease';
import type { ViewsPlace } from './projections/rebuild';
import { SqliteProjectionStore } from './adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from './adapters/wake/inProcessWakeBus';
import { closeRedis, connectRedis, redisOptionsOf } from './adapters/projections/redisConnection';
import type { NudgePublisher } from './heartbeat/targets/redisChannelTarget';
import { MemoryRejectionLog } from './adapters/rejections/memoryRejectionLog';
import { RedisRejectionLog } from './adapters/rejections/redisRejectionLog';
import { DEFAULT_REJECTION_CAPACITY, HidingRejectionLog, type RejectionLog } from './application/rejectionLog';
import { eventStoreSource, type JsonTextLog, type LogSource } from './audit/logSource';
import type { EventStore } from './events/eventStore';
import { HeldLog } from './application/heldLog';
import type { ProjectionStore, ViewsBinding } from './projections/projectionStore';
import { describeForeignViews, judgeViews } from './projections/viewsOwnership';
import { StartupError } from './startupError';
import { FreshStart } from './adapters/eventstore/sqliteFreshStart';
import { LostViews, ReadsOfWholeViews } from './projections/lostViews';
import type { ProjectionGenerations } from './projections/rebuildGenerations';
import type { WakeBus } from './projections/wakeBus';

export interface ContainerOverrides {
  clock?: Clock;
  ids?: IdGenerator;
  logger?: Logger;
}

/**
 * `viewsOwner`: this process is the mailbox that projects into the views (createMailbox), not a separate reader of
 * them (heartbeat daemon, audit verify): only the owner may move a damaged SQLite views file aside and rebuild it.
 */
export async function buildContainer(
  config: MailboxConfig,
  overrides: ContainerOverrides = {},
  { viewsOwner, readOnlyLog = false, fresh }: { viewsOwner: boolean; readOnlyLog?: boolean; fresh?: FreshStart } = {
    viewsOwner: true,
  },
): Promise<DependencyContainer> {
  const container = rootContainer.createChildContainer();
  // The library's own logger writes to stderr: a host's stdout may be its protocol (a stdio MCP server built on the
  // library), and JSON log lines there corrupted it. The CLI's processes pass their own logger (stdout, as operators read it).
  const logger = overrides.logger ?? pino({ level: config.logLevel, name: 'mailbox' }, pino.destination({ dest: 2, sync: true }));
  container.register(TOKENS.Config, { useValue: config });
  container.register(TOKENS.Clock, { useValue: overrides.clock ?? systemClock });
  container.register(TOKENS.IdGenerator, { useValue: overrides.ids ?? timeOrderedIds });
  container.register(TOKENS.Logger, { useValue: logger });
  if (!readOnlyLog) await refuseViewsOfAnotherLogBeforeCreating(config);
  if (!readOnlyLog) fresh?.createLog(); // made by this process: removed if the start is refused (sqliteFreshStart.ts)
  // Held to the log it starts on: replaced under it (an EventStoreDB reset), no write goes to the new one (heldLog.ts).
  const opened = await createEventStore(config, logger, { readOnly: readOnlyLog });
  const eventStore = new HeldLog(readOnlyLog ? await reachedLog(config, opened) : opened); // a reader: audit verify
  container.register(TOKENS.EventStore, { useValue: eventStore });
  // Refused after the log opened (a damaged or locked views file, a Redis refusing a later connection): what was opened
  // is closed, not left open (the log's -wal and -shm behind, a connection keeping the process alive).
  const opens: Array<{ close(): Promise<void> }> = [eventStore];
  try {
    await openStores(container, config, logger, viewsOwner, opens);
  } catch (error) {
    for (const store of opens.reverse()) await store.close().catch(() => undefined);
    throw error;
  }
  return container;
}

async function openStores(
  container: DependencyContainer,
  config: MailboxConfig,
  logger: Logger,
  viewsOwner: boolean,
  opens: Array<{ close(): Promise<void> }>,
): Promise<void> {
  const { projectionStore, wakeBus, sharedLimits } = await createProjectionAdapters(config, logger, { viewsOwner });
  opens.push(projectionStore, wakeBus, ...(sharedLimits ? [sharedLimits] : []));
  container.register(TOKENS.WakeBus, { useValue: wakeBus });
  if (sharedLimits) container.register(TOKENS.SharedLimits, { useValue: sharedLimits }); // else each process limits alone
  // One store for readers and the projector: its view reads are refused while lost views are rebuilt (lostViews.ts).
  const lostViews = new LostViews();
  container.register(TOKENS.LostViews, { useValue: lostViews });
  container.register(TOKENS.ProjectionStore, { useValue: new ReadsOfWholeViews(projectionStore, lostViews) });
  const rejections = await createRejectionLog(config, logger);
  opens.push(rejections);
  container.register(TOKENS.RejectionLog, { useValue: rejections });
  container.registerSingleton(TOKENS.CommandHandler, CommandHandler);
  container.registerSingleton(TOKENS.AgentDirectory, AgentDirectory);
  container.registerSingleton(TOKENS.ProjectionRunner, ProjectionRunner);
  const leases = await createLeases(config);
  if (leases) {
    opens.push(leases);
    // Shared views: one projector at a time across every process on them (projections/projectorLease.ts).
    container.register(TOKENS.Leases, { useValue: leases });
    container
      .resolve<ProjectionRunner>(TOKENS.ProjectionRunner)
      .useLease(leases.lease('projector'), nodeIdOf(config), config.projectorLeaseMs);
  }
}

/**
 * A start that would create its SQLite log (no file yet) has no views anywhere: views that belong to a log (Redis, or a
 * views file left in the data dir) are another log's, and without take-over the start is refused. Refused before the
 * log is created: the refusal came once the new log was open, and left its events.sqlite (a new log, with a new
 * identity) in a data dir that had none, and the data dir itself when it did not exist. Views that belong to no log
 * yet, unreadable ones and a take-over go on to the start's own checks; so do the other stores, which opening creates
 * nothing in.
 */
async function refuseViewsOfAnotherLogBeforeCreating(config: MailboxConfig): Promise<void> {
  const missing = missingSqliteLog(config);
  if (missing === null || config.projectionsOnForeign === 'take-over') return;
  const binding = await existingViewsBinding(config).catch(() => null);
  if (binding === null) return;
  const thisLog = `none yet: there is no event log at ${missing.file}, and this start would create a new one`;
  const verdict = judgeViews(thisLog, null, binding);
  if (verdict.kind !== 'foreign') return;
  throw new StartupError(describeForeignViews(binding, thisLog, verdict), {
    location: binding.location,
    viewsOf: binding.logIdentity,
    logIdentity: null,
    file: missing.file,
  });
}

/** The binding of views already there, read without claiming them (null: views in memory, or no views file yet). */
async function existingViewsBinding(config: MailboxConfig): Promise<ViewsBinding | null> {
  const file = sqliteViewsFile(config);
  if (config.redisUrl === undefined && (file === null || !fs.existsSync(file))) return null;
  const store =
    config.redisUrl === undefined && file !== null
      ? SqliteProjectionStore.open(file, new InProcessWakeBus(), { lockWaitMs: config.viewsLockWaitMs })
      : await openRedisProjectionStore(config);
  try {
    return await store.binding();
  } finally {
    await store.close();
  }
}

/** The leases of the shared jobs, when the views are shared (Redis); null: this process is the only worker. */
export const leasesOf = (container: DependencyContainer): Leases | null =>
  container.isRegistered(TOKENS.Leases, true) ? container.resolve<Leases>(TOKENS.Leases) : null;

/** The request limits shared by every API node, when Redis holds them (else null: each process keeps its own). */
export const sharedLimitsOf = (container: DependencyContainer): SharedLimits | null =>
  container.isRegistered(TOKENS.SharedLimits, true) ? container.resolve<SharedLimits>(TOKENS.SharedLimits) : null;
/**
 * The recent rejections: shared by the API nodes in Redis when configured, else a ring buffer in this process; each
 * record kept without a token, nor this mailbox's admin token (any text of 32 characters or more, not token-shaped).
 */
async function createRejectionLog(config: MailboxConfig, logger: Logger): Promise<RejectionLog> {
  return new HidingRejectionLog(await rejectionLogAdapter(config, logger), config.adminToken);
}

async function rejectionLogAdapter(config: MailboxConfig, logger: Logger): Promise<RejectionLog> {
  if (config.redisUrl === undefined) return new MemoryRejectionLog(DEFAULT_REJECTION_CAPACITY);
  // With the credentials and TLS settings every other connection uses: without them, a Redis that asks for a password
  // (MAILBOX_REDIS_PASSWORD) refused this one, and the server did not start.
  const client = await connectRedis(config.redisUrl, { name: 'mailbox-rejections', ...redisOptionsOf(config) });
  return new RedisRejectionLog(client, config.redisNamespace, DEFAULT_REJECTION_CAPACITY, logger);
}

export type ProjectorMode = 'auto' | 'on' | 'off';

/** The stores of a separate process (heartbeat daemon, audit verify), opened from the same configuration as the server's. */
export interface OpenedPipeline {
  eventStore: EventStore;
  projections: ProjectionStore;
  wakeBus: WakeBus;
  /** True when this process runs its own projector (embedded default: in-memory views rebuilt from the log). */
  runsProjector: boolean;
  /**
   * Whether wake events reach this process: the server's through Redis pub/sub, or its own projector's. False on the
   * embedded default without a projector here: the server publishes its wakes in its own process only.
   */
  hearsWakes: boolean;
  /** The leases of the shared jobs when the views are shared (Redis), else null. */
  leases: Leases | null;
  close(): Promise<void>;
}

/** What a first start created, removed when it is refused (adapters/eventstore/sqliteFreshStart.ts): read before it opens anything. */
export const freshStartOf = (config: MailboxConfig): FreshStart => FreshStart.before(sqliteLogFile(config));
export type { FreshStart };
/** Where the SQLite views of this configuration live (null: in memory or in Redis). */
export { sqliteViewsFile };
/** That file when it is not there: a command that only reads the views must not open it (opening creates it). */
export { missingSqliteViewsFile };
/** Refuses a configured SQLite log that is not there, for a command that only reads it (opening would create it). */
export { requireExistingLog };
/** The configured SQLite log when it is not there: where it was looked for, and the variable that chose the place. */
export { missingSqliteLog, sqliteLogFile };

export const viewsAreInMemory = (config: MailboxConfig): boolean =>
  config.redisUrl === undefined && sqliteViewsFile(config) === null;

/**
 * What puts in-memory views in a SQLite file that a command outside the server can read: unsetting MAILBOX_VIEWS=memory
 * (the default keeps them beside the log), or, on EventStoreDB, where the default keeps them in memory (there is no log
 * file for them to sit beside), setting MAILBOX_VIEWS=sqlite. Telling an EventStoreDB operator to unset a variable that
 * is not set taught nothing.
 */
export const sqliteViewsRemedy = (config: MailboxConfig): string =>
  config.views === 'memory' ? 'unset MAILBOX_VIEWS' : 'set MAILBOX_VIEWS=sqlite on the server and here';

/**
 * A projector runs here only when asked, or (auto) when the views live in this process's memory: with Redis or the
 * SQLite views file the server's projector owns them, and a second one would hide its stall (and publish, in its own
 * process, the wakes of the events it applied first: the server's subscribers would never hear them).
 */
export async function openPipeline(
  config: MailboxConfig,
  logger: Logger,
  projector: ProjectorMode,
  { readOnlyLog = false }: { readOnlyLog?: boolean } = {},
): Promise<OpenedPipeline> {
  const runsProjector = projector === 'on' || (projector === 'auto' && viewsAreInMemory(config));
  // Without a projector, the server's views: read, never moved. With one (asked for), this process owns the SQLite
  // views file as the server does: refused while a server owns it (sqliteViewsOwnerLock.ts says why).
  // A log file that is no SQLite database: the readers' line (audit verify; the heartbeat, which creates no log either).
  const container = await readableLog(config, () =>
    buildContainer(config, { logger }, { viewsOwner: runsProjector, readOnlyLog }),
  );
  const eventStore = container.resolve<EventStore>(TOKENS.EventStore);
  const projections = container.resolve<ProjectionStore>(TOKENS.ProjectionStore);
  const wakeBus = container.resolve<WakeBus>(TOKENS.WakeBus);
  const runner = runsProjector ? container.resolve<ProjectionRunner>(TOKENS.ProjectionRunner) : null;
  const rejections = container.resolve<RejectionLog>(TOKENS.RejectionLog);
  const close = async () => {
    await runner?.stop();
    await leasesOf(container)?.close();
    await wakeBus.close();
    await sharedLimitsOf(container)?.close();
    await projections.close();
    await rejections.close();
    await eventStore.close();
  };
  try {
    await runner?.start();
  } catch (error) {
    // Refused at its start (views of another log, or ahead of this one's head): what was opened is closed, or the
    // refusal was said and the process stayed up on its Redis connections (`mailbox heartbeat --projector on`).
    await close().catch(() => undefined);
    throw error;
  }
  return {
    eventStore,
    projections,
    wakeBus,
    runsProjector,
    hearsWakes: config.redisUrl !== undefined || runsProjector,
    leases: leasesOf(container),
    close,
  };
}

/**
 * The heartbeat's nudges on `mailbox:heartbeat:<identity>` through the mailbox's own Redis (MAILBOX_REDIS_URL or the
 * Sentinel and Cluster variables, with MAILBOX_REDIS_PASSWORD, TLS...), or null without Redis. The daemon made its own
 * connection from MAILBOX_REDIS_URL alone: without the credentials (every publish refused), and a Sentinel or Cluster
 * URL stopped it at start, as if MAILBOX_HEARTBEAT_REDIS_URL had been set wrong.
 */
export async function openNudgePublisher(config: MailboxConfig): Promise<NudgePublisher | null> {
  if (config.redisUrl === undefined) return null;
  const client = await connectRedis(config.redisUrl, { name: 'mailbox-heartbeat-nudges', ...redisOptionsOf(config) });
  return {
    publish: (channel, message) => client.publish(channel, message),
    close: () => closeRedis(client),
  };
}

/**
 * Where an auditor reads the log: a server over HTTP (auditor or admin token), else the configured event store
 * (a SQLite file that is not there is refused, never created; so is a memory log, out of reach of this process).
 */
export async function openAuditLog(
  config: MailboxConfig,
  logger: Logger,
  remote?: { url: string; token: string },
): Promise<{ source: LogSource; close(): Promise<void> }> {
  if (remote !== undefined) {
    const client = new MailboxHttpClient(remote.url, remote.token, AUDIT_URL); // audit reads no MAILBOX_URL
    // The HTTP API serves at most 1000 events per page; its /readyz tells the log head.
    return {
      source: {
        pageSize: 1000,
        readAll: (after, limit) => client.auditEvents(after, limit),
        readStream: null,
        head: () => client.logHead(),
      },
      close: async () => {},
    };
  }
  const store = await openEventLog(config, logger, { overHttp: true }); // a memory log: refused, teaching --url
  return { source: eventStoreSource(store), close: () => store.close() };
}

export { BackupInterrupted, type BackupProgress, type SqliteLogBackup };

/**
 * `mailbox backup`: a consistent copy of the configured SQLite log, taken while a server writes it
 * (adapters/eventstore/sqliteBackup.ts). A log that is not there, or only in a server's memory, is refused as for the
 * other read-only commands; an EventStoreDB log is refused with its own way to a backup.
 */
export function backupEventLog(
  config: MailboxConfig,
  destination: string,
  options: SqliteBackupOptions = {},
): Promise<SqliteLogBackup> {
  requireExistingLog(config);
  const file = sqliteLogFile(config);
  if (file === null) {
    // Not the URL itself in the message: an esdb: URL may carry a password.
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Not a SQLite log',
      'mailbox backup copies a SQLite event log, and this mailbox logs to EventStoreDB (MAILBOX_EVENTSTORE_URL is an ' +
        "esdb: URL): back that up with EventStoreDB's own tools (a copy of its database directory, or its cloud " +
        'backups; see its documentation). The views need no backup: a server rebuilds them from the log.',
      { field: 'MAILBOX_EVENTSTORE_URL' },
    );
  }
  return backupSqliteLog(file, destination, options).catch((error: unknown) => {
    throw readerRefusal(error, config); // a log file that is no SQLite database: the readers' line
  });
}

/**
 * The configured log for a command that only reads it: one that is not there (or only in a server's memory) is
 * refused, never created; `overHttp` when the command could read it from the server with --url instead.
 */
export async function openEventLog(
  config: MailboxConfig,
  logger: Logger,
  options: { overHttp?: boolean } = {},
): Promise<EventStore> {
  requireExistingLog(config, options);
  return reachedLog(config, await readableLog(config, () => createEventStore(config, logger, { readOnly: true })));
}

/** A reader's log opened, a file that is no SQLite database said as serve says it, with a reader's remedies. */
async function readableLog<T>(config: MailboxConfig, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    throw readerRefusal(error, config);
  }
}

const readerRefusal = (error: unknown, config: MailboxConfig): unknown =>
  error instanceof UnreadableLogFile ? unreadableLogRefusal(error, config, { reader: true }) : error;

/**
 * A command's EventStoreDB log, looked at once before use: it connects at the first call, and an unreachable one was
 * said as "The event store (EventStoreDB) is unavailable; retry later", naming neither its address nor its variable.
 * (The server probes its backends at start, with retries: startupBackends.ts.)
 */
async function reachedLog(config: MailboxConfig, log: EventStore): Promise<EventStore> {
  const esdbUrl = config.eventStoreUrl;
  if (esdbUrl === undefined || !isEsdbUrl(esdbUrl)) return log;
  try {
    await log.headPosition();
    return log;
  } catch (error) {
    await log.close().catch(() => undefined);
    if (!isMailboxError(error) || error.code !== 'UNAVAILABLE') throw error;
    // The socket's own words (ECONNREFUSED 127.0.0.1:2113), as the server's start says them: the error's message is the
    // client-facing "The event store (EventStoreDB) is unavailable; retry later (the request was not applied).", which
    // the line showed in its parentheses, telling of a request that nobody made.
    const cause = esdbFailureCause(briefCause(causeOf(error) ?? String(error.envelope.cause ?? error.message)), esdbUrl);
    throw new MailboxError(
      'UNAVAILABLE',
      'Service unavailable',
      `EventStoreDB at ${esdbHosts(esdbUrl)} is unreachable (${cause}): start it, or fix MAILBOX_EVENTSTORE_URL. Nothing was read.`,
      { field: 'MAILBOX_EVENTSTORE_URL' },
    );
  }
}

/** `audit replay --json`'s fast path: the configured SQLite file read directly as JSON text (never created); null for other stores. */
export function openJsonTextLog(config: MailboxConfig): JsonTextLog | null {
  const file = sqliteLogFile(config);
  if (file === null) return null;
  requireExistingLog(config);
  try {
    return SqliteJsonLog.open(file);
  } catch (error) {
    throw readerRefusal(error, config);
  }
}

/**
 * `mailbox projections rebuild | status`: the configured log and the generations of the shared views (Redis, or the
 * SQLite views file), opened without a projector (the servers' projector keeps following the log meanwhile). Only a
 * rebuild drops a views file of another schema (to rebuild it); status, a reader, refuses it and leaves it as it is.
 */
export async function openProjectionMaintenance(
  config: MailboxConfig,
  logger: Logger,
  { rebuildOtherSchema }: { rebuildOtherSchema: boolean },
): Promise<{ log: EventStore; generations: ProjectionGenerations; views: ViewsPlace; close(): Promise<void> }> {
  const log = await openEventLog(config, logger); // before the views too: a views file of no log is not made either
  const file = sqliteViewsFile(config);
  const open = async () =>
    config.redisUrl === undefined && file !== null
      ? SqliteProjectionStore.open(file, new InProcessWakeBus(), { rebuildOtherSchema, lockWaitMs: config.viewsLockWaitMs })
      : openRedisProjectionStore(config, logger);
  const store = await open().catch(async (error: unknown) => {
    await log.close();
    throw error;
  });
  const close = async () => {
    await store.close();
    await log.close();
  };
  try {
    const { location, elsewhere } = await store.binding(); // the store's words for where the views are, for refusals
    return { log, generations: store.generations(), views: { location, elsewhere }, close };
  } catch (error) {
    await close();
    throw error;
  }
}
