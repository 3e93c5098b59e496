/** Chooses the event store from configuration (DESIGN section 5): SQLite in the data dir unless a URL says otherwise. */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { MailboxConfig } from '../config';
import { MailboxError } from '../errors';
import type { EventStore } from '../events/eventStore';
import { isEsdbUrl } from './eventstore/esdbClientCompat';
import { EsdbEventStore } from './eventstore/esdbEventStore';
import { MemoryEventStore } from './eventstore/memoryEventStore';
import { SqliteEventStore } from './eventstore/sqliteEventStore';
import { defaultSqliteDriver } from '../support/sqlite/sqliteDriver';
import { withoutCredentials } from '../support/urlCredentials';

/** The SQLite file the configuration names (the embedded default, or sqlite:<file>); null for any other store. */
export function sqliteLogFile(config: MailboxConfig): string | null {
  const url = config.eventStoreUrl;
  if (url === undefined) return path.resolve(config.dataDir, 'events.sqlite');
  return url.startsWith('sqlite:') ? path.resolve(url.slice('sqlite:'.length)) : null;
}

/** Where the configured SQLite log was looked for and is not, and the variable (with its value) that chose the place. */
export interface MissingLog {
  file: string;
  variable: 'MAILBOX_DATA_DIR' | 'MAILBOX_EVENTSTORE_URL';
  chosenBy: string;
}

/** The configured SQLite log when its file is not there (null: it is, or the log is not a SQLite file). */
export function missingSqliteLog(config: MailboxConfig): MissingLog | null {
  const file = sqliteLogFile(config);
  if (file === null || fs.existsSync(file)) return null;
  const embedded = config.eventStoreUrl === undefined;
  const dirMissing = !fs.existsSync(path.dirname(file));
  const chosenBy = embedded
    ? `MAILBOX_DATA_DIR is ${config.dataDir}${dirMissing ? ', a directory that does not exist' : ''}`
    : `MAILBOX_EVENTSTORE_URL is ${config.eventStoreUrl}${dirMissing ? `; there is no directory ${path.dirname(file)}` : ''}`;
  return { file, variable: embedded ? 'MAILBOX_DATA_DIR' : 'MAILBOX_EVENTSTORE_URL', chosenBy };
}

/**
 * A command that only reads the log (audit, projections status and rebuild) opens the log it is pointed at, never a
 * new one: opening a missing SQLite file creates it, with a new log identity, and the command then answered as if
 * the log were empty; a mistyped MAILBOX_DATA_DIR read as "no events" and left a stray log (and views) behind.
 * Refused instead, naming the file looked for and the variable that chose it. Other stores are not files that opening
 * makes, but a memory log is as out of reach: see refuseLogInServerMemory. `overHttp`: the command can read the log
 * from the server with --url (the audit commands but verify), which the refusal then teaches.
 */
export function requireExistingLog(config: MailboxConfig, { overHttp = false }: { overHttp?: boolean } = {}): void {
  refuseLogInServerMemory(config, overHttp);
  const missing = missingSqliteLog(config);
  if (missing === null) return;
  const { file, variable, chosenBy } = missing;
  throw new MailboxError(
    'NOT_FOUND',
    'No event log',
    `There is no event log at ${file} (${chosenBy}); check ${variable}: ` +
      'this command only reads the log and never creates one (mailbox serve creates it at its first start).',
    { file, field: variable },
  );
}

/**
 * A memory log lives only in the process of the server that writes it: another process opening memory: gets a new,
 * empty one, and answered from it ('0 of 0 events shown', views 'OK' against no events, a rebuild of nothing).
 * Refused as the missing log is (not found, exit 1), with the ways to a log this process can read.
 */
function refuseLogInServerMemory(config: MailboxConfig, overHttp: boolean): void {
  if (config.eventStoreUrl !== 'memory:') return;
  const readable =
    'a log this process can read: SQLite (unset MAILBOX_EVENTSTORE_URL for MAILBOX_DATA_DIR/events.sqlite, or ' +
    'sqlite:<file>) or EventStoreDB (esdb://host:2113?tls=false)';
  throw new MailboxError(
    'NOT_FOUND',
    'No event log',
    'MAILBOX_EVENTSTORE_URL is memory:, a log that lives only in the memory of the server that writes it: this command ' +
      'runs in a process of its own, where that log is out of reach and a memory log is always empty. ' +
      (overHttp
        ? `Point --url at the running server with an auditor or admin token (MAILBOX_AUDIT_TOKEN), or run the server on ${readable}.`
        : `Run the server on ${readable}.`),
    { field: 'MAILBOX_EVENTSTORE_URL' },
  );
}

/**
 * The configured log. `readOnly`: for a command that only reads it (a SQLite file opened read-only: nothing created or
 * changed in it; the other stores are only read by such commands anyway).
 */
export async function createEventStore(
  config: MailboxConfig,
  logger: Logger,
  { readOnly = false }: { readOnly?: boolean } = {},
): Promise<EventStore> {
  const url = config.eventStoreUrl;
  const file = sqliteLogFile(config);
  if (file !== null) {
    const driver = defaultSqliteDriver();
    const store = SqliteEventStore.open(file, driver, { readOnly });
    // Said once it opened: said before, a start refused on the file (a data dir under /proc, a file where its
    // directory goes) printed these lines above its one-line refusal, as if the log had been set up.
    if (url === undefined) logger.info({ file }, 'event store: SQLite (embedded default)');
    if (driver !== 'better-sqlite3')
      logger.warn(
        { file, driver },
        'event store: the SQLite log runs on libsql: better-sqlite3 is not installed (npm install compiles it from its ' +
          'sources and needs python3, make and a C++ compiler); libsql costs more CPU per statement and its SQLite (3.45) ' +
          'lacks the fix of the WAL-reset bug (3.51.3)',
      );
    return store;
  }
  if (url === 'memory:') return new MemoryEventStore();
  // esdb:// or kurrentdb:// (either client generation): EventStoreDB / KurrentDB, the production store.
  if (url !== undefined && isEsdbUrl(url)) return EsdbEventStore.connect(url, { logger });
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Invalid configuration',
    `MAILBOX_EVENTSTORE_URL '${withoutCredentials(String(url))}' is not supported; use esdb://host:2113?tls=false (or kurrentdb://), sqlite:<file>, memory:, ` +
      'or leave it unset for SQLite in MAILBOX_DATA_DIR.',
    { field: 'MAILBOX_EVENTSTORE_URL' },
  );
}
