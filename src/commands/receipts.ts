/** MarkRead, ArchiveMessage and UnarchiveMessage: per recipient, idempotent, pure. */
import { MailboxError } from '../errors';
import type { MessageArchived, MessageUnarchived, ReceiptRead } from '../events/types';
import type { Command } from './command';
import type { MessageState, RecipientState } from './message';

export type MarkRead = Command<'MarkRead', { messageId: string }>;
export type ArchiveMessage = Command<'ArchiveMessage', { messageId: string }>;
export type UnarchiveMessage = Command<'UnarchiveMessage', { messageId: string }>;

/**
 * Also the answer about a message the caller is not party to (neither sender nor
 * recipient), word for word: message ids must not reveal which messages exist.
 */
export const messageNotFound = (messageId: string, more = ''): MailboxError =>
  new MailboxError(
    'MESSAGE_NOT_FOUND',
    'Message not found',
    `No message ${messageId} exists among those you sent or received; check the id in your inbox or outbox.${more}`,
    { messageId },
  );

/**
 * Said by get_message after either not-found, the same for every id (no existence oracle): an id from a task's history
 * (found as a model: an A2A history entry's messageId passed to get_message) names an entry of a task, not a message.
 * Where the log finds the entry and the caller may read its task, historyEntryNotMessage names the task instead.
 */
export const HISTORY_ENTRY_HINT =
  " An id from a task's history (get_task's history[].messageId or status.message.messageId) names an entry of that " +
  'task, not a message: read it with get_task {"taskId": "<the entry\'s taskId>"} (GET /v1/tasks/{taskId}).';

/**
 * get_message given the id of an entry of a task's history that the caller may read (found as a model: the answer that
 * moved a task, kept only as its id, could not be traced to its task: the generic hint named "<the entry's taskId>").
 */
export const historyEntryNotMessage = (messageId: string, taskId: string): MailboxError =>
  new MailboxError(
    'MESSAGE_NOT_FOUND',
    'Message not found',
    `${messageId} is no message: it is an entry of the history of task ${taskId} (get_task's history[].messageId or ` +
      `status.message.messageId). Read the task with get_task {"taskId": "${taskId}"} (GET /v1/tasks/${taskId}); the ` +
      `message that opened it is get_message {"messageId": "${taskId}"}.`,
    { messageId, taskId },
  );

/**
 * The same answer to an auditor or admin, who may look at every message: "among those you sent or received" was
 * untrue for them (they send and receive none), and sent them to an inbox they do not have.
 */
export const messageNotInLog = (messageId: string, more = ''): MailboxError =>
  new MailboxError(
    'MESSAGE_NOT_FOUND',
    'Message not found',
    `No message ${messageId} exists in this mailbox's log; check the id (GET /v1/audit/events lists every event).${more}`,
    { messageId },
  );

/** Sender or recipient: the ones who may know that the message exists. */
export const isPartyTo = (state: MessageState, identity: string): boolean =>
  state.sent !== null && (state.sent.from === identity || state.recipients.has(identity));

function recipientOf(messageId: string, actor: string, state: MessageState): RecipientState | MailboxError {
  if (!state.sent || !isPartyTo(state, actor)) return messageNotFound(messageId);
  const receipt = state.recipients.get(actor);
  if (!receipt) {
    // the sender, who knows the message, is told why
    return new MailboxError(
      'NOT_A_RECIPIENT',
      'Not a recipient',
      `${actor} is not a recipient of message ${messageId}; only its recipients can mark it read, archive or unarchive it.`,
      { messageId },
    );
  }
  return receipt;
}

export function decideMarkRead(command: MarkRead, state: MessageState): ReceiptRead[] | MailboxError {
  const reader = command.metadata.actor.identity;
  const receipt = recipientOf(command.data.messageId, reader, state);
  if (receipt instanceof MailboxError) return receipt;
  if (receipt.readAt !== null) return []; // idempotent: the first readAt stands
  const sent = state.sent!;
  return [
    {
      type: 'ReceiptRead',
      data: {
        messageId: sent.messageId,
        reader,
        readAt: command.metadata.at,
        priority: sent.priority,
        sentAt: sent.sentAt,
      },
    },
  ];
}

export function decideArchiveMessage(command: ArchiveMessage, state: MessageState): MessageArchived[] | MailboxError {
  const recipient = command.metadata.actor.identity;
  const receipt = recipientOf(command.data.messageId, recipient, state);
  if (receipt instanceof MailboxError) return receipt;
  if (receipt.archivedAt !== null) return [];
  const sent = state.sent!;
  return [
    {
      type: 'MessageArchived',
      data: {
        messageId: sent.messageId,
        recipient,
        archivedAt: command.metadata.at,
        wasUnread: receipt.readAt === null,
        priority: sent.priority,
        sentAt: sent.sentAt,
      },
    },
  ];
}

/** Back to the inbox: only an archived message changes (idempotent: one not archived writes nothing). */
export function decideUnarchiveMessage(command: UnarchiveMessage, state: MessageState): MessageUnarchived[] | MailboxError {
  const recipient = command.metadata.actor.identity;
  const receipt = recipientOf(command.data.messageId, recipient, state);
  if (receipt instanceof MailboxError) return receipt;
  if (receipt.archivedAt === null) return [];
  const sent = state.sent!;
  return [
    {
      type: 'MessageUnarchived',
      data: {
        messageId: sent.messageId,
        recipient,
        unarchivedAt: command.metadata.at,
        priority: sent.priority,
        sentAt: sent.sentAt,
      },
    },
  ];
}
