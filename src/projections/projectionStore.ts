/** The projection store port (read model): applied atomically with its checkpoint, queried by the API. */
import type { Priority, Role } from '../events/types';
import type { ListQuery } from './listQuery';
import type { MessageSummary, ProjectedEvent } from './viewChanges';

export interface ListedMessage extends Omit<MessageSummary, 'recipientCount' | 'task'> {
  readAt: string | null;
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
  byPriority: Record<Priority, number>;
}

export interface HeartbeatCounts extends UnreadCount {
  identity: string;
  oldestUnreadAt: string | null;
  lastActivityAt: string | null;
}

export interface AgentView {
  identity: string;
  role: Role;
  registeredAt: string;
  retired: boolean;
  retiredAt: string | null;
}

export interface ProjectionStore {
  /**
   * Applies each event's changes together with the checkpoint. Events at or
   * below the checkpoint change nothing. Wakes are published after the change
   * is committed (the store owns publishing so that Redis can do it in-script).
   */
  applyBatch(batch: readonly ProjectedEvent[]): Promise<void>;
  checkpoint(): Promise<bigint | null>;
  listMessages(identity: string, query: ListQuery): Promise<ViewPage>;
  unreadCount(identity: string): Promise<UnreadCount>;
  heartbeat(identity: string): Promise<HeartbeatCounts>;
  allHeartbeats(): Promise<HeartbeatCounts[]>;
  listAgents(): Promise<AgentView[]>;
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
  constructor(readonly checkpoint: bigint | null, readonly expected: bigint | null) {
    super(`Projection checkpoint went back from ${expected ?? 'none'} to ${checkpoint ?? 'none'} ` +
      `(views lost, e.g. Redis restarted empty); resuming from ${checkpoint === null ? 'the start of the log' : checkpoint}.`);
    this.name = 'ProjectionCheckpointRewound';
  }
}
