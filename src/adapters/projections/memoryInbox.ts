/** One agent's views in memory: inbox entries, unread index, exact counters, outbox, activity. */
import type { Priority } from '../../commands/messageFields';
import type { InboxEntryFields } from '../../projections/viewChanges';
import { insertSorted } from './sortedPositions';

export interface InboxEntry {
  position: number; // log position (see sortedPositions.ts)
  fields: InboxEntryFields;
  isBroadcast: boolean;
  readAt: string | null;
  archivedAt: string | null;
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

  /** Returns false when the entry was already there (a redelivered event changes nothing). */
  add(position: number, fields: InboxEntryFields, isBroadcast: boolean): boolean {
    if (this.byId.has(fields.messageId)) return false;
    const entry: InboxEntry = { position, fields, isBroadcast, readAt: null, archivedAt: null };
    this.byId.set(fields.messageId, entry);
    insertSorted(this.entries, entry);
    insertSorted(this.unread, entry);
    this.unreadTotal++;
    this.byPriority[fields.priority]++;
    return true;
  }

  addOutbox(position: number, fields: InboxEntryFields): void {
    if (this.outboxIds.has(fields.messageId)) return;
    this.outboxIds.add(fields.messageId);
    insertSorted(this.outbox, { position, fields, isBroadcast: fields.to.startsWith('AGENT:'), readAt: null, archivedAt: null });
    this.touch(fields.sentAt);
  }

  markRead(messageId: string, readAt: string): void {
    const entry = this.byId.get(messageId);
    if (!entry || entry.readAt !== null) return;
    const wasUnread = entry.archivedAt === null;
    entry.readAt = readAt;
    if (wasUnread) this.dropUnread(entry);
    this.touch(readAt);
  }

  archive(messageId: string, archivedAt: string): void {
    const entry = this.byId.get(messageId);
    if (!entry || entry.archivedAt !== null) return;
    const wasUnread = entry.readAt === null;
    entry.archivedAt = archivedAt;
    if (wasUnread) this.dropUnread(entry);
  }

  touch(at: string): void {
    if (this.lastActivityAt === null || at > this.lastActivityAt) this.lastActivityAt = at;
  }

  /** The entry is already marked read or archived; count it out and compact once stale entries dominate. */
  private dropUnread(entry: InboxEntry): void {
    this.unreadTotal--;
    this.byPriority[entry.fields.priority]--;
    const stale = this.unread.length - this.unreadTotal;
    if (stale >= MIN_STALE_TO_COMPACT && stale >= this.unreadTotal) {
      let kept = 0;
      for (const candidate of this.unread) if (isUnread(candidate)) this.unread[kept++] = candidate;
      this.unread.length = kept;
    }
  }
}
