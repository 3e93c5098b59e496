/**
 * Which wakes are due (DESIGN section 4): one per new inbox entry (a
 * redelivered entry is no change, so no wake), never to the sender of its own
 * broadcast, none when the sender suppressed wakes. The payload carries the
 * recipient's unread count after the change.
 */
import type { InboxEntryFields, LedgerFact, MessageWakeEvent, ReplyOverdueWakeEvent, ViewChange } from '../viewChanges';
import type { ReadModelView } from './view';

/** Whether a new inbox entry wakes its recipient (the Redis fast path asks this too). */
export const wakeDue = (recipient: string, entry: InboxEntryFields, isBroadcast: boolean, wakeSuppressed: boolean): boolean =>
  !wakeSuppressed && !(isBroadcast && recipient === entry.from);

/** The wake payload (DESIGN section 4). */
export function wakeOf(
  recipient: string,
  entry: InboxEntryFields,
  isBroadcast: boolean,
  unreadCount: number,
  position: bigint,
): MessageWakeEvent {
  return {
    type: 'wake/message',
    messageId: entry.messageId,
    from: entry.from,
    to: entry.to,
    recipient,
    subject: entry.subject,
    priority: entry.priority,
    isBroadcast,
    unreadCount,
    position: position.toString(),
  };
}

/**
 * The wake one fact makes due, read from the views once its changes are applied (null: none):
 * an inbox fact whose entry was added by this very event (a redelivered entry has an earlier one).
 */
export function wakeFor(fact: ViewChange, position: bigint, view: ReadModelView): MessageWakeEvent | null {
  if (fact.kind !== 'inboxAdded' || !wakeDue(fact.recipient, fact.entry, fact.isBroadcast, fact.wakeSuppressed)) return null;
  if (view.entry(fact.recipient, fact.entry.messageId)?.position !== Number(position)) return null;
  return wakeOf(fact.recipient, fact.entry, fact.isBroadcast, view.unreadTotal(fact.recipient), position);
}

/** The sender's wake when its message's reply obligation is found overdue (issue 13): who has not answered. */
export function replyOverdueWake(fact: Extract<LedgerFact, { kind: 'replyOverdue' }>, position: bigint): ReplyOverdueWakeEvent {
  return {
    type: 'wake/reply-overdue',
    messageId: fact.messageId,
    recipient: fact.sender,
    waitingOn: fact.waitingOn,
    dueBy: fact.dueBy,
    position: position.toString(),
  };
}
