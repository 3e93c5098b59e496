/**
 * The stored shape of every event, per type and schema version: what the log
 * holds, independent of what the command surfaces accept. Inputs are
 * lossless-permissive and normalised by the commands layer; what reaches the
 * log is the canonical form defined here, and every read is checked against it
 * (readEvent.ts). Changing a shape means a new schema version and an upcaster,
 * never an edit of a version already written.
 */
import { z } from 'zod';
import { TASK_EVENT_DATA_V1, TASK_STATES, taskPartV1 } from './taskShapes';

export const PRIORITIES = ['low', 'normal', 'high'] as const;
export { TASK_STATES };
export const ROLES = ['agent', 'auditor', 'admin'] as const;

const priority = z.enum(PRIORITIES);
/** Timestamps are the command clock's ISO-8601 text; checked as strings to keep reads cheap. */
const timestamp = z.string();

const isoDate = z.iso.datetime({ offset: true });
/** The A2A task subset as stored: the canonical state spelling only. */
export const taskEnvelopeV1 = z.strictObject({
  state: z.enum(TASK_STATES).optional(),
  input: z.strictObject({ parts: z.array(taskPartV1) }).optional(),
  metadata: z
    .strictObject({
      sessionId: z.string().optional(),
      relatedTickets: z.array(z.string()).optional(),
      relatedDiscussions: z.array(z.string()).optional(),
      parentTask: z.string().optional(),
      priorComments: z.array(z.strictObject({ url: z.string(), commentId: z.string() })).optional(),
    })
    .optional(),
  expectedOutput: z
    .strictObject({
      shape: z.enum(['review', 'ticket', 'discussion', 'pr', 'free-form']),
      locationHint: z.string().optional(),
    })
    .optional(),
  budget: z
    .strictObject({
      deadline: isoDate.optional(),
      maxTokens: z.number().int().positive().optional(),
    })
    .optional(),
  expiresAt: isoDate.optional(),
});

export const eventMetadataV1 = z.strictObject({
  commandId: z.string(),
  correlationId: z.string(),
  causationId: z.string(),
  actor: z.string(),
  at: timestamp, // from the command's clock, never from a decider
  schemaVersion: z.number().int(),
});

/**
 * Who a message is addressed to: one identity, the literal AGENT:* broadcast, or a list of identities
 * (issue 13). The list form widened this field in place: every event written before still fits, and
 * a build from before the widening refuses a list message loudly at its shape check, never misreads it.
 */
export const addresseeV1 = z.union([z.string(), z.array(z.string())]);

/** The fields a listing shows without reading the body. */
const messageSummaryV1 = {
  messageId: z.string(),
  from: z.string(),
  to: addresseeV1,
  subject: z.string(),
  priority,
  threadId: z.string(),
  inReplyTo: z.string().nullable(),
  tags: z.array(z.string()),
  sentAt: timestamp,
  wakeSuppressed: z.boolean(),
  hasTask: z.boolean(),
};

const agentRegisteredV1 = z.strictObject({
  identity: z.string(),
  role: z.enum(ROLES),
  tokenHash: z.string(),
  registeredAt: timestamp,
});
const agentRetiredV1 = z.strictObject({ identity: z.string(), retiredAt: timestamp });
/** A new token for the agent; the old one is refused from then on. Only the hash is stored, as at registration. */
const agentTokenRotatedV1 = z.strictObject({ identity: z.string(), tokenHash: z.string(), rotatedAt: timestamp });
const messageSentV1 = z.strictObject({
  ...messageSummaryV1,
  body: z.string(),
  task: taskEnvelopeV1.nullable(),
  /** Direct: [to]. A list: its identities, once each (delivered by this event). Broadcast: the audience snapshot, one BroadcastDelivered each. */
  recipients: z.array(z.string()),
  idempotencyKey: z.string().nullable(),
  /** Fingerprint of the request, to refuse a reused Idempotency-Key with another payload. */
  requestHash: z.string(),
});
/**
 * One per broadcast audience member (logs written while lists were delivered this way also hold one per
 * identity of a list `to`; the read model's one-entry-per-recipient rule makes the two forms equal). It repeats the summary fields so that a
 * projector can place it in the recipient's inbox from this event alone (no
 * cross-key lookups: Redis Cluster keeps each agent's keys in one slot).
 */
const broadcastDeliveredV1 = z.strictObject({ ...messageSummaryV1, recipient: z.string(), deliveredAt: timestamp });
const receiptReadV1 = z.strictObject({
  messageId: z.string(),
  reader: z.string(),
  readAt: timestamp,
  priority,
  sentAt: timestamp,
});
const messageArchivedV1 = z.strictObject({
  messageId: z.string(),
  recipient: z.string(),
  archivedAt: timestamp,
  wasUnread: z.boolean(),
  priority,
  sentAt: timestamp,
});
/** An archived message back in the recipient's inbox (issue 13); priority and sentAt as on MessageArchived. */
const messageUnarchivedV1 = z.strictObject({
  messageId: z.string(),
  recipient: z.string(),
  unarchivedAt: timestamp,
  priority,
  sentAt: timestamp,
});
/**
 * Messages returned to their recipient for the first time (a list page or a get): seen, not read (issue 13).
 * Written in batches off the request path, in the recipient's own seen stream (streams.ts): one event per
 * batch, however many messages. A mark for a message already seen, or not the recipient's, changes nothing.
 */
const messagesSeenV1 = z.strictObject({
  recipient: z.string(),
  seenAt: timestamp,
  messageIds: z.array(z.string()),
});

/**
 * How a wake reached a recipient, recorded off the request path (issue 13, the delivery ledger):
 * 'stream' a wake event written to one of its open wake streams (GET /v1/wake); the heartbeat's nudge
 * targets: 'webhook' (2xx), 'hook' (command hook exit 0), 'redis' (a PUBLISH a subscriber received).
 */
export const WAKE_VIAS = ['stream', 'webhook', 'hook', 'redis'] as const;
const wakeObservedV1 = z.strictObject({
  messageId: z.string(),
  recipient: z.string(),
  via: z.enum(WAKE_VIAS),
  observedAt: timestamp,
});

/**
 * The heartbeat escalated a message that woke nobody within the wake SLA (issue 13): written once per
 * message (the append that creates its escalation stream wins; another daemon's conflicts), before the
 * nudges to `recipients` (those not woken) go out.
 */
const wakeEscalatedV1 = z.strictObject({
  messageId: z.string(),
  recipients: z.array(z.string()),
  slaMs: z.number().int().nonnegative(),
  escalatedAt: timestamp,
});

/**
 * The sender expects every recipient to answer in the thread by `dueBy` (issue 13: reply obligations), appended
 * with the MessageSent it belongs to.
 */
const replyRequestedV1 = z.strictObject({ messageId: z.string(), dueBy: timestamp });
/**
 * A reply obligation fell due with recipients not having answered (`waitingOn`): written once per message by the
 * heartbeat (the append creating the message's reply-overdue stream wins), before it nudges them and wakes the sender.
 */
const replyOverdueV1 = z.strictObject({
  messageId: z.string(),
  sender: z.string(),
  waitingOn: z.array(z.string()),
  dueBy: timestamp,
  overdueAt: timestamp,
});

/** The current version's data shape of each event type. */
export const EVENT_DATA_V1 = {
  AgentRegistered: agentRegisteredV1,
  AgentRetired: agentRetiredV1,
  AgentTokenRotated: agentTokenRotatedV1,
  MessageSent: messageSentV1,
  BroadcastDelivered: broadcastDeliveredV1,
  ReceiptRead: receiptReadV1,
  MessageArchived: messageArchivedV1,
  WakeObserved: wakeObservedV1,
  WakeEscalated: wakeEscalatedV1,
  ReplyRequested: replyRequestedV1,
  ReplyOverdue: replyOverdueV1,
  MessageUnarchived: messageUnarchivedV1,
  MessagesSeen: messagesSeenV1,
  ...TASK_EVENT_DATA_V1,
} as const;

export type StoredEventType = keyof typeof EVENT_DATA_V1;
export type EventDataShapes = { [T in StoredEventType]: z.ZodType };

export const CURRENT_SCHEMA_VERSION = 1;

/**
 * Every schema version a log may hold, with the data shape of each type at that version. Version 0
 * (events written before versions were counted) has the same shapes as version 1.
 */
export const STORED_SHAPES: ReadonlyMap<number, EventDataShapes> = new Map<number, EventDataShapes>([
  [0, EVENT_DATA_V1],
  [1, EVENT_DATA_V1],
]);
