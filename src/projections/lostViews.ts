/**
 * Views that lost what they held while the mailbox runs (Redis restarted empty, or flushed) are rebuilt in place from
 * the log by the projector. Until they hold again every event they held before, they hold only part of the log: an
 * inbox of old mail reads empty, a count reads 0, "mark all read" would mark only part of the inbox. So no read is
 * answered from them meanwhile: each is refused with 503 UNAVAILABLE saying the views are being rebuilt (the request
 * was not applied), and readiness is not ready. Found by a black-box run: GET /v1/inbox/count answered 200 with 0 for
 * an agent with unread mail during such a rebuild.
 *
 * The projector (projectionRunner.ts) says when it found the views gone and how far they had reached; every
 * position it then reaches is reported here, and the refusal ends once the views are back where they were.
 */
import { MailboxError } from '../errors';
import type {
  AgentEntries,
  AgentView,
  ApplyOptions,
  HeartbeatCounts,
  LedgerIdPage,
  ProjectionStore,
  UnreadCount,
  ViewPage,
  ViewsBinding,
} from './projectionStore';
import type { ListQuery } from './listQuery';
import type { DueReply, LastNudge, UnwokenPage, UnwokenQuery } from './readModel/ledger';
import type { ProjectedEvent } from './viewChanges';

export interface ViewsRebuilding {
  /** The position the views had reached before they were lost: reads are served again once they reach it. */
  rebuildingTo: string;
  /** How far the rebuild has come (null: nothing yet). */
  rebuiltThrough: string | null;
  since: string;
}

export class LostViews {
  private rebuilding: ViewsRebuilding | null = null;

  /** The views were found to hold less than `heldThrough` (the highest position they were known to include). */
  lost(heldThrough: bigint, at: Date): void {
    if (this.rebuilding !== null && BigInt(this.rebuilding.rebuildingTo) >= heldThrough) return;
    this.rebuilding = { rebuildingTo: heldThrough.toString(), rebuiltThrough: null, since: at.toISOString() };
  }

  /** The views now include `position` (an apply landed, or the shared checkpoint read that far). */
  reached(position: bigint): void {
    if (this.rebuilding === null) return;
    if (position >= BigInt(this.rebuilding.rebuildingTo)) this.rebuilding = null;
    else this.rebuilding.rebuiltThrough = position.toString();
  }

  current(): ViewsRebuilding | null {
    return this.rebuilding && { ...this.rebuilding };
  }

  /** The refusal of a read while the views are being rebuilt; null when they are whole. */
  refusal(): MailboxError | null {
    const rebuilding = this.rebuilding;
    if (rebuilding === null) return null;
    return new MailboxError(
      'UNAVAILABLE',
      'Service unavailable',
      `The views are being rebuilt from the event log: they lost what they held (e.g. Redis ` +
        `restarted empty) and hold events up to position ${rebuilding.rebuiltThrough ?? 'none'} of the ${rebuilding.rebuildingTo} ` +
        'they held before. Retry in a moment (the request was not applied); /readyz says when they are whole again.',
      { rebuildingTo: rebuilding.rebuildingTo, rebuiltThrough: rebuilding.rebuiltThrough },
    );
  }
}

/**
 * The projection store as every reader sees it: each view read is refused while the views are being rebuilt after a
 * loss (LostViews); applies, checkpoints and bindings pass through (the projector rebuilds through them).
 */
export class ReadsOfWholeViews implements ProjectionStore {
  constructor(
    private readonly views: ProjectionStore,
    private readonly lostViews: LostViews,
  ) {
    if (views.fenceWith) this.fenceWith = (lease) => views.fenceWith!(lease);
    if (views.generations) this.generations = () => views.generations!();
    if (views.damage) this.damage = () => views.damage!();
    if (views.readsRefused) this.readsRefused = () => views.readsRefused!();
    if (views.viewsOfAnotherLog) this.viewsOfAnotherLog = () => views.viewsOfAnotherLog!();
    if (views.onViewsOfAnotherLog) this.onViewsOfAnotherLog = (listener) => views.onViewsOfAnotherLog!(listener);
  }

  // NonNullable: a program built on the library with exactOptionalPropertyTypes was told this class does not implement
  // ProjectionStore (its optional methods take no undefined there).
  fenceWith?: NonNullable<ProjectionStore['fenceWith']>;
  generations?: NonNullable<ProjectionStore['generations']>;
  damage?: NonNullable<ProjectionStore['damage']>;
  readsRefused?: NonNullable<ProjectionStore['readsRefused']>;
  viewsOfAnotherLog?: NonNullable<ProjectionStore['viewsOfAnotherLog']>;
  onViewsOfAnotherLog?: NonNullable<ProjectionStore['onViewsOfAnotherLog']>;

  get backend(): ProjectionStore['backend'] {
    return this.views.backend;
  }

  private whole<T>(read: () => Promise<T>): Promise<T> {
    const refusal = this.lostViews.refusal();
    return refusal === null ? read() : Promise.reject(refusal);
  }

  applyBatch(batch: readonly ProjectedEvent[], options?: ApplyOptions): Promise<void> {
    return this.views.applyBatch(batch, options);
  }
  checkpoint(): Promise<bigint | null> {
    return this.views.checkpoint();
  }
  binding(): Promise<ViewsBinding> {
    return this.views.binding();
  }
  claim(logIdentity: string): Promise<ViewsBinding> {
    return this.views.claim(logIdentity);
  }
  markLiveWriter(logIdentity: string): Promise<void> {
    return this.views.markLiveWriter(logIdentity);
  }
  releaseLiveWriter(logIdentity: string): Promise<void> {
    return this.views.releaseLiveWriter(logIdentity);
  }
  reset(): Promise<void> {
    return this.views.reset();
  }
  close(): Promise<void> {
    return this.views.close();
  }

  listMessages(identity: string, query: ListQuery): Promise<ViewPage> {
    return this.whole(() => this.views.listMessages(identity, query));
  }
  unreadCount(identity: string): Promise<UnreadCount> {
    return this.whole(() => this.views.unreadCount(identity));
  }
  heartbeat(identity: string): Promise<HeartbeatCounts> {
    return this.whole(() => this.views.heartbeat(identity));
  }
  allHeartbeats(): Promise<HeartbeatCounts[]> {
    return this.whole(() => this.views.allHeartbeats());
  }
  listAgents(): Promise<AgentView[]> {
    return this.whole(() => this.views.listAgents());
  }
  agentEntries(identity: string): Promise<AgentEntries> {
    return this.whole(() => this.views.agentEntries(identity));
  }
  listTasks(...args: Parameters<ProjectionStore['listTasks']>): ReturnType<ProjectionStore['listTasks']> {
    return this.whole(() => this.views.listTasks(...args));
  }
  getTask(...args: Parameters<ProjectionStore['getTask']>): ReturnType<ProjectionStore['getTask']> {
    return this.whole(() => this.views.getTask(...args));
  }
  taskOfHistoryLine(...args: Parameters<ProjectionStore['taskOfHistoryLine']>): ReturnType<ProjectionStore['taskOfHistoryLine']> {
    return this.whole(() => this.views.taskOfHistoryLine(...args));
  }
  taskHistoryLines(...args: Parameters<ProjectionStore['taskHistoryLines']>): ReturnType<ProjectionStore['taskHistoryLines']> {
    return this.whole(() => this.views.taskHistoryLines(...args));
  }
  dueTasks(...args: Parameters<ProjectionStore['dueTasks']>): ReturnType<ProjectionStore['dueTasks']> {
    return this.whole(() => this.views.dueTasks(...args));
  }
  deliveryLedger(...args: Parameters<ProjectionStore['deliveryLedger']>): ReturnType<ProjectionStore['deliveryLedger']> {
    return this.whole(() => this.views.deliveryLedger(...args));
  }
  deliveryLedgers(...args: Parameters<ProjectionStore['deliveryLedgers']>): ReturnType<ProjectionStore['deliveryLedgers']> {
    return this.whole(() => this.views.deliveryLedgers(...args));
  }
  deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage> {
    return this.whole(() => this.views.deliveryLedgerIds(after, limit));
  }
  unwoken(query: UnwokenQuery): Promise<UnwokenPage> {
    return this.whole(() => this.views.unwoken(query));
  }
  lastNudges(): Promise<Map<string, LastNudge>> {
    return this.whole(() => this.views.lastNudges());
  }
  dueReplies(dueBy: string, limit: number): Promise<DueReply[]> {
    return this.whole(() => this.views.dueReplies(dueBy, limit));
  }
}
