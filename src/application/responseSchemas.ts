/**
 * What the API answers, as zod schemas: the OpenAPI success responses and the
 * MCP tools' outputSchema are generated from these, and the type checks at the
 * bottom keep them equal to the result types the application returns.
 */
import { z } from 'zod';
import type {
  ArchiveResult,
  BulkReadResult,
  ReadAllResult,
  ReadResult,
  Registration,
  SendResult,
  UnarchiveResult,
} from './mailboxCommands';
import type { HeartbeatAnswer, InboxCount, MessageDetail } from './mailboxQueries';
import { PRIORITIES } from '../commands/messageFields';
import { ROLES } from '../commands/roles';
import type { AgentView, MessagePage } from '../projections/projectionStore';

const timestamp = z.string().describe('ISO 8601 time');
const optionalTime = timestamp.nullable();
const priority = z.enum(PRIORITIES);
const byPriority = z
  .object({ low: z.number().int(), normal: z.number().int(), high: z.number().int() })
  .describe('unread messages by priority');
const task = z
  .looseObject({})
  .describe(
    "the A2A task envelope as sent, but its state (canonical PascalCase) the task's state now (get_task: who holds it, since when)",
  );

/** A message's `to` as sent: one identity, AGENT:*, or a list of identities. */
const addressee = z
  .union([z.string(), z.array(z.string())])
  .describe('@identity, AGENT:* (broadcast), or the list of identities it was sent to');

export const warningSchema = z
  .looseObject({ code: z.string(), message: z.string() })
  .describe('a hint on an accepted command, e.g. UNREGISTERED_RECIPIENT with suggestions');

export const sendResultSchema = z.object({
  messageId: z.uuid(),
  status: z.literal('sent'),
  sentAt: timestamp,
  to: addressee,
  recipients: z.array(z.string()).describe('the identities the message was delivered to'),
  threadId: z.string(),
  expectsReplyBy: timestamp
    .optional()
    .describe('when the reply is due, as kept (UTC, to the ms; a duration counted from sentAt); absent when none was asked'),
  warnings: z.array(warningSchema).optional(),
});

const listedMessage = z.object({
  messageId: z.uuid(),
  from: z.string(),
  to: addressee,
  subject: z.string(),
  priority,
  sentAt: timestamp,
  readAt: optionalTime.describe('when you read it; null while unread'),
  seenAt: optionalTime.describe(
    'inbox: when it was first returned to you (a list page or a get); null the first time (recorded shortly after). Outbox: null',
  ),
  archivedAt: timestamp.optional().describe('status=archived listings only: when you archived it'),
  threadId: z.string(),
  inReplyTo: z.uuid().nullable(),
  tags: z.array(z.string()),
  task: task.nullable().optional(),
});

export const messagePageSchema = z.object({
  messages: z.array(listedMessage).describe('newest first'),
  nextCursor: z.string().nullable().describe('pass as cursor for the next page; null on the last page'),
  unreadCount: z.number().int().describe('your unread inbox messages'),
});

export const messageDetailSchema = z.object({
  messageId: z.uuid(),
  from: z.string(),
  to: addressee,
  subject: z.string(),
  body: z.string(),
  priority: z.string(),
  sentAt: timestamp,
  threadId: z.string(),
  inReplyTo: z.uuid().nullable(),
  tags: z.array(z.string()),
  task: task.nullable(),
  readAt: optionalTime,
  archivedAt: optionalTime,
  receipts: z
    .array(z.object({ recipient: z.string(), readAt: optionalTime, archivedAt: optionalTime }))
    .optional()
    .describe("every recipient's receipt; shown to the sender and auditors only"),
});

const readOneSchema = z.object({ messageId: z.uuid(), status: z.literal('read'), readAt: timestamp });
export const readResultSchema = readOneSchema.extend({ warnings: z.array(warningSchema).optional() });
const errorEnvelopeSchema = z.looseObject({ error: z.string(), code: z.string(), message: z.string() });
export const bulkReadResultSchema = z.object({
  results: z
    .array(z.union([readOneSchema, z.object({ messageId: z.string(), status: z.literal('error'), error: errorEnvelopeSchema })]))
    .describe('one result per distinct id, in the order given (a repeated id: a DUPLICATE_MESSAGE_ID warning)'),
  warnings: z.array(warningSchema).optional(),
});
export const readAllResultSchema = z.object({
  all: z.literal(true),
  status: z.literal('read'),
  changed: z.number().int().describe('how many messages this call marked read (0 on a repeat)'),
  messageIds: z.array(z.uuid()).describe('the messages this call marked read'),
  withheldUnseenCount: z
    .number()
    .int()
    .describe('unread messages that matched but were never returned to you, so not marked (0 with includeUnseen)'),
  readAt: optionalTime.describe('when they were marked; null when nothing changed'),
  warnings: z.array(warningSchema).optional(),
});
export const markReadResultSchema = z.union([readResultSchema, bulkReadResultSchema, readAllResultSchema]);

export const archiveResultSchema = z.object({
  messageId: z.uuid(),
  status: z.literal('archived'),
  archivedAt: timestamp,
  changed: z.boolean().describe('false: already archived (archivedAt is when), so nothing changed'),
  warnings: z.array(warningSchema).optional(),
});

export const unarchiveResultSchema = z.object({
  messageId: z.uuid(),
  status: z.literal('inbox').describe('the message is in your inbox (status=archived listings no longer show it)'),
  readAt: optionalTime.describe('null: it counts as unread again'),
  changed: z.boolean().describe('false: it was not archived, so nothing changed'),
  warnings: z.array(warningSchema).optional(),
});

const agentView = z.object({
  identity: z.string(),
  role: z.enum(ROLES),
  registeredAt: timestamp,
  retired: z.boolean(),
  retiredAt: optionalTime,
});
export const agentListSchema = z.object({ agents: z.array(agentView) });
export const registrationSchema = z.object({
  identity: z.string(),
  role: z.string(),
  token: z.string().describe('the bearer token; shown once, store it'),
  registeredAt: timestamp,
  warnings: z.array(warningSchema).optional(),
});
export const retirementSchema = z.object({
  identity: z.string(),
  retiredAt: timestamp,
  changed: z.boolean().describe('false: it was already retired (retiredAt is when), so nothing changed'),
  releasedTasks: z
    .array(z.uuid())
    .describe('the AGENT:* and list tasks it held that were returned to their audiences now (TaskReleased; back to Submitted)'),
  canceledTasks: z
    .array(z.uuid())
    .describe(
      'the tasks it sent that had not ended, canceled now (TaskStateChanged to Canceled, reason "sender retired"): ' +
        'it can never answer, cancel or take them',
    ),
  warnings: z.array(warningSchema).optional(),
});
export const tokenRotationSchema = z.object({
  identity: z.string(),
  token: z.string().describe('the new bearer token; shown once, store it; the old one is refused from now on'),
  rotatedAt: timestamp,
  warnings: z.array(warningSchema).optional(),
});

export const inboxCountSchema = z.object({
  unreadCount: z.number().int().describe('your unread inbox messages'),
  unseenCount: z
    .number()
    .int()
    .describe('of those, the ones never returned to you yet (no list page or get showed them): mark_read all withholds them'),
  byPriority,
  unread: z.number().int().describe("unreadCount's first name (DESIGN's contract): kept"),
});

const heartbeatCounts = z.object({
  identity: z.string(),
  unreadCount: z.number().int(),
  unseenCount: z.number().int().describe('of the unread, those never returned to the agent yet'),
  byPriority,
  oldestUnreadAt: optionalTime,
  lastActivityAt: optionalTime,
  tasksWaiting: z
    .number()
    .int()
    .describe(
      'tasks waiting on the agent: held and Submitted/Working; or sent and asking for input (InputRequired/AuthRequired), ' +
        'or sent and finished without you (completed, failed, rejected, expired) until you get the task ' +
        '(GET /v1/tasks/{id}, get_task; the sent list marks them outcomeUnseen)',
    ),
  repliesOwed: z.number().int().describe('replies the agent owes: sends that expected its answer in the thread by a time'),
  nextReplyDueBy: optionalTime.describe('the earliest of those times: overdue once it passed'),
  unread: z.number().int().describe("unreadCount's first name (DESIGN's contract): kept"),
});
export const heartbeatListSchema = z.object({ agents: z.array(heartbeatCounts) });

export const auditPageSchema = z.object({
  events: z.array(
    z.object({
      position: z.string(),
      streamName: z.string(),
      revision: z.string(),
      eventId: z.string(),
      type: z.string(),
      data: z.looseObject({}),
      metadata: z.looseObject({}),
    }),
  ),
  nextAfter: z.string().nullable().describe('pass as after for the next page'),
});

export const healthSchema = z.object({ status: z.literal('ok') });
export const readinessSchema = z.looseObject({
  // 'degraded' is a 200 too (serving; a write failing or views lagging): the schema said 'ready' alone.
  status: z.enum(['ready', 'degraded']),
  eventStore: z.looseObject({ ok: z.boolean() }),
  projectionStore: z.looseObject({ ok: z.boolean(), backend: z.enum(['memory', 'sqlite', 'redis']) }),
  projections: z.looseObject({
    ok: z.boolean(),
    running: z.boolean(),
    lag: z
      .number()
      .nullable()
      .describe(
        'events in the log the views do not hold yet (counted, not a difference of positions: EventStoreDB positions ' +
          'are byte offsets); null when a store did not answer; not ready above 10000',
      ),
    lagAtLeast: z
      .literal(true)
      .optional()
      .describe('present when the count stopped at 10001 (EventStoreDB, read to count): that many events behind or more'),
    /** Who projects: this process alone (embedded views), or the projector lease's holder (this node leading, or another). */
    leadership: z
      .looseObject({
        role: z.enum(['alone', 'leading', 'following']),
        node: z.string().optional(),
        leader: z.string().nullable().optional(),
        token: z.string().nullable().optional(),
        leaseRunsOutInMs: z.number().optional(),
        note: z.string().optional(),
        storeUnreachableForMs: z
          .number()
          .optional()
          .describe("this node's looks cannot reach the lease's store (Redis): leader is the holder its last look found"),
      })
      .optional(),
    rulesRebuild: z
      .object({ viewsRules: z.string(), rules: z.string(), since: z.string(), note: z.string() })
      .optional()
      .describe(
        'only while this node rebuilds views built by other rules (after an upgrade over Redis views): the views ' +
          'served answer by the earlier rules (viewsRules) until the switch; the node stays ready',
      ),
    rulesUnknown: z
      .object({ since: z.string(), lastError: z.string(), nextLookAt: z.string(), note: z.string() })
      .optional()
      .describe(
        'only while the look at which rules built the views fails: taken again with backoff (nextLookAt); the views ' +
          'serve as they are meanwhile; the node stays ready',
      ),
  }),
});

export const jsonRpcResponseSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.looseObject({}).optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string() }).optional(),
});
export const openApiDocumentSchema = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) });

// Compile-time drift checks: each result type must be assignable to its schema's type, and name no key the schema
// lacks (an optional key such as `warnings` is assignable to a schema without it, and a generated z.object schema
// says additionalProperties: false: an MCP client that validates the result, as the SDK's does, then refuses it).
// A misfit is `false`, never `never`: never is assignable to `true`, so a check that answered never could not fail.
// Each member of a result union is checked against each member of the schema's, so that one member's key (the
// read-all result's warnings) does not pass for another's.
type FitsOne<Value, Input> = Value extends Input ? ([Exclude<keyof Value, keyof Input>] extends [never] ? true : false) : false;
type FitsSome<Value, Input> = true extends (Input extends unknown ? FitsOne<Value, Input> : never) ? true : false;
export type Fits<Value, Schema extends z.ZodType> = false extends (
  Value extends unknown ? FitsSome<Value, z.input<Schema>> : never
)
  ? false
  : true;
export const fits = <T extends true>(): T => true as T;
void [
  fits<Fits<SendResult, typeof sendResultSchema>>(),
  fits<Fits<MessagePage, typeof messagePageSchema>>(),
  fits<Fits<MessageDetail, typeof messageDetailSchema>>(),
  fits<Fits<ReadResult | BulkReadResult | ReadAllResult, typeof markReadResultSchema>>(),
  fits<Fits<ArchiveResult, typeof archiveResultSchema>>(),
  fits<Fits<UnarchiveResult, typeof unarchiveResultSchema>>(),
  fits<Fits<{ agents: AgentView[] }, typeof agentListSchema>>(),
  fits<Fits<Registration, typeof registrationSchema>>(),
  fits<Fits<InboxCount, typeof inboxCountSchema>>(),
  fits<Fits<{ agents: HeartbeatAnswer[] }, typeof heartbeatListSchema>>(),
];
