/**
 * The SQLite views file with its writes on a worker thread
 * (sqliteViews/sqliteViewsThread.ts) and its reads on the event loop: the
 * store the embedded mailbox runs on.
 *
 * Why two connections: a read is one short synchronous look (a page of 50 in
 * well under a millisecond) and would only pay a thread hop, while applying a
 * batch is the views' heavy work (~0.2 ms of CPU per event) and, on the event
 * loop, delayed every request behind it. WAL lets the reading connection see
 * each transaction the thread commits, never part of one; the thread answers
 * an apply only after its COMMIT, so a caller that waited for the views to
 * reach a position reads them there.
 *
 * Every write goes to the thread (applies, claims, the live-writer mark,
 * reset), so the event loop never waits for the file's write lock; what stays
 * here is reading, the binding, and blue/green generations (a rebuild
 * command's work, which takes the lock as another process would).
 */
import path from 'node:path';
import type { Worker, WorkerOptions } from 'node:worker_threads';
import type { ListQuery } from '../../projections/listQuery';
import type {
  AgentEntries,
  AgentView,
  ApplyOptions,
  HeartbeatCounts,
  HistoryLinePage,
  LedgerIdPage,
  ProjectionStore,
  UnreadCount,
  ViewPage,
  ViewsBinding,
} from '../../projections/projectionStore';
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
import type { ProjectedEvent } from '../../projections/viewChanges';
import type { WakeBus } from '../../projections/wakeBus';
import { defaultSqliteDriver, type SqliteDriver } from '../../support/sqlite/sqliteDriver';
import { startThread } from '../../support/threads/startThread';
import { SqliteProjectionStore, type DamagedFileMovedAside, type SqliteProjectionOptions } from './sqliteProjectionStore';
import { SqliteViewsOwnerLock } from './sqliteViews/sqliteViewsOwnerLock';
import type { ViewsThreadData, ViewsThreadRequest, ViewsThreadMessage } from './sqliteViews/sqliteViewsThread';
import { rebuildThreadError } from './sqliteViews/sqliteViewsThreadErrors';

const THREAD_ENTRY = path.join(__dirname, 'sqliteViews', 'sqliteViewsThread');
/** A thread that does not close within this long (a stuck transaction) is terminated: its work rolls back. */
const CLOSE_TIMEOUT_MS = 10_000;
/**
 * The thread's young generation, in MB (V8's semi-space is a third of it: 4 MB, 8 MB of new space). V8's default
 * for a thread is 48 MB (two semi-spaces of 16 MB), and it grows the new space towards that when a thread keeps
 * allocating fast, which this one does (each batch's events, rows and facts are garbage once committed). Measured
 * at 2,000 sends/s (bench/http/memoryGrowth.ts, each thread's V8 figures): the thread's new space stayed at 8 MB
 * for ~150,000 messages, then doubled to 16 MB (RSS +8 MB, read by http/sustainedLoad as a native slope of ~30
 * bytes per message), and could double again. The cap keeps the thread where it ran for those first messages. Its
 * price (same runs, against the default): a first start's bulk build ~6% more CPU (large catch-up batches outlive
 * a 4 MB semi-space and are copied to the old generation), live applies and core/sendThroughput within their spread.
 */
const YOUNG_GENERATION_MB = 12;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** Starts a thread on a module (support/threads/startThread.ts; tests pass one that keeps the Worker, to kill it). */
export type ThreadStarter = (entry: string, options: WorkerOptions) => Worker;

/** Starts the views thread on the file and waits until it has opened it; a thread that fails to is terminated. */
async function startViewsThread(start: ThreadStarter, data: ViewsThreadData): Promise<Worker> {
  const worker = start(THREAD_ENTRY, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
  let onMessage: (message: ViewsThreadMessage) => void = () => undefined;
  let onError: (error: Error) => void = () => undefined;
  let onExit: (code: number) => void = () => undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onMessage = (message) => {
        if (message.kind === 'ready') resolve();
        if (message.kind === 'failed') reject(rebuildThreadError(message.error));
      };
      onError = reject;
      onExit = (code) => reject(new Error(`SQLite views thread exited at start (code ${code})`));
      worker.on('message', onMessage).once('error', onError).once('exit', onExit);
    });
  } catch (error) {
    await worker.terminate();
    throw error;
  } finally {
    // Only these: a Worker keeps listeners of its own (removeAllListeners cut its message port off).
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
  }
  return worker;
}

/** `ownerLock`: this store is the views' owner's (the mailbox that projects into them), and the only one (see the lock). */
export type ThreadedViewsOptions = SqliteProjectionOptions & { ownerLock?: boolean };

export class ThreadedSqliteProjectionStore implements ProjectionStore {
  readonly backend = 'sqlite' as const;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Wakes are published in the order the thread committed them, each before the answer of the apply that made it. */
  private published: Promise<void> = Promise.resolve();
  /** The thread calls go to; replaced by a new one if it dies (threadDied), so the views never stall on a dead thread. */
  private thread: Promise<Worker>;
  private current: Worker | null = null;
  /** The log the views were claimed for: a new thread claims again before it applies anything. */
  private claimedFor: string | null = null;
  private closing = false;
  private closed: Error | null = null;

  private constructor(
    private readonly local: SqliteProjectionStore,
    private readonly wakeBus: WakeBus,
    private readonly data: ViewsThreadData,
    private readonly start: ThreadStarter,
    first: Worker,
    /** Held from open to close by the mailbox that projects into the file (sqliteViews/sqliteViewsOwnerLock.ts). */
    private readonly ownerLock: SqliteViewsOwnerLock | null = null,
  ) {
    this.thread = Promise.resolve(this.attach(first));
  }

  /** The SQLite binding of the file's connections, here and on the thread (sqliteViews/sqliteViewsDriver.ts). */
  get driver(): SqliteDriver {
    return this.local.driver;
  }

  /**
   * Opens the file here (its schema checked, or dropped and recreated: `schemaReset` says why), then starts the
   * writing thread on it and waits until it has opened the file too.
   */
  static async open(
    file: string,
    wakeBus: WakeBus,
    { ownerLock = false, ...options }: ThreadedViewsOptions = {},
    start: ThreadStarter = startThread,
  ): Promise<ThreadedSqliteProjectionStore> {
    // The owner's lock first: a second owner must not even open the file (it might move it aside as damaged).
    const lock = ownerLock ? SqliteViewsOwnerLock.acquire(path.resolve(file), options.driver ?? defaultSqliteDriver()) : null;
    let local: SqliteProjectionStore;
    try {
      local = SqliteProjectionStore.open(file, wakeBus, options);
    } catch (error) {
      lock?.release();
      throw error;
    }
    // One binding per file; the thread never moves the file (the main connection has it open by then).
    const data: ViewsThreadData = { file: local.file, options: { ...options, driver: local.driver, recoverDamaged: false } };
    let worker: Worker;
    try {
      worker = await startViewsThread(start, data);
    } catch (error) {
      await local.close();
      lock?.release();
      throw error;
    }
    return new ThreadedSqliteProjectionStore(local, wakeBus, data, start, worker, lock);
  }

  /** Why the file's views were dropped at open to be rebuilt from the log (another schema); null: kept. */
  get schemaReset(): string | null {
    return this.local.schemaReset;
  }

  /** The file was unreadable (or marked damaged by an earlier run) and moved aside at open; null: it was fine. */
  get damagedFileMovedAside(): DamagedFileMovedAside | null {
    return this.local.damagedFileMovedAside;
  }

  get file(): string {
    return this.local.file;
  }

  damage(): string | null {
    return this.local.damage();
  }

  private attach(worker: Worker): Worker {
    worker.on('message', (message: ViewsThreadMessage) => this.receive(worker, message));
    worker.on('error', (error) => this.threadDied(worker, `failed: ${error.message}`));
    worker.on('exit', (code) => this.threadDied(worker, `exited (code ${code})`));
    worker.unref(); // an idle thread keeps no process alive; ref'd while a call is pending
    this.current = worker;
    return worker;
  }

  private receive(worker: Worker, message: ViewsThreadMessage): void {
    if (message.kind !== 'answer') return;
    const { wakes } = message;
    if (wakes !== undefined) this.published = this.published.then(() => this.wakeBus.publish(wakes)).catch(() => undefined);
    const waiting = this.pending.get(message.id);
    if (waiting === undefined) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) worker.unref();
    const { error, value } = message;
    void this.published.then(() => (error === undefined ? waiting.resolve(value) : waiting.reject(rebuildThreadError(error))));
  }

  /**
   * The thread is gone (a crash, an out-of-memory kill of the thread): its calls fail with why, and a new thread is
   * started on the file. What the old one had not committed rolled back with it; the projector applies that batch
   * again (events at or below the stored checkpoint change nothing), so the views neither stall nor count twice.
   */
  private threadDied(worker: Worker, how: string): void {
    if (worker !== this.current) return; // already handled ('error' is followed by 'exit')
    this.current = null;
    const error = new Error(`SQLite views thread ${how}${this.closing ? '' : '; a new one is started'}`);
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
    if (this.closing) return;
    this.thread = this.respawn();
    this.thread.catch(() => undefined); // a failed start is answered to the next call, which tries again
  }

  private async respawn(): Promise<Worker> {
    const worker = await startViewsThread(this.start, this.data);
    if (this.closing) {
      await worker.terminate();
      throw new Error('SQLite views store closed');
    }
    this.attach(worker);
    if (this.claimedFor !== null) await this.post(worker, { op: 'claim', logIdentity: this.claimedFor });
    return worker;
  }

  private async call(request: ViewsThreadRequest): Promise<unknown> {
    if (this.closed !== null) throw this.closed;
    const attempt = this.thread;
    let worker: Worker;
    try {
      worker = await attempt;
    } catch {
      if (this.thread === attempt) this.thread = this.respawn(); // the last start failed: try again, once per failure
      worker = await this.thread;
    }
    return this.post(worker, request);
  }

  private post(worker: Worker, request: ViewsThreadRequest): Promise<unknown> {
    if (worker !== this.current) return Promise.reject(new Error('SQLite views thread is gone; a new one is starting'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  async applyBatch(batch: readonly ProjectedEvent[], options: ApplyOptions = {}): Promise<void> {
    if (batch.length === 0) return;
    await this.call({ op: 'apply', batch: batch as ProjectedEvent[], options });
  }

  async claim(logIdentity: string): Promise<ViewsBinding> {
    this.claimedFor = logIdentity;
    await this.call({ op: 'claim', logIdentity });
    return this.local.claim(logIdentity); // claimed by the thread: here it only binds the reads to this log
  }

  async markLiveWriter(logIdentity: string): Promise<void> {
    await this.call({ op: 'markLiveWriter', logIdentity });
  }

  async releaseLiveWriter(logIdentity: string): Promise<void> {
    if (this.closed !== null || this.current === null) return; // no thread marks nothing; its mark expires by itself
    await this.call({ op: 'releaseLiveWriter', logIdentity });
  }

  async reset(): Promise<void> {
    await this.call({ op: 'reset' });
  }

  async close(): Promise<void> {
    if (this.closed === null) {
      this.closing = true;
      const worker = this.current;
      if (worker !== null) {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        const timeout = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
        try {
          await this.post(worker, { op: 'close' });
        } catch {
          // the thread failed or is gone: its store is closed with it (SQLite rolls back what it had not committed)
        }
        await exited;
        clearTimeout(timeout);
      }
      await this.thread.catch(() => undefined); // a start under way ends (terminated) before the file is closed here
      this.closed = new Error('SQLite views store closed');
    }
    await this.local.close();
    this.ownerLock?.release();
  }

  checkpoint(): Promise<bigint | null> {
    return this.local.checkpoint();
  }

  binding(): Promise<ViewsBinding> {
    return this.local.binding();
  }

  generations(): ProjectionGenerations {
    return this.local.generations();
  }

  listMessages(identity: string, query: ListQuery): Promise<ViewPage> {
    return this.local.listMessages(identity, query);
  }

  unreadCount(identity: string): Promise<UnreadCount> {
    return this.local.unreadCount(identity);
  }

  heartbeat(identity: string): Promise<HeartbeatCounts> {
    return this.local.heartbeat(identity);
  }

  allHeartbeats(): Promise<HeartbeatCounts[]> {
    return this.local.allHeartbeats();
  }

  listAgents(): Promise<AgentView[]> {
    return this.local.listAgents();
  }

  agentEntries(identity: string): Promise<AgentEntries> {
    return this.local.agentEntries(identity);
  }

  listTasks(identity: string, query: TaskListQuery): Promise<TaskViewPage> {
    return this.local.listTasks(identity, query);
  }

  getTask(taskId: string): Promise<TaskView | undefined> {
    return this.local.getTask(taskId);
  }

  taskOfHistoryLine(eventId: string): Promise<string | null> {
    return this.local.taskOfHistoryLine(eventId);
  }

  taskHistoryLines(after: string | null, limit: number): Promise<HistoryLinePage> {
    return this.local.taskHistoryLines(after, limit);
  }

  dueTasks(now: string, limit: number, after?: string): Promise<TaskView[]> {
    return this.local.dueTasks(now, limit, after);
  }

  deliveryLedger(messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined> {
    return this.local.deliveryLedger(messageId, query);
  }

  deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage> {
    return this.local.deliveryLedgerIds(after, limit);
  }

  deliveryLedgers(messageIds: readonly string[]): Promise<Map<string, WholeLedger>> {
    return this.local.deliveryLedgers(messageIds);
  }

  unwoken(query: UnwokenQuery): Promise<UnwokenPage> {
    return this.local.unwoken(query);
  }

  lastNudges(): Promise<Map<string, LastNudge>> {
    return this.local.lastNudges();
  }

  dueReplies(dueBy: string, limit: number): Promise<DueReply[]> {
    return this.local.dueReplies(dueBy, limit);
  }
}
