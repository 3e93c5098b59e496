/**
 * Events are data, named in the past tense. Every event carries metadata that
 * says who caused it and why; the schema version lives in metadata so that old
 * events stay readable through upcasters (see upcasters.ts).
 */
import type { z } from 'zod';
import {
  EVENT_DATA_V1,
  type eventMetadataV1,
  type PRIORITIES,
  type ROLES,
  type TASK_STATES,
  type taskEnvelopeV1,
} from './storedShapes';

/** The stored shapes' TypeScript types (storedShapes.ts is the source of truth). */
export type Priority = (typeof PRIORITIES)[number];
export type TaskState = (typeof TASK_STATES)[number];
export type Role = (typeof ROLES)[number];
export type TaskEnvelope = z.output<typeof taskEnvelopeV1>;
export type EventMetadata = z.output<typeof eventMetadataV1>;

export interface Event<Type extends string, Data> {
  type: Type;
  data: Data;
}

type DataOf<T extends keyof typeof EVENT_DATA_V1> = z.output<(typeof EVENT_DATA_V1)[T]>;

export type AgentRegistered = Event<'AgentRegistered', DataOf<'AgentRegistered'>>;
export type AgentRetired = Event<'AgentRetired', DataOf<'AgentRetired'>>;
export type MessageSent = Event<'MessageSent', DataOf<'MessageSent'>>;
export type BroadcastDelivered = Event<'BroadcastDelivered', DataOf<'BroadcastDelivered'>>;
export type ReceiptRead = Event<'ReceiptRead', DataOf<'ReceiptRead'>>;
export type MessageArchived = Event<'MessageArchived', DataOf<'MessageArchived'>>;
/** A wake reached the recipient (the delivery ledger's `woken` stage); written in batches to DELIVERY_STREAM. */
export type WakeObserved = Event<'WakeObserved', DataOf<'WakeObserved'>>;
export type WakeVia = WakeObserved['data']['via'];
/** The heartbeat escalated an unwoken message, once (streams.ts: escalationStream). */
export type WakeEscalated = Event<'WakeEscalated', DataOf<'WakeEscalated'>>;
export type MessageUnarchived = Event<'MessageUnarchived', DataOf<'MessageUnarchived'>>;
/** A batch of seen marks, in the recipient's seen stream (streams.ts: seenStream). */
export type MessagesSeen = Event<'MessagesSeen', DataOf<'MessagesSeen'>>;

/** A new token for the agent; the old one is refused from then on. Only the hash is stored, as at registration. */
export type AgentTokenRotated = Event<'AgentTokenRotated', DataOf<'AgentTokenRotated'>>;

/** The fields a listing shows without reading the body (shared by MessageSent and BroadcastDelivered). */
export type MessageSummaryFields = Pick<
  MessageSent['data'],
  | 'messageId'
  | 'from'
  | 'to'
  | 'subject'
  | 'priority'
  | 'threadId'
  | 'inReplyTo'
  | 'tags'
  | 'sentAt'
  | 'wakeSuppressed'
  | 'hasTask'
>;

export type TaskClaimed = Event<'TaskClaimed', DataOf<'TaskClaimed'>>;
export type TaskStateChanged = Event<'TaskStateChanged', DataOf<'TaskStateChanged'>>;
export type TaskArtifactAdded = Event<'TaskArtifactAdded', DataOf<'TaskArtifactAdded'>>;
export type TaskLeaseRenewed = Event<'TaskLeaseRenewed', DataOf<'TaskLeaseRenewed'>>;
export type TaskReleased = Event<'TaskReleased', DataOf<'TaskReleased'>>;
export type TaskLeaseExpired = Event<'TaskLeaseExpired', DataOf<'TaskLeaseExpired'>>;
export type TaskExpired = Event<'TaskExpired', DataOf<'TaskExpired'>>;
export type TaskOutcomeSeen = Event<'TaskOutcomeSeen', DataOf<'TaskOutcomeSeen'>>;
export type TaskArtifact = TaskArtifactAdded['data']['artifact'];

export type AgentEvent = AgentRegistered | AgentRetired | AgentTokenRotated;
/** The sender expects each recipient's answer in the thread by a time (on the message's stream, with its MessageSent). */
export type ReplyRequested = Event<'ReplyRequested', DataOf<'ReplyRequested'>>;
/** A reply obligation fell due, naming who has not answered (streams.ts: replyOverdueStream). */
export type ReplyOverdue = Event<'ReplyOverdue', DataOf<'ReplyOverdue'>>;
export type MessageEvent = MessageSent | BroadcastDelivered | ReceiptRead | MessageArchived | MessageUnarchived | ReplyRequested;
/** One task's stream (streams.ts: taskStream). */
export type TaskEvent =
  | TaskClaimed
  | TaskStateChanged
  | TaskArtifactAdded
  | TaskLeaseRenewed
  | TaskReleased
  | TaskLeaseExpired
  | TaskExpired
  | TaskOutcomeSeen;
/** What was observed about deliveries outside the log (streams.ts: DELIVERY_STREAM). */
export type DeliveryEvent = WakeObserved | WakeEscalated | ReplyOverdue;
export type MailboxEvent = AgentEvent | MessageEvent | TaskEvent | DeliveryEvent | MessagesSeen;
export type MailboxEventType = MailboxEvent['type'];

export const MAILBOX_EVENT_TYPES = Object.keys(EVENT_DATA_V1) as readonly MailboxEventType[];

/** An event to append: id is deterministic from the command (see eventIds.ts). Distributive, so `type` narrows `data`. */
export type NewEvent<E extends MailboxEvent = MailboxEvent> = E extends MailboxEvent
  ? { eventId: string; type: E['type']; data: E['data']; metadata: EventMetadata }
  : never;

/** An event as read back from a store: stream revision and global log position. */
export type StoredEvent<E extends MailboxEvent = MailboxEvent> = E extends MailboxEvent
  ? NewEvent<E> & { streamName: string; revision: bigint; position: bigint }
  : never;
