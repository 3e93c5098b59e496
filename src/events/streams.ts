/**
 * Stream names. All agents live in one registry stream so that a broadcast's
 * audience is one consistent snapshot; each message is its own stream so that
 * receipts on different messages never contend.
 */
export const AGENT_REGISTRY_STREAM = 'mailbox-agents';
export const MESSAGE_STREAM_PREFIX = 'mailbox-message-';
/** Every mailbox stream starts with this; subscriptions filter on it. */
export const MAILBOX_STREAM_PREFIX = 'mailbox-';

export const messageStream = (messageId: string): string => `${MESSAGE_STREAM_PREFIX}${messageId}`;
