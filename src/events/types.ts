/**
 * Events are data, named in the past tense. Every event carries metadata that
 * says who caused it and why; the schema version lives in metadata so that old
 * events stay readable through upcasters (see upcasters.ts).
 */
import type { Priority, TaskEnvelope } from '../commands/messageFields';
import type { Role } from '../commands/roles';

export interface EventMetadata {
  commandId: string;
  correlationId: string;
  causationId: string;
  actor: string;
  at: string; // ISO-8601, from the command's clock, never from a decider
  schemaVersion: number;
}

export interface Event<Type extends string, Data> {
  type: Type;
  data: Data;
}

export type AgentRegistered = Event<'AgentRegistered', {
  identity: string;
  role: Role;
  tokenHash: string;
  registeredAt: string;
}>;

export type AgentRetired = Event<'AgentRetired', { identity: string; retiredAt: string }>;

/** A new token for the agent; the old one is refused from then on. Only the hash is stored, as at registration. */
export type AgentTokenRotated = Event<'AgentTokenRotated', { identity: string; tokenHash: string; rotatedAt: string }>;

/** The fields a listing shows without reading the body. */
export interface MessageSummaryFields {
  messageId: string;
  from: string;
  to: string;
  subject: string;
  priority: Priority;
  threadId: string;
  inReplyTo: string | null;
  tags: string[];
  sentAt: string;
  wakeSuppressed: boolean;
  hasTask: boolean;
}

export type MessageSent = Event<'MessageSent', MessageSummaryFields & {
  body: string;
  task: TaskEnvelope | null;
  /** Direct: [to]. Broadcast: the audience snapshot, one BroadcastDelivered each. */
  recipients: string[];
  idempotencyKey: string | null;
  /** Fingerprint of the request, to refuse a reused Idempotency-Key with another payload. */
  requestHash: string;
}>;

/**
 * One per broadcast audience member. It repeats the summary fields so that a
 * projector can place it in the recipient's inbox from this event alone (no
 * cross-key lookups: Redis Cluster keeps each agent's keys in one slot).
 */
export type BroadcastDelivered = Event<'BroadcastDelivered', Omit<MessageSummaryFields, 'hasTask'> & {
  recipient: string;
  hasTask: boolean;
  deliveredAt: string;
}>;

export type ReceiptRead = Event<'ReceiptRead', {
  messageId: string;
  reader: string;
  readAt: string;
  priority: Priority;
  sentAt: string;
}>;

export type MessageArchived = Event<'MessageArchived', {
  messageId: string;
  recipient: string;
  archivedAt: string;
  wasUnread: boolean;
  priority: Priority;
  sentAt: string;
}>;

export type AgentEvent = AgentRegistered | AgentRetired | AgentTokenRotated;
export type MessageEvent = MessageSent | BroadcastDelivered | ReceiptRead | MessageArchived;
export type MailboxEvent = AgentEvent | MessageEvent;
export type MailboxEventType = MailboxEvent['type'];

export const MAILBOX_EVENT_TYPES: readonly MailboxEventType[] = [
  'AgentRegistered', 'AgentRetired', 'AgentTokenRotated', 'MessageSent', 'BroadcastDelivered', 'ReceiptRead', 'MessageArchived',
];

/** An event to append: id is deterministic from the command (see eventIds.ts). Distributive, so `type` narrows `data`. */
export type NewEvent<E extends MailboxEvent = MailboxEvent> = E extends MailboxEvent
  ? { eventId: string; type: E['type']; data: E['data']; metadata: EventMetadata }
  : never;

/** An event as read back from a store: stream revision and global log position. */
export type StoredEvent<E extends MailboxEvent = MailboxEvent> = E extends MailboxEvent
  ? NewEvent<E> & { streamName: string; revision: bigint; position: bigint }
  : never;
