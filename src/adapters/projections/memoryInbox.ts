/** One agent's views in memory: inbox entries, unread index, exact counters, outbox, activity. */
import type { Priority } from '../../commands/messageFields';
import type { InboxEntryFields } from '../../projections/viewChanges';
import { insertSorted, removeSorted } from './sortedPositions';

export interface InboxEntry {
  position: bigint;
  fields: InboxEntryFields;
  isBroadcast: boolean;
  readAt: string | null;
  archivedAt: string | null;
}

export class MemoryInbox {
  readonly entries: InboxEntry[] = [];
  readonly unread: InboxEntry[] = [];
  readonly outbox: InboxEntry[] = [];
  readonly byId = new Map<string, InboxEntry>();
  private readonly outboxIds = new Set<string>();
  readonly byPriority: Record<Priority, number> = { low: 0, normal: 0, high: 0 };
  lastActivityAt: string | null = null;

  get unreadCount(): number {
    return this.unread.length;
  }

  get oldestUnreadAt(): string | null {
    return this.unread.length === 0 ? null : this.unread[0].fields.sentAt;
  }

  /** Returns false when the entry was already there (a redelivered event changes nothing). */
  add(position: bigint, fields: InboxEntryFields, isBroadcast: boolean): boolean {
    if (this.byId.has(fields.messageId)) return false;
    const entry: InboxEntry = { position, fields, isBroadcast, readAt: null, archivedAt: null };
    this.byId.set(fields.messageId, entry);
    insertSorted(this.entries, entry);
    insertSorted(this.unread, entry);
    this.byPriority[fields.priority]++;
    return true;
  }

  addOutbox(position: bigint, fields: InboxEntryFields): void {
    if (this.outboxIds.has(fields.messageId)) return;
    this.outboxIds.add(fields.messageId);
    insertSorted(this.outbox, { position, fields, isBroadcast: fields.to.startsWith('AGENT:'), readAt: null, archivedAt: null });
    this.touch(fields.sentAt);
  }

  markRead(messageId: string, readAt: string): void {
    const entry = this.byId.get(messageId);
    if (!entry || entry.readAt !== null) return;
    entry.readAt = readAt;
    if (entry.archivedAt === null) this.dropUnread(entry);
    this.touch(readAt);
  }

  archive(messageId: string, archivedAt: string): void {
    const entry = this.byId.get(messageId);
    if (!entry || entry.archivedAt !== null) return;
    entry.archivedAt = archivedAt;
    if (entry.readAt === null) this.dropUnread(entry);
  }

  touch(at: string): void {
    if (this.lastActivityAt === null || at > this.lastActivityAt) this.lastActivityAt = at;
  }

  private dropUnread(entry: InboxEntry): void {
    removeSorted(this.unread, entry);
    this.byPriority[entry.fields.priority]--;
  }
}
