/**
 * SQLite event store, the embedded default: one file, WAL, synchronous=FULL
 * (a send is on disk before it is acknowledged), one global position (the
 * rowid), atomic multi-event appends and de-duplication by event id.
 *
 * Group commit: appends that arrive in the same event-loop turn, or while the
 * previous commit is under way, are written in one IMMEDIATE transaction, so
 * that concurrent commands share one fsync. Each append runs inside its own
 * savepoint, so a conflict rolls back only that append; every caller is
 * answered only after the COMMIT is on disk. The writing connection lives in
 * a worker thread (sqliteWriter.ts): its fsync no longer blocks the event
 * loop (at 2,000 sends/s that was about a quarter of the loop's time), so
 * requests keep being parsed and views applied while a commit is on its way
 * to disk. This connection only reads.
 */
import path from 'node:path';
import {
  defaultSqliteDriver,
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteDriver,
} from '../../support/sqlite/sqliteDriver';
import type { AppendResult, EventStore, EventSubscription, ExpectedRevision } from '../../events/eventStore';
import type { NewEvent, StoredEvent } from '../../events/types';
import { AppendSignal } from './appendSignal';
import { localSubscription } from './localSubscription';
import { WalCheckpointer, WRITER_LIMIT_ALONE } from '../../support/sqlite/sqliteCheckpointer';
import { SqliteReadAhead } from './sqliteReadAhead';
import { SqliteRecentRows } from './sqliteRecentRows';
import { ensureLogIdentity, readLogIdentity } from './sqliteLogIdentity';
import { SqliteSidecar } from '../../support/sqlite/sqliteSidecar';
import { makeDirectory, OWNER_ONLY } from '../../support/makeDirectory';
import { SqliteWriter } from './sqliteWriter';
import { consecutiveCount } from './consecutiveCount';
import { isUnreadableFileError, UnreadableLogFile } from './sqliteErrors';
import {
  logRowToStored,
  prepareStatements,
  READ_ALL_SQL,
  SCHEMA,
  toStored,
  type EventRow,
  type EventStatements,
} from './sqliteStatements';

const CROSS_PROCESS_POLL_MS = 250;

interface QueuedAppend {
  stream: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** A log read-only that has no identity yet (written before identities existed; a server gives it one at its next start). */
const NO_IDENTITY = '(none yet: this log was written before logs had identities; a server gives it one at its next start)';

export class SqliteEventStore implements EventStore {
  /** Nothing deletes a stream here: 'no_stream' holds only for one never written (the writer's check). */
  readonly noStreamNeverUndeletes = true;
  private readonly signal = new AppendSignal();
  private readonly statements: EventStatements;
  private readonly sidecar: SqliteSidecar;
  private readonly checkpointer: WalCheckpointer;
  private readonly readAhead: SqliteReadAhead;
  /** What this process just wrote, for its own subscription (sqliteRecentRows.ts: exact, and why). */
  private readonly recent = new SqliteRecentRows();
  private readonly writer: SqliteWriter;
  private queue: QueuedAppend[] = [];
  /** Opened by a command that only reads the log (see open). */
  private readOnly = false;
  /** The group commit under way, if any (one at a time: the next group gathers meanwhile). */
  private committing: Promise<void> | null = null;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly file: string,
    private readonly identity: string,
    driver: SqliteDriver,
  ) {
    this.statements = prepareStatements(db);
    // Every connection to the file through the same binding (support/sqlite/sqliteDriver.ts).
    this.sidecar = new SqliteSidecar(file, READ_ALL_SQL, driver);
    this.writer = new SqliteWriter(file, WRITER_LIMIT_ALONE, driver);
    this.checkpointer = new WalCheckpointer(this.sidecar, (pages) => this.writer.setCheckpointLimit(pages));
    this.readAhead = new SqliteReadAhead(this.sidecar);
  }

  /**
   * Opens (or creates) the log; `driver`: the SQLite binding (default: better-sqlite3 if installed, else libsql).
   * `readOnly` (the commands that only read it: audit, projections): an existing file, opened query-only, nothing
   * created or changed in it; appends are refused. Opened for writing, a reader turned a backup (a rollback-journal
   * file, as `mailbox backup` writes it) into a WAL file with -wal and -shm beside it, and on a read-only medium (a
   * backup volume, a snapshot) failed with 'attempt to write a readonly database'.
   */
  static open(
    file: string,
    driver: SqliteDriver = defaultSqliteDriver(),
    { readOnly = false }: { readOnly?: boolean } = {},
  ): SqliteEventStore {
    if (readOnly) return SqliteEventStore.openReadOnly(file, driver);
    makeDirectory(path.dirname(file), OWNER_ONLY);
    const db = openSqliteDatabase(file, driver);
    let identity: string;
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      // Checkpoints run in the background (sqliteCheckpointer.ts), which sets the writer's own (fallback) threshold.
      db.exec(SCHEMA);
      identity = ensureLogIdentity(db);
    } catch (error) {
      db.close();
      throw isUnreadableFileError(error) ? new UnreadableLogFile(file, error) : error;
    }
    return new SqliteEventStore(db, file, identity, driver);
  }

  private static openReadOnly(file: string, driver: SqliteDriver): SqliteEventStore {
    // Not SQLite's read-only open: a read-only connection to a WAL file cannot remove the -wal and -shm it makes, and
    // left them in a data dir a reader must leave as it found it. query_only refuses every write; on a read-only
    // medium SQLite opens the file read-only by itself.
    const db = openSqliteDatabase(file, driver, { fileMustExist: true });
    let identity: string;
    try {
      db.pragma('query_only = ON');
      db.pragma('busy_timeout = 5000');
      identity = readLogIdentity(db) ?? NO_IDENTITY;
    } catch (error) {
      db.close();
      throw isUnreadableFileError(error) ? new UnreadableLogFile(file, error) : error;
    }
    const store = new SqliteEventStore(db, file, identity, driver);
    store.readOnly = true;
    return store;
  }

  append(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.readOnly) return Promise.reject(new Error('this event log was opened read-only: nothing is appended to it'));
    return new Promise((resolve, reject) => {
      this.queue.push({ stream: streamName, events, expected, resolve, reject });
      // setImmediate, not a microtask: the whole current turn's appends (all its promise continuations) join one commit.
      if (this.queue.length === 1 && !this.committing) setImmediate(() => this.commitQueued());
    });
  }

  /** One transaction for every queued append; each answered after the COMMIT (durable) or with its own error. */
  private commitQueued(): void {
    if (this.committing || this.queue.length === 0) return;
    const group = this.queue;
    this.queue = [];
    this.committing = this.writer.commit(group).then(
      (outcomes) => {
        let wrote = false;
        group.forEach((queued, i) => {
          const outcome = outcomes[i];
          if (outcome.ok) {
            wrote ||= queued.events.length > 0;
            if (outcome.written !== null) {
              const { position, nextExpectedRevision } = outcome.result;
              this.recent.remember(queued.stream, Number(position), Number(nextExpectedRevision), outcome.written);
            }
            queued.resolve(outcome.result);
          } else {
            queued.reject(outcome.error);
          }
        });
        if (wrote) {
          this.checkpointer.noteCommit();
          this.signal.notify();
        }
      },
      // BEGIN or COMMIT failed (busy, I/O), or the writer is gone: nothing of this group is durable; every caller hears so.
      (error: unknown) => group.forEach((queued) => queued.reject(error)),
    );
    void this.committing.finally(() => {
      this.committing = null;
      this.commitQueued(); // what gathered meanwhile
    });
  }

  async readStream(streamName: string, fromRevision = 0n): Promise<StoredEvent[]> {
    try {
      return this.readStreamRows(streamName, fromRevision);
    } catch (error) {
      throw this.unreadable(error);
    }
  }

  private readStreamRows(streamName: string, fromRevision: bigint): StoredEvent[] {
    // Commands mostly read a stream that has nothing new (a fresh message, the registry since the cached
    // revision): a one-row probe answers that ~3x cheaper than an empty multi-row query with this driver.
    const last = this.statements.lastRevision.get(streamName) as { revision: number | null };
    if (last.revision === null || last.revision < fromRevision) return [];
    return (this.statements.readStream.all(streamName, Number(fromRevision)) as EventRow[]).map(toStored);
  }

  async streamOfEvent(eventId: string): Promise<string | null> {
    const row = this.statements.streamOfEvent.get(eventId) as { stream: string } | undefined;
    return row?.stream ?? null;
  }

  async readAll(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    try {
      return await this.readAllRows(after, limit);
    } catch (error) {
      throw this.unreadable(error);
    }
  }

  /**
   * A damaged page met by a read after the file opened: said as the file it is, as at open (UnreadableLogFile), not as
   * the driver's bare 'database disk image is malformed', which `mailbox audit replay` printed as INTERNAL "Audit
   * failed" and `mailbox serve` as a stack trace, naming neither the file nor a remedy (the refusals at start say both:
   * startupChecks.ts unreadableLogRefusal). Still no 503: a damaged log is for an operator to look at.
   */
  private unreadable(error: unknown): unknown {
    return isUnreadableFileError(error) ? new UnreadableLogFile(this.file, error) : error;
  }

  private async readAllRows(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    const from = after === null ? 0 : Number(after);
    // What this process just wrote comes from memory; the file is still asked for anything after it (another process
    // may have written since), so a short page keeps meaning "the end of the log" (sqliteRecentRows.ts).
    const recent = this.recent.after(from, limit);
    if (recent.length > 0) {
      const rest = recent.length < limit ? this.statements.readAll.all(recent[recent.length - 1][0], limit - recent.length) : [];
      return [...recent, ...(rest as unknown[][])].map(logRowToStored);
    }
    const rows = (await this.readAhead.take(from, limit)) ?? (this.statements.readAll.all(from, limit) as unknown[][]);
    if (rows.length === limit) this.readAhead.noteFullPage(rows[rows.length - 1][0] as number, limit);
    return rows.map(logRowToStored);
  }

  subscribe(after: bigint | null): EventSubscription {
    let ownRowsEndAt: number | null = null;
    return localSubscription(
      async (a, l) => {
        const page = await this.readNextPage(a, l, ownRowsEndAt);
        ownRowsEndAt = page.ownRowsEndAt;
        return page.events;
      },
      this.signal,
      after,
      CROSS_PROCESS_POLL_MS,
    );
  }

  /**
   * The subscription's page: what this process just wrote, from memory, without asking the file what follows it
   * (readAll asks: its short page means "the end of the log" to every other caller). Nor is the file asked right after
   * such a page, when nothing new is held: the subscription then waits for this process's next append or its poll
   * (CROSS_PROCESS_POLL_MS), and that read asks the file; rows another process wrote are found there, in order (a
   * row of another process between two of ours leaves a hole in what is held, and a hole is read from the file).
   * That query found nothing but what a moment later's would: measured at 2,000 sends/s, it was one per append
   * wake-up, an empty page that re-read pages the writer thread's commits had invalidated, 6% of the event loop's
   * work (a CPU profile of bench http/sustainedLoad's server).
   */
  private async readNextPage(after: bigint | null, limit: number, ownRowsEndAt: number | null) {
    const from = after === null ? 0 : Number(after);
    const recent = this.recent.after(from, limit);
    if (recent.length > 0) return { events: recent.map(logRowToStored), ownRowsEndAt: recent[recent.length - 1][0] };
    if (ownRowsEndAt === from) return { events: [], ownRowsEndAt: null }; // the next read (woken or polled) asks the file
    return { events: await this.readAll(after, limit), ownRowsEndAt: null };
  }

  async headPosition(): Promise<bigint | null> {
    try {
      const row = this.statements.head.get() as { position: number | null };
      return row.position === null ? null : BigInt(row.position);
    } catch (error) {
      throw this.unreadable(error);
    }
  }

  /** The rows are numbered by AUTOINCREMENT and never deleted: the positions between two are the events between them. */
  async countEvents(after: bigint | null, through: bigint, atMost: number): Promise<number> {
    return consecutiveCount(after, through, atMost);
  }

  async logIdentity(): Promise<string> {
    return this.identity;
  }

  async close(): Promise<void> {
    // Appends already issued are written and answered, not dropped.
    while (this.committing || this.queue.length > 0) {
      this.commitQueued();
      await this.committing;
    }
    this.checkpointer.stop();
    await this.writer.close();
    await this.sidecar.close();
    this.signal.releaseAll();
    if (this.db.open) this.db.close();
  }
}
