/**
 * Which wakes are due (DESIGN section 4): one per new inbox entry (a
 * redelivered entry is no change, so no wake), never to the sender of its own
 * broadcast, none when the sender suppressed wakes. The payload carries the
 * recipient's unread count after the change.
 */
import type { InboxEntryFields, WakeEvent } from '../viewChanges';
import type { ReadModelChange } from './changes';
import type { ReadModelView } from './view';

/** Whether a new inbox entry wakes its recipient (the Redis fast path asks this too). */
export const wakeDue = (recipient: string, entry: InboxEntryFields, isBroadcast: boolean, wakeSuppressed: boolean): boolean =>
  !wakeSuppressed && !(isBroadcast && recipient === entry.from);

/** The wake payload (DESIGN section 4). */
export function wakeOf(recipient: string, entry: InboxEntryFields, isBroadcast: boolean, unreadCount: number, position: bigint): WakeEvent {
  return { type: 'wake/message', messageId: entry.messageId, from: entry.from, to: entry.to, recipient, subject: entry.subject,
    priority: entry.priority, isBroadcast, unreadCount, position: position.toString() };
}

/** The wakes due for `changes`, once they are applied to `view`; appended to `into` when given. */
export function wakesFor(changes: readonly ReadModelChange[], view: ReadModelView, into: WakeEvent[] = []): WakeEvent[] {
  for (const change of changes) {
    if (change.kind !== 'inboxEntryAdded') continue;
    if (!wakeDue(change.recipient, change.entry, change.isBroadcast, change.wakeSuppressed)) continue;
    into.push(wakeOf(change.recipient, change.entry, change.isBroadcast, view.unreadTotal(change.recipient), change.position));
  }
  return into;
}
