/**
 * One agent's views in memory: inbox entries, unread index, exact counters, outbox, activity.
 * Storage only: what changes, and when, is decided by the read model (src/projections/readModel).
 */
import type { Priority } from '../../events/types';
import type { InboxEntryFields } from '../../projections/viewChanges';
import { insertSorted, lowerBound } from './sortedPositions';
import { isBroadcastAddress } from '../../events/addressing';
import { ShardedMap } from '../../support/shardedMap';

/**
 * A plain object, made by the object literal in `newEntry`, not a class instance: a million-event
 * rebuild keeps ~1.4M of them, and on Node 20 a literal is made about twice as fast as an instance of
 * a class with field initializers (2M of each, same process: ~0.3 s vs ~0.6 s CPU), with the
 * allocation-site feedback V8 keeps only for literals (long-lived ones can be allocated old).
 */
export interface InboxEntry {
  readonly position: number; // log position (see sortedPositions.ts)
  readonly fields: InboxEntryFields;
  readonly isBroadcast: boolean;
  readAt: string | null;
  archivedAt: string | null;
  seenAt: string | null;
}

const newEntry = (position: number, fields: InboxEntryFields, isBroadcast: boolean): InboxEntry => ({
  position,
  fields,
  isBroadcast,
  readAt: null,
  archivedAt: null,
  seenAt: null,
});

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
  /**
   * By message id, the entries the store does not keep on the message's own record (the store's MessageRecord:
   * every recipient but a message's first); sharded once large (a broadcast-heavy inbox holds every broadcast).
   */
  private readonly byId = new ShardedMap<InboxEntry>();
  /** The outbox entries of messages whose record names another sender (not met in a log written by this mailbox). */
  private readonly outboxIds = new ShardedMap<true>();
  readonly byPriority: Record<Priority, number> = { low: 0, normal: 0, high: 0 };
  lastActivityAt: string | null = null;
  /** Unread, not archived, never seen (the read model's rules move it). */
  unseen = 0;
  private unreadTotal = 0;
  /**
   * The message asked about last and its entry: the rules look an entry up, then write to it, then the
   * wake is read from it (see MemoryProjectionStore.find), each a lookup in a large Map that is rarely in
   * cache. Entries are never replaced or removed, so only `add` has to keep this in step.
   */
  private lastMessageId: string | null = null;
  private lastEntry: InboxEntry | undefined = undefined;

  get unreadCount(): number {
    return this.unreadTotal;
  }

  get oldestUnreadAt(): string | null {
    for (const entry of this.unread) if (isUnread(entry)) return entry.fields.sentAt;
    return null;
  }

  entry(messageId: string): InboxEntry | undefined {
    if (messageId !== this.lastMessageId) {
      this.lastMessageId = messageId;
      this.lastEntry = this.byId.get(messageId);
    }
    return this.lastEntry;
  }

  hasOutbox(messageId: string): boolean {
    return this.outboxIds.size > 0 && this.outboxIds.has(messageId);
  }

  /** A new entry; `byId`: found by entry() (false: the store keeps it on the message's record). */
  add(position: number, fields: InboxEntryFields, isBroadcast: boolean, byId: boolean): InboxEntry {
    const entry = newEntry(position, fields, isBroadcast);
    if (byId) {
      this.byId.set(fields.messageId, entry);
      this.lastMessageId = fields.messageId;
      this.lastEntry = entry;
    }
    insertSorted(this.entries, entry);
    insertSorted(this.unread, entry);
    return entry;
  }

  /** A new outbox entry; `byId`: found by hasOutbox() (false: the message's record names this sender). */
  addOutbox(position: number, fields: InboxEntryFields, byId: boolean): void {
    if (byId) this.outboxIds.set(fields.messageId, true);
    insertSorted(this.outbox, newEntry(position, fields, isBroadcastAddress(fields.to)));
  }

  /** Back in the inbox: an unread entry goes back into the unread index unless it is still there (not yet compacted out). */
  unarchive(entry: InboxEntry): void {
    entry.archivedAt = null;
    if (entry.readAt !== null) return;
    const at = lowerBound(this.unread, entry.position);
    if (this.unread[at] !== entry) this.unread.splice(at, 0, entry);
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
