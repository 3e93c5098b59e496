/**
 * SQLite projection store (the embedded default): the views in their own
 * file beside the log (views.sqlite), so that projection writes never contend
 * with appends for the log's write lock, and a restart resumes from the
 * stored checkpoint instead of rebuilding from the whole log. Nothing that
 * grows with the number of messages is kept in process memory.
 *
 * Storage around the read model, like the memory store: applyEvents runs the
 * pure rules over a SqliteViewWriter (the lookup and the sink over one
 * generation's tables; sqliteViews/). Every chunk of a batch is ONE
 * transaction that reads the checkpoint, applies the events after it, and
 * moves it: a redelivered event, or a batch re-sent after a crash, changes
 * nothing, and a crash mid-transaction leaves no trace (SQLite rolls it back).
 * Wakes are published after the commit.
 *
 * Durability: WAL with synchronous=NORMAL. A commit is not fsynced, so a
 * power loss may lose the last few transactions, but never part of one: the
 * views and their checkpoint go back together, and the projector re-applies
 * those events from the log (which is fsynced before a send is acknowledged).
 * A lost view is thus only late, never wrong; FULL would buy nothing but an
 * fsync per batch.
 *
 * The SQLite binding: support/sqlite/sqliteDriver.ts (better-sqlite3 when installed, else libsql).
 *
 * A long catch-up into empty views is built in bulk (sqliteViews/sqliteBulkBuild.ts): large batches, one
 * transaction each, listing indexes created once at the end.
 *
 * Blue/green (sqliteViews/sqliteGenerations.ts): each generation is a set of
 * tables in this file and `views_meta` names the active one. Writers read the
 * active generation inside each transaction (a switch is atomic for them);
 * readers look it up at each read.
 */
import path from 'node:path';
import { MailboxError, operatorNeeded } from '../../errors';
import type { ListQuery } from '../../projections/listQuery';
import {
  ProjectionCheckpointRewound,
  ViewsOfAnotherLog,
  type AgentEntries,
  type AgentView,
  type ApplyOptions,
  type HeartbeatCounts,
  type HistoryLinePage,
  type LedgerIdPage,
  type ProjectionStore,
  type UnreadCount,
  type ViewPage,
  type ViewsBinding,
} from '../../projections/projectionStore';
import { applyEvents } from '../../projections/readModel/applyEvents';
import type { TaskView } from '../../projections/readModel/taskView';
import type {
  DueReply,
  LastNudge,
  LedgerPage,
  LedgerQuery,
  UnwokenPage,
  UnwokenQuery,
  WholeLedger,
} from '../../projections/readModel/ledger';
import type { TaskListQuery, TaskViewPage } from '../../projections/readModel/taskViewsMemory';
import type { ProjectionGenerations } from '../../projections/rebuildGenerations';
import type { ProjectedEvent, WakeEvent } from '../../projections/viewChanges';
import type { WakeBus } from '../../projections/wakeBus';
import { sleep } from '../../support/retry';
import { makeDirectory, OWNER_ONLY } from '../../support/makeDirectory';
import { WalCheckpointer } from '../../support/sqlite/sqliteCheckpointer';
import { SqliteSidecar } from '../../support/sqlite/sqliteSidecar';
import { BULK_MIN_EVENTS, SqliteBulkBuild } from './sqliteViews/sqliteBulkBuild';
import {
  damagedFileRefused,
  unopenableFileRefused,
  damageMark,
  isDamagedFileError,
  markDamaged,
  markedDamage,
  moveDamagedAside,
  rebuildViewsFailure,
  type RebuildStep,
  sqliteSaid,
  viewsFileDamaged,
} from './sqliteViews/sqliteViewsDamage';
import { SqliteGenerations } from './sqliteViews/sqliteGenerations';
import { otherSchemaRefused, SqliteViewsMeta } from './sqliteViews/sqliteViewsMeta';
import { SqliteViewReader } from './sqliteViews/sqliteViewReader';
import { dropKeptOnFailure, SqliteViewWriter } from './sqliteViews/sqliteViewWriter';
import {
  defaultSqliteDriver,
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteDriver,
} from '../../support/sqlite/sqliteDriver';

/** How long the file's opening and writes wait for another process's lock (SqliteProjectionOptions.lockWaitMs). */
const lockWaitOf = (options: SqliteProjectionOptions): number => Math.max(0, Math.floor(options.lockWaitMs ?? 5000));

export interface SqliteProjectionOptions {
  /**
   * At most this many events per live transaction (default 2000), and at most `transactionBudgetMs` of work:
   * a transaction runs synchronously, so it is kept short enough for requests to be answered between two of
   * them; the next one starts on the next turn. Larger transactions write a page that several events dirty
   * once (with 1,000 owners most pages are dirtied by one event, but counters, messages and index edges are shared).
   */
  eventsPerTransaction?: number;
  /** Milliseconds of work after which a live transaction commits (default 10): the event loop's longest wait. */
  transactionBudgetMs?: number;
  /** Events per transaction while building a generation nobody reads yet (default 2000). */
  rebuildEventsPerTransaction?: number;
  /**
   * How long a generation under construction stays marked as built by a live rebuild without a renewal (default 15 s,
   * renewed every third of it; sqliteGenerations.ts). Past it, the generation is a leftover that the next rebuild drops.
   */
  buildingTtlMs?: number;
  /** SQLite's page cache for this file, in KiB (default 16 MiB): the bound on what the views keep in memory. */
  cacheKiB?: number;
  /**
   * How long opening or writing the file waits for a lock another process holds (SQLite's busy wait; default 5000 ms,
   * MAILBOX_VIEWS_LOCK_WAIT_MS); past it, a file locked at open is refused as 'Views file locked'.
   */
  lockWaitMs?: number;
  /** The SQLite binding (default: better-sqlite3 if installed, else libsql; support/sqlite/sqliteDriver.ts). */
  driver?: SqliteDriver;
  /**
   * Move a damaged file aside at open and start an empty one (sqliteViews/sqliteViewsDamage.ts). Only for the views'
   * owner, the mailbox that projects into them (default false: a reader fails with a message saying what to do).
   */
  recoverDamaged?: boolean;
  /**
   * Drop a file's views of another schema at open and start an empty generation that the projector builds from the
   * log (sqliteViewsMeta.ts). Only for the views' owner and a rebuild (default false: a reader, such as audit verify
   * or the heartbeat, refuses with the remedy and leaves the file as it is; it dropped the views under a running server).
   */
  rebuildOtherSchema?: boolean;
  /**
   * Read the file through a memory map of up to this many bytes (SQLite's mmap_size; default 0, none). For a process
   * that only reads the views (audit verify, the heartbeat daemon, read-only commands): without it every page SQLite's
   * cache misses is a read() system call and a copy, and verify's walk over every listing and ledger at 1,000,000
   * events spent more time in them than in the comparing. The server keeps it off: mapped pages count in its RSS,
   * and an I/O error on a mapped page is a signal instead of an error answered.
   */
  mapBytes?: number;
}

export interface DamagedFileMovedAside {
  /** What SQLite said of the file (or of it while running, for a file marked then). */
  reason: string;
  /** Where the damaged file (and its -wal, -shm) went. */
  movedTo: string;
}

/** A rebuild holds live writers for milliseconds while it switches; they wait that out (its fence expires by itself). */
const FENCE_WAIT_MS = 5;
const MAX_FENCE_WAIT_MS = 10_000;
/**
 * How long the views' commits gather before the sidecar checkpoints them: 20 ms, as the log's. Measured (issue 10,
 * http/sustainedLoad at 1,500 sends/s with the views on their thread, a timing of each transaction's parts): a COMMIT
 * that runs while a checkpoint syncs the file it writes to stalls, and the larger the checkpoint the longer: with
 * 1 s of commits per checkpoint, a COMMIT of one event took 25-60 ms every ~0.5 s and the views' apply reached 55-90
 * ms per 5 s window; with 20 ms, COMMITs over 15 ms were rare (14-16 in 25 s, <= 23 ms) and apply max 25-41 ms.
 */
const CHECKPOINT_DELAY_MS = 20;
/** Events applied between two looks at a live transaction's clock. */
const STEP = 16;

export class SqliteProjectionStore implements ProjectionStore {
  readonly backend = 'sqlite' as const;
  readonly meta: SqliteViewsMeta;
  private readonly bulk: SqliteBulkBuild;
  private readonly writers = new Map<string, SqliteViewWriter>();
  private readonly readers = new Map<string, SqliteViewReader>();
  private readonly generationsOfViews: SqliteGenerations;
  /** How long a write waits for another connection's lock (MAILBOX_VIEWS_LOCK_WAIT_MS), for the refusal past it. */
  private readonly lockWaitMs: number;
  private readonly eventsPerTransaction: number;
  private readonly transactionBudgetMs: number;
  /**
   * WAL checkpoints of the views file on another thread (support/sqlite/sqliteCheckpointer.ts). Left to this
   * connection, a checkpoint ran inside the COMMIT of whichever views transaction crossed the WAL limit: at
   * 1,500 sends/s COMMITs were ~20% of the main thread (profile of bench http/sustainedLoad, issue 10).
   */
  private readonly sidecar: SqliteSidecar;
  private readonly checkpointer: WalCheckpointer;
  /** The log this store applies and serves for (set by claim); null: an unbound tool. */
  private claimed: string | null = null;
  /** The highest checkpoint this store committed: a stored one below it means the views were dropped under it. */
  private expected: bigint | null = null;
  /** The generation `expected` was committed to (after a switch the new generation's checkpoint is the reference). */
  private expectedIn: string | null = null;
  /** Applies run one after another (each may span several turns), in call order. */
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Why the file's views were dropped at open to be rebuilt from the log (another schema); null: kept. */
  schemaReset: string | null = null;
  /** The file was unreadable (or marked damaged by an earlier run) and moved aside at open; null: it was fine. */
  damagedFileMovedAside: DamagedFileMovedAside | null = null;
  /** The SQLite binding of this file's connections (the writing thread is told to use the same). */
  readonly driver: SqliteDriver;

  private constructor(
    private readonly db: SqliteDatabase,
    readonly file: string,
    private readonly wakeBus: WakeBus,
    options: SqliteProjectionOptions & { driver: SqliteDriver }, // the binding `db` was opened with
  ) {
    this.lockWaitMs = lockWaitOf(options);
    this.eventsPerTransaction = options.eventsPerTransaction ?? 2000;
    this.transactionBudgetMs = options.transactionBudgetMs ?? 10;
    this.driver = options.driver;
    this.sidecar = new SqliteSidecar(file, null, this.driver); // the same binding as this connection's
    this.checkpointer = new WalCheckpointer(
      this.sidecar,
      (pages) => db.pragma(`wal_autocheckpoint = ${pages}`),
      CHECKPOINT_DELAY_MS,
    );
    this.meta = new SqliteViewsMeta(db);
    this.bulk = new SqliteBulkBuild(db, this.meta);
    this.generationsOfViews = new SqliteGenerations(
      db,
      this.meta,
      this.bulk,
      (g) => this.writer(g),
      options.rebuildEventsPerTransaction ?? 2000,
      options.buildingTtlMs,
      (error, generation, step) =>
        this.rebuildFailure(error, generation, step ? { lockWaitMs: lockWaitOf(options), step } : undefined),
    );
  }

  /**
   * Opens (or creates) the views file. With `recoverDamaged` (the views' owner), a file SQLite cannot read, or one an
   * earlier run found damaged, is moved aside first and a new one created (`damagedFileMovedAside` says so;
   * sqliteViews/sqliteViewsDamage.ts); without, a file SQLite cannot read is refused with the remedy.
   */
  static open(file: string, wakeBus: WakeBus, options: SqliteProjectionOptions = {}): SqliteProjectionStore {
    makeDirectory(path.dirname(file), OWNER_ONLY);
    const driver = options.driver ?? defaultSqliteDriver();
    const now = new Date();
    const recover = options.recoverDamaged === true;
    const marked = recover ? damageMark(file) : null;
    let movedAside: DamagedFileMovedAside | null = null;
    if (marked !== null) movedAside = { reason: `found damaged while running: ${marked}`, movedTo: moveDamagedAside(file, now) };
    let store: SqliteProjectionStore;
    try {
      store = SqliteProjectionStore.openFile(file, wakeBus, options, driver);
    } catch (error) {
      if (!isDamagedFileError(error)) throw unopenableFileRefused(file, error, lockWaitOf(options)) ?? error;
      if (!recover) throw damagedFileRefused(file, error);
      movedAside = { reason: sqliteSaid(error), movedTo: moveDamagedAside(file, now) };
      store = SqliteProjectionStore.openFile(file, wakeBus, options, driver);
    }
    store.damagedFileMovedAside = movedAside;
    return store;
  }

  private static openFile(
    file: string,
    wakeBus: WakeBus,
    options: SqliteProjectionOptions,
    driver: SqliteDriver,
  ): SqliteProjectionStore {
    const db = openSqliteDatabase(file, driver);
    try {
      db.pragma(`busy_timeout = ${lockWaitOf(options)}`); // first: setting the journal mode may wait for a lock too
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL'); // crash-consistent for views: see the header
      db.pragma(`cache_size = -${Math.max(1024, options.cacheKiB ?? 16 * 1024)}`);
      if (options.mapBytes !== undefined) db.pragma(`mmap_size = ${Math.max(0, Math.floor(options.mapBytes))}`);
      const store = new SqliteProjectionStore(db, path.resolve(file), wakeBus, { ...options, driver });
      const other = options.rebuildOtherSchema === true ? null : store.meta.otherSchema();
      if (other !== null) throw otherSchemaRefused(store.file, other);
      store.schemaReset = store.meta.ensureActive();
      // The checkpoint row, which every start reads first (binding): a damaged page there is found here, at open, and
      // moved aside (or refused, by a reader) as a damaged schema is; it was a stack trace that stopped every start.
      store.writer(store.meta.active()).state();
      return store;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  get location(): string {
    return `the SQLite views file ${this.file}`;
  }

  generations(): ProjectionGenerations {
    return this.generationsOfViews;
  }

  writer(generation: string): SqliteViewWriter {
    let writer = this.writers.get(generation);
    if (writer === undefined) {
      writer = new SqliteViewWriter(this.db, generation);
      this.writers.set(generation, writer);
    }
    return writer;
  }

  private reader(generation: string): SqliteViewReader {
    let reader = this.readers.get(generation);
    if (reader === undefined) {
      for (const name of this.readers.keys()) this.readers.delete(name); // an older generation is never read again
      reader = new SqliteViewReader(this.db, generation);
      this.readers.set(generation, reader);
    }
    return reader;
  }

  applyBatch(batch: readonly ProjectedEvent[], options: ApplyOptions = {}): Promise<void> {
    const applied = this.tail
      .then(() => this.applyInChunks(batch, options.publishWakes !== false))
      .catch((error: unknown) => {
        throw this.damaged(error);
      });
    this.tail = applied.catch(() => undefined);
    return applied;
  }

  private async applyInChunks(batch: readonly ProjectedEvent[], publishWakes: boolean): Promise<void> {
    // A live batch (small) reads nothing before its transaction: a read outside one is a read transaction of its own,
    // as costly as the lookup itself is cheap inside (applyChunk finishes an interrupted bulk build there).
    const bulk = batch.length >= BULK_MIN_EVENTS && this.beginBulk(batch.length);
    const size = bulk ? batch.length : this.eventsPerTransaction;
    const budgetMs = bulk ? Infinity : this.transactionBudgetMs;
    for (let start = 0; start < batch.length;) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve)); // let requests in between two transactions
      const applied = await this.applyChunk(batch, start, Math.min(batch.length, start + size), budgetMs, bulk);
      start = applied.end;
      if (applied.wakes.length > 0 && publishWakes) await this.wakeBus.publish(applied.wakes);
    }
  }

  /**
   * One transaction: the checkpoint, the events after it from `start` (up to `limit`, or fewer once `budgetMs`
   * is spent: the clock is looked at every STEP events), the new checkpoint. Returns where it stopped and the
   * wakes due once committed.
   */
  private async applyChunk(
    batch: readonly ProjectedEvent[],
    start: number,
    limit: number,
    budgetMs: number,
    bulk: boolean,
  ): Promise<{ wakes: WakeEvent[]; end: number }> {
    for (let waitedMs = 0; ; waitedMs += FENCE_WAIT_MS) {
      const outcome = dropKeptOnFailure(this.writers.values(), () =>
        this.meta.transaction(() => {
          const active = this.meta.active();
          if (this.meta.fencedBy(Date.now()) !== null) return 'fenced' as const;
          if (!bulk) this.bulk.finishWithin(active); // live batches keep every index in step
          const writer = this.writer(active);
          writer.beginBatch();
          const state = writer.state();
          if (this.expectedIn !== active) {
            this.expected = null; // a rebuild switched generations: its checkpoint gates what it already has
            this.expectedIn = active;
          }
          if (this.claimed !== null && state.logIdentity !== null && state.logIdentity !== this.claimed)
            throw new ViewsOfAnotherLog(this.location, state.logIdentity, this.claimed);
          if (this.expected !== null && (state.checkpoint === null || state.checkpoint < this.expected))
            throw new ProjectionCheckpointRewound(state.checkpoint, this.expected);
          if (this.claimed !== null && state.logIdentity === null) writer.setLogIdentity(this.claimed);
          const wakes: WakeEvent[] = [];
          try {
            const deadline = performance.now() + budgetMs;
            let last = state.checkpoint;
            let end = start;
            do {
              const next = Math.min(limit, end + STEP);
              last = applyEvents(writer, batch.slice(end, next), last, wakes);
              end = next;
            } while (end < limit && performance.now() < deadline);
            writer.flush();
            if (last !== state.checkpoint) writer.setCheckpoint(last);
            return { wakes, checkpoint: last, end };
          } finally {
            writer.forget();
          }
        }),
      );
      if (outcome === 'fenced') {
        if (waitedMs >= MAX_FENCE_WAIT_MS) throw new Error(`SQLite views: held by a rebuild for over ${MAX_FENCE_WAIT_MS} ms`);
        await sleep(FENCE_WAIT_MS);
        continue;
      }
      if (outcome.checkpoint !== null && (this.expected === null || outcome.checkpoint > this.expected))
        this.expected = outcome.checkpoint;
      this.checkpointer.noteCommit();
      return outcome;
    }
  }

  /** Whether a large batch goes in bulk (sqliteBulkBuild.ts): into the active generation, empty or being bulk-built. */
  private beginBulk(events: number): boolean {
    const generation = this.meta.active();
    return this.bulk.begin(generation, events, () => this.writer(generation).state().checkpoint === null);
  }

  async checkpoint(): Promise<bigint | null> {
    return this.writer(this.meta.active()).state().checkpoint;
  }

  async binding(): Promise<ViewsBinding> {
    const generation = this.meta.active();
    const { logIdentity, checkpoint } = this.writer(generation).state();
    return {
      location: this.location,
      logIdentity,
      checkpoint,
      generation,
      liveWriter: this.meta.liveWriter(Date.now()),
      elsewhere: 'move the views file away (it is then rebuilt from this log at start)',
    };
  }

  async claim(logIdentity: string): Promise<ViewsBinding> {
    try {
      this.meta.transaction(() => {
        const writer = this.writer(this.meta.active());
        const state = writer.state();
        if (state.logIdentity === null && state.checkpoint === null) writer.setLogIdentity(logIdentity);
      });
    } catch (error) {
      // The start's first write to the file: another process's lock (an exclusive transaction on a file in WAL mode
      // lets the open through) was SQLite's 'database is locked' with a stack trace; said as a lock at open is.
      throw unopenableFileRefused(this.file, error, this.lockWaitMs) ?? error;
    }
    this.claimed = logIdentity; // from now on only this log's views are read or written, whoever holds them now
    return this.binding();
  }

  async markLiveWriter(logIdentity: string): Promise<void> {
    this.meta.transaction(() => {
      if (this.writer(this.meta.active()).state().logIdentity === logIdentity) this.meta.markLiveWriter(logIdentity, Date.now());
    });
  }

  async releaseLiveWriter(logIdentity: string): Promise<void> {
    if (!this.closed) this.meta.releaseLiveWriter(logIdentity);
  }

  async listMessages(identity: string, query: ListQuery): Promise<ViewPage> {
    return this.read((reader) => reader.listMessages(identity, query));
  }

  async unreadCount(identity: string): Promise<UnreadCount> {
    return this.read((reader) => reader.unreadCount(identity));
  }

  async heartbeat(identity: string): Promise<HeartbeatCounts> {
    return this.read((reader) => reader.heartbeat(identity));
  }

  async allHeartbeats(): Promise<HeartbeatCounts[]> {
    return this.read((reader) => reader.heartbeatIdentities().map((identity) => reader.heartbeat(identity)));
  }

  async listAgents(): Promise<AgentView[]> {
    return this.read((reader) => reader.agents());
  }

  async agentEntries(identity: string): Promise<AgentEntries> {
    return this.read((reader) => ({
      agent: reader.agent(identity),
      heartbeat: reader.hasHeartbeat(identity) ? reader.heartbeat(identity) : undefined,
    }));
  }

  async listTasks(identity: string, query: TaskListQuery): Promise<TaskViewPage> {
    return this.read((reader) => reader.listTasks(identity, query));
  }

  async getTask(taskId: string): Promise<TaskView | undefined> {
    return this.read((reader) => reader.task(taskId));
  }

  async taskOfHistoryLine(eventId: string): Promise<string | null> {
    return this.read((reader) => reader.taskOfHistoryLine(eventId));
  }

  async taskHistoryLines(after: string | null, limit: number): Promise<HistoryLinePage> {
    return this.read((reader) => reader.historyLines(after, limit));
  }

  async dueTasks(now: string, limit: number, after?: string): Promise<TaskView[]> {
    return this.read((reader) => reader.dueTasks(now, limit, after));
  }

  async deliveryLedger(messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined> {
    return this.read((reader) => reader.ledger.page(messageId, query));
  }

  async deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage> {
    return this.read((reader) => reader.ledger.ledgerIds(after, limit));
  }

  async deliveryLedgers(messageIds: readonly string[]): Promise<Map<string, WholeLedger>> {
    return this.read((reader) => reader.ledger.wholeLedgers(messageIds));
  }

  async unwoken(query: UnwokenQuery): Promise<UnwokenPage> {
    return this.read((reader) => reader.ledger.unwoken(query));
  }

  async lastNudges(): Promise<Map<string, LastNudge>> {
    return this.read((reader) => reader.ledger.lastNudges());
  }

  async dueReplies(dueBy: string, limit: number): Promise<DueReply[]> {
    return this.read((reader) => reader.ledger.dueReplies(dueBy, limit));
  }

  /** Why the file is known to be damaged: the mark left beside it by whichever connection found it (this one, the writing thread's, another process's). */
  damage(): string | null {
    return markedDamage(this.file);
  }

  /** Drops the active generation's views, its checkpoint and its log. */
  async reset(): Promise<void> {
    await this.tail;
    this.generationsOfViews.clear(this.meta.active());
    this.expected = null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.tail;
    this.closed = true;
    this.checkpointer.stop();
    this.generationsOfViews.stop();
    await this.sidecar.close();
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)'); // a cleanly stopped store leaves one self-contained file
    } catch {
      // another connection (a rebuild, a reader) is using the file: the WAL stays and the next open reads it
    }
    this.db.close();
  }

  /** Reads come only from this log's views; another log's answer 503 (and say why). A read is one synchronous look. */
  private readActive<T>(query: (reader: SqliteViewReader) => T): T {
    const generation = this.meta.active();
    this.bulk.finish(generation); // a bulk build's listing indexes exist before anything is listed
    if (this.claimed !== null) {
      const owner = this.writer(generation).state().logIdentity;
      if (owner !== this.claimed) {
        const whose = `The views in ${this.location} belong to ${owner ? `another event log (${owner})` : 'no event log yet'}, not to this mailbox's`;
        const details = { logIdentity: this.claimed, viewsOf: owner };
        // Another log's views stay so until an operator acts: told to retry every 5 s, a client retried forever.
        if (owner)
          throw operatorNeeded(
            `${whose}; no retry helps until an operator acts (the request was not applied).`,
            'mailbox projections rebuild --take-over, or move the views file away and restart (it is rebuilt from this log)',
            details,
          );
        throw new MailboxError(
          'UNAVAILABLE',
          'Service unavailable',
          `${whose}; retry later, /readyz says when they are served (the request was not applied).`,
          details,
        );
      }
    }
    return query(this.reader(generation));
  }

  /**
   * Reads: a damaged file answers 503 naming the remedy (and is marked, so that the next start moves it aside);
   * every other failure goes on as it was.
   */
  private read<T>(query: (reader: SqliteViewReader) => T): T {
    try {
      return this.readActive(query);
    } catch (error) {
      throw this.damaged(error);
    }
  }

  /**
   * A failure of the file met by a rebuild of `generation` (sqliteViews/sqliteGenerations.ts): damage, marked as a
   * read's is (the server's readiness says it, its next start moves the file aside), or a generation's tables gone,
   * each said with its remedy, and, at a step of the rebuild's (`locked.step`), the file locked by another process;
   * anything else as it is.
   */
  private rebuildFailure(error: unknown, generation: string, locked?: { lockWaitMs: number; step: RebuildStep }): unknown {
    const said = rebuildViewsFailure(this.file, generation, error, locked);
    if (said !== null && isDamagedFileError(error)) markDamaged(this.file, sqliteSaid(error), new Date());
    return said ?? error;
  }

  private damaged(error: unknown): unknown {
    if (!isDamagedFileError(error)) return error;
    markDamaged(this.file, sqliteSaid(error), new Date());
    return viewsFileDamaged(this.file, error);
  }
}
