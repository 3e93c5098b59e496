/**
 * The SQLite views as a separate reader sees them (`mailbox heartbeat`,
 * `audit verify`): the file at the path, not the one it happened to open.
 *
 * Why: the server replaces the views file whenever it builds the views anew,
 * i.e. the file was deleted while it was stopped, moved aside as damaged, or
 * dropped for another schema. A reader that kept its connection went on
 * reading the old file (unlinked or renamed, still open), frozen at its last
 * checkpoint: the heartbeat daemon then alarmed "projection stalled" although
 * the server's projector was fine, and never saw, so never nudged for, any
 * mail that arrived after the replacement.
 *
 * So before every call the path's file identity (device and inode: one stat,
 * a few microseconds) is compared with the opened file's. When another file
 * stands there, it is opened, and the old one is closed once its calls in
 * flight are done; the log says so once. A path with no file (the server is
 * about to create it) or a new file that cannot be opened yet keeps the
 * previous one, and the next call looks again.
 */
import fs from 'node:fs';
import type { Logger } from 'pino';
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
import type {
  DueReply,
  LastNudge,
  LedgerPage,
  LedgerQuery,
  UnwokenPage,
  UnwokenQuery,
  WholeLedger,
} from '../../projections/readModel/ledger';
import type { TaskView } from '../../projections/readModel/taskView';
import type { TaskListQuery, TaskViewPage } from '../../projections/readModel/taskViewsMemory';
import type { ProjectionGenerations } from '../../projections/rebuildGenerations';
import type { ProjectedEvent } from '../../projections/viewChanges';

/** `<device>:<inode>` of the file at `file`, or null when there is none. */
export function fileIdentity(file: string): string | null {
  try {
    const stat = fs.statSync(file, { bigint: true });
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return null;
  }
}

/** The store's own reads of the file it opened (a store whose file cannot be told: never reopened). */
type ViewsFileStore = ProjectionStore & { readonly file: string };

interface Opened {
  store: ViewsFileStore;
  identity: string | null;
  calls: number;
  replaced: boolean;
}

export class ReopeningSqliteViews implements ProjectionStore {
  readonly backend = 'sqlite' as const;
  private opened: Opened;
  private reopening: Promise<void> | null = null;
  /** The log a projector here claimed the views for: a file opened later is claimed for it too. */
  private claimedFor: string | null = null;
  /** Why the replacing file could not be opened, as last logged (logged again only when it changes). */
  private lastFailure: string | null = null;
  private readonly file: string;

  constructor(
    first: ViewsFileStore,
    private readonly open: () => Promise<ViewsFileStore>,
    private readonly logger: Logger,
  ) {
    this.file = first.file;
    this.opened = { store: first, identity: fileIdentity(this.file), calls: 0, replaced: false };
  }

  /** Runs `call` on the file at the path (reopened first if it was replaced); the old file closes after its last call. */
  private async use<T>(call: (store: ProjectionStore) => Promise<T>): Promise<T> {
    await this.followPath();
    const opened = this.opened;
    opened.calls++;
    try {
      return await call(opened.store);
    } finally {
      opened.calls--;
      if (opened.replaced && opened.calls === 0) await this.closeQuietly(opened);
    }
  }

  private followPath(): Promise<void> {
    if (this.reopening !== null) return this.reopening;
    const identity = fileIdentity(this.file);
    if (identity === null || identity === this.opened.identity) return Promise.resolve();
    this.reopening = this.reopen(identity).finally(() => (this.reopening = null));
    return this.reopening;
  }

  /** The file at the path, claimed for the log the previous one was claimed for (closed again if that fails). */
  private async openClaimed(): Promise<ViewsFileStore> {
    const store = await this.open();
    if (this.claimedFor === null) return store;
    try {
      await store.claim(this.claimedFor);
      return store;
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
  }

  private async reopen(identity: string): Promise<void> {
    const { file } = this;
    let store: ViewsFileStore;
    try {
      store = await this.openClaimed();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== this.lastFailure)
        this.logger.warn(
          { file, reason },
          'projections: the SQLite views file was replaced, and the new one cannot be opened yet; reading the previous one until it can',
        );
      this.lastFailure = reason;
      return;
    }
    if (fileIdentity(file) !== identity) {
      await store.close().catch(() => undefined); // replaced again while opening: the next call opens the newest
      return;
    }
    this.lastFailure = null;
    const previous = this.opened;
    this.opened = { store, identity, calls: 0, replaced: false };
    previous.replaced = true;
    if (previous.calls === 0) await this.closeQuietly(previous);
    const { checkpoint } = await store.binding();
    this.logger.info(
      { file, checkpoint: checkpoint?.toString() ?? null },
      'projections: the SQLite views file was replaced (the server built the views anew): reading the new one',
    );
  }

  private async closeQuietly(opened: Opened): Promise<void> {
    await opened.store
      .close()
      .catch((error: unknown) =>
        this.logger.warn(
          { reason: error instanceof Error ? error.message : String(error) },
          'projections: closing the replaced SQLite views file failed',
        ),
      );
  }

  applyBatch(batch: readonly ProjectedEvent[], options?: ApplyOptions): Promise<void> {
    return this.use((store) => store.applyBatch(batch, options));
  }

  checkpoint(): Promise<bigint | null> {
    return this.use((store) => store.checkpoint());
  }

  binding(): Promise<ViewsBinding> {
    return this.use((store) => store.binding());
  }

  async claim(logIdentity: string): Promise<ViewsBinding> {
    const binding = await this.use((store) => store.claim(logIdentity));
    this.claimedFor = logIdentity;
    return binding;
  }

  markLiveWriter(logIdentity: string): Promise<void> {
    return this.use((store) => store.markLiveWriter(logIdentity));
  }

  releaseLiveWriter(logIdentity: string): Promise<void> {
    return this.use((store) => store.releaseLiveWriter(logIdentity));
  }

  listMessages(identity: string, query: ListQuery): Promise<ViewPage> {
    return this.use((store) => store.listMessages(identity, query));
  }

  unreadCount(identity: string): Promise<UnreadCount> {
    return this.use((store) => store.unreadCount(identity));
  }

  heartbeat(identity: string): Promise<HeartbeatCounts> {
    return this.use((store) => store.heartbeat(identity));
  }

  allHeartbeats(): Promise<HeartbeatCounts[]> {
    return this.use((store) => store.allHeartbeats());
  }

  listAgents(): Promise<AgentView[]> {
    return this.use((store) => store.listAgents());
  }

  agentEntries(identity: string): Promise<AgentEntries> {
    return this.use((store) => store.agentEntries(identity));
  }

  listTasks(identity: string, query: TaskListQuery): Promise<TaskViewPage> {
    return this.use((store) => store.listTasks(identity, query));
  }

  getTask(taskId: string): Promise<TaskView | undefined> {
    return this.use((store) => store.getTask(taskId));
  }

  taskOfHistoryLine(eventId: string): Promise<string | null> {
    return this.use((store) => store.taskOfHistoryLine(eventId));
  }

  taskHistoryLines(after: string | null, limit: number): Promise<HistoryLinePage> {
    return this.use((store) => store.taskHistoryLines(after, limit));
  }

  dueTasks(now: string, limit: number, after?: string): Promise<TaskView[]> {
    return this.use((store) => store.dueTasks(now, limit, after));
  }

  deliveryLedger(messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined> {
    return this.use((store) => store.deliveryLedger(messageId, query));
  }

  deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage> {
    return this.use((store) => store.deliveryLedgerIds(after, limit));
  }

  deliveryLedgers(messageIds: readonly string[]): Promise<Map<string, WholeLedger>> {
    return this.use((store) => store.deliveryLedgers(messageIds));
  }

  unwoken(query: UnwokenQuery): Promise<UnwokenPage> {
    return this.use((store) => store.unwoken(query));
  }

  lastNudges(): Promise<Map<string, LastNudge>> {
    return this.use((store) => store.lastNudges());
  }

  dueReplies(dueBy: string, limit: number): Promise<DueReply[]> {
    return this.use((store) => store.dueReplies(dueBy, limit));
  }

  /** The damage mark beside the file at the path (the opened one's until a call has followed a replacement). */
  damage(): string | null {
    return this.opened.store.damage?.() ?? null;
  }

  /** Blue/green generations inside the opened file (a rebuild command's work: it opens its own store). */
  generations(): ProjectionGenerations {
    const { store } = this.opened;
    if (store.generations === undefined) throw new Error('the SQLite views store has no generations');
    return store.generations();
  }

  reset(): Promise<void> {
    return this.use((store) => store.reset());
  }

  async close(): Promise<void> {
    await this.reopening?.catch(() => undefined);
    await this.opened.store.close();
  }
}
