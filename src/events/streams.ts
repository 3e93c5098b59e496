/**
 * Stream names. All agents live in one registry stream so that a broadcast's
 * audience is one consistent snapshot; each message is its own stream so that
 * receipts on different messages never contend.
 */
export const AGENT_REGISTRY_STREAM = 'mailbox-agents';
export const MESSAGE_STREAM_PREFIX = 'mailbox-message-';
/** A task's lifecycle: its own stream, so claims never contend with the message's receipts. Task id = message id. */
export const TASK_STREAM_PREFIX = 'mailbox-task-';
/**
 * Observations of deliveries made outside the log (wakes handed to streams, nudges delivered), appended in
 * batches without an expected revision: they decide nothing, so they never contend with a message's receipts.
 */
export const DELIVERY_STREAM = 'mailbox-deliveries';
/** One per escalated message: created by the one escalation (WakeEscalated); a second daemon's append conflicts. */
export const ESCALATION_STREAM_PREFIX = 'mailbox-escalation-';
export const escalationStream = (messageId: string): string => `${ESCALATION_STREAM_PREFIX}${messageId}`;
/** One per message whose reply obligation fell due: created by the one ReplyOverdue. */
export const REPLY_OVERDUE_STREAM_PREFIX = 'mailbox-reply-overdue-';
export const replyOverdueStream = (messageId: string): string => `${REPLY_OVERDUE_STREAM_PREFIX}${messageId}`;
/**
 * A recipient's seen marks (issue 13): batches written off the request path, never contended by the
 * message streams' receipts; nothing decides on them (any order, repeats harmless), so they are appended unchecked.
 */
export const SEEN_STREAM_PREFIX = 'mailbox-seen-';
/** Every mailbox stream starts with this; subscriptions filter on it. */
export const MAILBOX_STREAM_PREFIX = 'mailbox-';

export const messageStream = (messageId: string): string => `${MESSAGE_STREAM_PREFIX}${messageId}`;
export const taskStream = (taskId: string): string => `${TASK_STREAM_PREFIX}${taskId}`;
export const seenStream = (recipient: string): string => `${SEEN_STREAM_PREFIX}${recipient}`;
