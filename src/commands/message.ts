/** A message's stream: who sent it, who it was delivered to, and each recipient's read and archive state. */
import { namedRecipients } from '../events/addressing';
import type { MessageEvent, MessageSent } from '../events/types';
import { LayeredMap } from './layeredMap';

export interface RecipientState {
  readAt: string | null;
  archivedAt: string | null;
}

export interface MessageState {
  sent: MessageSent['data'] | null;
  /** When the sender expects the replies (its ReplyRequested), else null: a retry of its Idempotency-Key is compared with it. */
  replyDueBy: string | null;
  /** In delivery order. A LayeredMap: a receipt's copy of the state costs what it changed, not every recipient. */
  recipients: LayeredMap<string, RecipientState>;
}

export const initialMessageState = (): MessageState => ({ sent: null, replyDueBy: null, recipients: LayeredMap.empty() });

/** Folds events into a copy of the state: the batch's changes, over the recipients it shares with `state`. */
export function foldMessage(state: MessageState, events: readonly MessageEvent[]): MessageState {
  let sent = state.sent;
  let replyDueBy = state.replyDueBy;
  const changed = new Map<string, RecipientState>();
  const recipients = {
    get: (identity: string) => changed.get(identity) ?? state.recipients.get(identity),
    set: (identity: string, recipient: RecipientState) => changed.set(identity, recipient),
  };
  for (const event of events) {
    switch (event.type) {
      case 'MessageSent': {
        sent = event.data;
        // A direct message's and a list's recipients are named by it; a broadcast's each have a BroadcastDelivered.
        for (const identity of namedRecipients(event.data.to)) recipients.set(identity, { readAt: null, archivedAt: null });
        break;
      }
      case 'BroadcastDelivered':
        recipients.set(event.data.recipient, { readAt: null, archivedAt: null });
        break;
      case 'ReceiptRead': {
        const current = recipients.get(event.data.reader);
        if (current) recipients.set(event.data.reader, { ...current, readAt: event.data.readAt });
        break;
      }
      case 'MessageArchived': {
        const current = recipients.get(event.data.recipient);
        if (current) recipients.set(event.data.recipient, { ...current, archivedAt: event.data.archivedAt });
        break;
      }
      case 'ReplyRequested':
        replyDueBy = event.data.dueBy; // the read model keeps the obligations; a send's retry compares its own with it
        break;
      case 'MessageUnarchived': {
        const current = recipients.get(event.data.recipient);
        if (current) recipients.set(event.data.recipient, { ...current, archivedAt: null });
        break;
      }
      default: {
        const unexpected: never = event;
        throw new Error(`Unexpected message event type ${(unexpected as { type: string }).type}`);
      }
    }
  }
  return { sent, replyDueBy, recipients: state.recipients.with(changed) };
}
