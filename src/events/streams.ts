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
 * A recipient's seen marks (issue 13): batches written off the request path, never contended by the
 * message streams' receipts; nothing decides on them (any order, repeats harmless), so they are appended unchecked.
 */
export const SEEN_STREAM_PREFIX = 'mailbox-seen-';
/** Every mailbox stream starts with this; subscriptions filter on it. */
export const MAILBOX_STREAM_PREFIX = 'mailbox-';

export const messageStream = (messageId: string): string => `${MESSAGE_STREAM_PREFIX}${messageId}`;
export const taskStream = (taskId: string): string => `${TASK_STREAM_PREFIX}${taskId}`;
export const seenStream = (recipient: string): string => `${SEEN_STREAM_PREFIX}${recipient}`;
