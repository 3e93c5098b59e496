/**
 * One agent's views in memory: inbox entries, unread index, exact counters, outbox, activity.
 * Storage only: what changes, and when, is decided by the read model (src/projections/readModel).
 */
import type { Priority } from '../../commands/messageFields';
import type { InboxEntryFields } from '../../projections/viewChanges';
import { insertSorted } from './sortedPositions';

export class InboxEntry {
  readAt: string | null = null;
  archivedAt: string | null = null;

  constructor(
    readonly position: number, // log position (see sortedPositions.ts)
    readonly fields: InboxEntryFields,
    readonly isBroadcast: boolean,
  ) {}

  /** A getter, not a field: a million entries, a field fewer each (the rules read it once per receipt). */
  get priority(): Priority {
    return this.fields.priority;
  }
}

/** Neither read nor archived. */
export const isUnread = (entry: InboxEntry): boolean => entry.readAt === null && entry.archivedAt === null;

/** Read or archived entries may linger in `unread` until they are this many and at least as many as the live ones. */
const MIN_STALE_TO_COMPACT = 64;

export class MemoryInbox {
  readonly entries: InboxEntry[] = [];
  /**
   * Unread entries in log order, plus entries read or archived since the last
   * compaction (readers skip them with isUnread). Removing each one at once
   * cost a splice, O(inbox size) per receipt, which dominated rebuilds.
   */
  readonly unread: InboxEntry[] = [];
  readonly outbox: InboxEntry[] = [];
  readonly byId = new Map<string, InboxEntry>();
  private readonly outboxIds = new Set<string>();
  readonly byPriority: Record<Priority, number> = { low: 0, normal: 0, high: 0 };
  lastActivityAt: string | null = null;
  private unreadTotal = 0;

  get unreadCount(): number {
    return this.unreadTotal;
  }

  get oldestUnreadAt(): string | null {
    for (const entry of this.unread) if (isUnread(entry)) return entry.fields.sentAt;
    return null;
  }

  hasOutbox(messageId: string): boolean {
    return this.outboxIds.has(messageId);
  }

  add(position: number, fields: InboxEntryFields, isBroadcast: boolean): void {
    const entry = new InboxEntry(position, fields, isBroadcast);
    this.byId.set(fields.messageId, entry);
    insertSorted(this.entries, entry);
    insertSorted(this.unread, entry);
  }

  addOutbox(position: number, fields: InboxEntryFields): void {
    this.outboxIds.add(fields.messageId);
    insertSorted(this.outbox, new InboxEntry(position, fields, fields.to.startsWith('AGENT:')));
  }

  markRead(messageId: string, readAt: string): void {
    this.byId.get(messageId)!.readAt = readAt;
  }

  archive(messageId: string, archivedAt: string): void {
    this.byId.get(messageId)!.archivedAt = archivedAt;
  }

  /** Counts move here; entries that left the unread set are compacted out of the index once stale entries dominate. */
  moveUnread(priority: Priority, by: 1 | -1): void {
    this.unreadTotal += by;
    this.byPriority[priority] += by;
    if (by > 0) return;
    const stale = this.unread.length - this.unreadTotal;
    if (stale >= MIN_STALE_TO_COMPACT && stale >= this.unreadTotal) {
      let kept = 0;
      for (const candidate of this.unread) if (isUnread(candidate)) this.unread[kept++] = candidate;
      this.unread.length = kept;
    }
  }
}
