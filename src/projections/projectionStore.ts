/** The projection store port (read model): applied atomically with its checkpoint, queried by the API. */
import type { Priority, Role } from '../events/types';
import type { ListQuery } from './listQuery';
import type { TaskListQuery, TaskViewPage } from './readModel/taskViewsMemory';
import type { TaskView, WaitingSince } from './readModel/taskView';
import type { DueReply, LastNudge, LedgerPage, LedgerQuery, UnwokenPage, UnwokenQuery, WholeLedger } from './readModel/ledger';
import type { LeaseHolder } from './projectorLease';
import type { ProjectionGenerations } from './rebuildGenerations';
import type { MessageSummary, ProjectedEvent } from './viewChanges';

export interface ListedMessage extends Omit<MessageSummary, 'recipientCount' | 'task'> {
  readAt: string | null;
  /** Inbox: when it was first returned to you, before this listing (null: this is the first time); outbox: null. */
  seenAt: string | null;
  /** Only in a status=archived listing: when the caller archived it. */
  archivedAt?: string;
  task?: MessageSummary['task'];
}

/** One page of a listing as the store serves it. */
export interface ViewPage {
  messages: ListedMessage[];
  /** When more entries follow: the position of this page's last entry (the next page's `before`); else null. */
  nextBefore: bigint | null;
  unreadCount: number;
}

/** One page as callers see it: `nextCursor` is opaque and bound to the listing that issued it (application/cursorCodec.ts). */
export interface MessagePage {
  messages: ListedMessage[];
  nextCursor: string | null;
  unreadCount: number;
}

export interface UnreadCount {
  unread: number;
  /** Of the unread, those never returned to the agent (not in any list page or get it received). */
  unseen: number;
  byPriority: Record<Priority, number>;
}

export interface HeartbeatCounts extends UnreadCount {
  identity: string;
  /**
   * Tasks waiting on the agent: assigned and Submitted/Working, or sent and asking for input, or sent and ended without
   * the sender until it got the task (readModel/taskRules.ts).
   */
  tasksWaiting: number;
  /**
   * The last change that made a task begin waiting on the agent (its position, time and task), while any waits on it
   * (null: none waits): moved by a task new to it, or one back on it, not by a lease renewed or an artifact added.
   */
  tasksWaitingSince: WaitingSince | null;
  oldestUnreadAt: string | null;
  lastActivityAt: string | null;
  /** Replies the agent owes (issue 13: a send expected its answer in the thread by a time); overdue once that time passed. */
  repliesOwed: number;
  /** The earliest time one of them is due (null: none owed). */
  nextReplyDueBy: string | null;
}

export interface AgentView {
  identity: string;
  role: Role;
  registeredAt: string;
  retired: boolean;
  retiredAt: string | null;
}

/** What listAgents and allHeartbeats hold of one identity: its entry in each, undefined where it has none. */
export interface AgentEntries {
  agent: AgentView | undefined;
  heartbeat: HeartbeatCounts | undefined;
}

/** Which log the active views belong to, recorded with their checkpoint and generation. */
export interface ViewsBinding {
  /** Where the views live, for messages (e.g. "Redis namespace 'mailbox'"). */
  location: string;
  /** The log the views were built from; null: no views yet (free to claim), or views written before logs had identities. */
  logIdentity: string | null;
  checkpoint: bigint | null;
  generation: string;
  /** The log whose projector marked itself live on these views within the last few seconds, or null. */
  liveWriter: string | null;
  /** How this mailbox gets views of its own instead (default: another MAILBOX_REDIS_NAMESPACE), for the refusal's remedy. */
  elsewhere?: string;
  /**
   * false: no rebuild switched the views to this generation (the store's first one: never rebuilt, or built again in
   * place after the store lost its data), so a change to it is no rebuild's switch. Absent: not known.
   */
  switchedTo?: boolean;
}

/** How a batch is applied (projectionStore.applyBatch). */
export interface ApplyOptions {
  /**
   * false: the batch re-applies events whose wakes were already due once, before the views were lost (Redis restarted
   * empty): the views change exactly as otherwise, but no wake goes out. Replayed history is no news, and a wake
   * stream that handed it on would record a WakeObserved that never happened (docs/delivery.md). Default true.
   */
  publishWakes?: boolean;
}

/** A page of taskHistoryLines: each line's event id and the task it names. */
export interface HistoryLinePage {
  lines: Array<{ eventId: string; taskId: string }>;
  next: string | null;
}

/** A page of deliveryLedgerIds. */
export interface LedgerIdPage {
  messageIds: string[];
  next: string | null;
}

export interface ProjectionStore {
  /** Where the views live, as /readyz names it. */
  readonly backend: 'memory' | 'sqlite' | 'redis';
  /**
   * Applies each event's changes together with the checkpoint. Events at or
   * below the checkpoint change nothing. Wakes are published after the change
   * is committed (the store owns publishing so that Redis can do it in-script),
   * unless `options` says the batch is a replay (see ApplyOptions).
   */
  applyBatch(batch: readonly ProjectedEvent[], options?: ApplyOptions): Promise<void>;
  checkpoint(): Promise<bigint | null>;
  listMessages(identity: string, query: ListQuery): Promise<ViewPage>;
  unreadCount(identity: string): Promise<UnreadCount>;
  heartbeat(identity: string): Promise<HeartbeatCounts>;
  allHeartbeats(): Promise<HeartbeatCounts[]>;
  listAgents(): Promise<AgentView[]>;
  /**
   * One identity's entries in listAgents and allHeartbeats, without listing every agent (audit verify re-reads one
   * agent that differed while the views moved, and a listing of all per re-read cost the square of the agents).
   */
  agentEntries(identity: string): Promise<AgentEntries>;
  /** One of the agent's task lists (assigned, claimable, sent), newest first. */
  listTasks(identity: string, query: TaskListQuery): Promise<TaskViewPage>;
  getTask(taskId: string): Promise<TaskView | undefined>;
  /**
   * The task whose history has a line named by this event id (readModel/taskRules.ts historyLineRecorded), or null:
   * how an id of a history line given as a message's or a task's is named as that task's where the event store cannot
   * find an event by its id (EventStoreDB).
   */
  taskOfHistoryLine(eventId: string): Promise<string | null>;
  /**
   * Every history line the store keeps (taskOfHistoryLine's index), a page at a time in the store's own order: audit
   * verify compares them with the log's. As deliveryLedgerIds: `after` the previous page's `next` (null: the first
   * page), `next` null: no more; a page holds about `limit` lines, a line may come twice (Redis pages as HSCAN does),
   * none is missed while the store stands still.
   */
  taskHistoryLines(after: string | null, limit: number): Promise<HistoryLinePage>;
  /**
   * Open tasks past their deadline or lease at `now` (the sweeper's look; readModel/taskView.ts dueAt), at most
   * `limit`, the earliest due first. With `after`: only those that fell due after it (the sweeper's look for the next
   * due time, past what its last pass handled).
   */
  dueTasks(now: string, limit: number, after?: string): Promise<TaskView[]>;
  /** One page of a message's delivery ledger (readModel/ledger.ts), with its counts; undefined: no such message. */
  deliveryLedger(messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined>;
  /**
   * The whole ledgers of several messages in one read (audit verify compares every message's, a batch at a time):
   * each id that has a ledger maps to its header, counts and every recipient's row; ids without one are absent.
   * The caller keeps batches small (a few hundred messages): the answer holds every row of every one.
   */
  deliveryLedgers(messageIds: readonly string[]): Promise<Map<string, WholeLedger>>;
  /**
   * Every message the store keeps a ledger for, a page at a time in the store's own order: audit verify looks for
   * ledgers the log does not explain (forged, or of another log). `after`: the previous page's `next` (null: the
   * first page); `next` null: no more. A page holds about `limit` ids; an id may come twice (Redis pages as SCAN
   * does), none is missed while the store stands still.
   */
  deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage>;
  /** Messages that expected a wake and have none observed, sent before the cutoff (the unwoken alarm), oldest first. */
  unwoken(query: UnwokenQuery): Promise<UnwokenPage>;
  /** Each identity's newest delivered heartbeat nudge (WakeObserved via a nudge target); identities never nudged are absent. */
  lastNudges(): Promise<Map<string, LastNudge>>;
  /** Open reply obligations due at or before `dueBy` (not all answered, not yet found overdue), earliest first. */
  dueReplies(dueBy: string, limit: number): Promise<DueReply[]>;
  binding(): Promise<ViewsBinding>;
  /**
   * Binds the store to `logIdentity`: from then on it applies and serves only
   * for that log (another log's views are never read or written: reads fail
   * with UNAVAILABLE, applyBatch throws ViewsOfAnotherLog). Claims the views
   * when nobody has (no identity, no checkpoint); writes nothing when they
   * belong to another log. Returns the binding after the claim.
   */
  claim(logIdentity: string): Promise<ViewsBinding>;
  /** Marks this log's projector live on the views for a few seconds (the runner renews it while it follows). */
  markLiveWriter(logIdentity: string): Promise<void>;
  /** Ends this log's mark (a stopped projector is no longer live); another log's mark is left alone. */
  releaseLiveWriter(logIdentity: string): Promise<void>;
  /**
   * Stores shared by several processes (Redis): the projector lease (node and token) this process's applies carry from
   * now on (null: none). An apply whose lease is not the one the store holds now (another holder's, or none) changes
   * nothing and throws ProjectorDeposed (projectorLease.ts). Stores of one process (memory, the SQLite views file) have
   * no such method.
   */
  fenceWith?(lease: LeaseHolder | null): void;
  /** Blue/green generations, where the store has them (Redis): rebuilds and take-overs build into a fresh one. */
  generations?(): ProjectionGenerations;
  /**
   * Stores in a file (the SQLite views): why the file is known to be damaged (a read or a write found a page SQLite
   * cannot read), or null. Readiness is not ready while it is; a restart moves the file aside and rebuilds the views.
   * Redis: why the active views are suspect (Redis evicted keys while they were active) until a rebuild replaces them.
   */
  damage?(): string | null;
  /**
   * Stores shared with other processes (Redis): why a view read would be refused now for the views' state (they hold
   * nothing of this log: flushed or restarted empty; or they are another log's), looked at afresh in the store, or
   * null when reads are served. Readiness asks at each probe, so that it is not ready before the projector has found
   * out (reads look for themselves: this costs them nothing).
   */
  readsRefused?(): Promise<string | null>;
  /**
   * Stores shared with other processes (Redis): the log whose views the last look of a read (or of readsRefused) found
   * active instead of this log's (another mailbox took the namespace over), else null. Readiness says 'foreign' from
   * it at once, before the projector's own look (each second) finds it.
   */
  viewsOfAnotherLog?(): string | null;
  /** Calls `listener` when a read finds the views another log's (the projector looks at once). */
  onViewsOfAnotherLog?(listener: () => void): void;
  /** Drops every view and the checkpoint (a rebuild starts from an empty store). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Thrown by applyBatch when the stored checkpoint went backwards under the
 * store (e.g. Redis restarted with its data gone): nothing was applied; the
 * projector resumes from `checkpoint` (null: rebuilds from the start).
 */
export class ProjectionCheckpointRewound extends Error {
  constructor(
    readonly checkpoint: bigint | null,
    readonly expected: bigint | null,
  ) {
    super(
      `Projection checkpoint went back from ${expected ?? 'none'} to ${checkpoint ?? 'none'} ` +
        `(views lost, e.g. Redis restarted empty); resuming from ${checkpoint === null ? 'the start of the log' : checkpoint}.`,
    );
    this.name = 'ProjectionCheckpointRewound';
  }
}

/** The views (or the generation an apply went to) belong to another log: nothing was applied. */
export class ViewsOfAnotherLog extends Error {
  constructor(
    readonly location: string,
    readonly owner: string | null,
    readonly logIdentity: string,
  ) {
    super(
      `The views in ${location} belong to ${owner === null ? 'a log of unknown identity' : `log ${owner}`}, not to this log (${logIdentity})`,
    );
    this.name = 'ViewsOfAnotherLog';
  }
}
