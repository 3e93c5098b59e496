/**
 * What the console's reads answer, as zod schemas for the OpenAPI document
 * (the audit stream, rejections, agents table, series, message story, whoami);
 * the type checks at the bottom keep them equal to what the code returns.
 */
import { z } from 'zod';
import { ROLES } from '../commands/roles';
import type { FlowEntry } from './liveFlow';
import type { UnwokenPage } from '../projections/readModel/ledger';
import type { RejectionRecord } from './rejectionLog';
import type { ServedLimits } from './servedLimits';

/** GET /v1/audit/unwoken: the unwoken alarm as the server's own /metrics counts it, with the oldest few. */
export type UnwokenAlarm = UnwokenPage & { slaMs: number; sentBefore: string };

const timestamp = z.string().describe('ISO 8601 time');

export const whoamiSchema = z.object({
  identity: z.string().describe("@name, or 'admin' for the admin token"),
  role: z.enum(ROLES),
  limits: z
    .object({
      maxBodyBytes: z
        .number()
        .int()
        .positive()
        .describe(
          'the largest message body this server takes, in UTF-8 bytes (its MAILBOX_MAX_BODY_BYTES); over it a send is 413 PAYLOAD_TOO_LARGE',
        ),
    })
    .describe("this server's own limits, as its tools/list and GET /openapi.json state them (`mailbox mcp` reads them here)"),
});

export const flowEntrySchema = z.object({
  position: z.string().describe('log position; also the SSE id (resume with after= or Last-Event-ID)'),
  type: z.string(),
  at: timestamp,
  actor: z.string(),
  agents: z.array(z.string()).describe('every identity the event concerns (the agent filter matches these)'),
  messageId: z.string().optional(),
  threadId: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  subject: z.string().optional(),
  priority: z.string().optional(),
  audienceSize: z.number().int().optional().describe("a send's audience size at send time (direct: 1)"),
  taskOpenedAs: z.string().optional().describe('the state the task a send opens opened in (absent: the send opens no task)'),
  recipient: z.string().optional(),
  identity: z.string().optional(),
  role: z.string().optional(),
  messageIds: z
    .array(z.string())
    .optional()
    .describe('the messages of a seen mark (MessagesSeen); messageId as well when it marks one'),
  detail: z.string().optional().describe("a task or delivery ledger event in words (a task's id is its message's, messageId)"),
});

export const rejectionSchema = z.object({
  at: timestamp,
  agent: z
    .string()
    .nullable()
    .describe('the authenticated caller; null when the token itself was refused, or a route not found had no valid one'),
  role: z.string().nullable(),
  command: z
    .string()
    .describe(
      'the command (send, claim_task, ...); a read by its MCP tool on both transports (list_messages, get_message, ' +
        'get_task, ...); else the route (a route not found, as asked; a read no tool does) or the MCP tool called (one ' +
        'that does not exist, as called), or the JSON-RPC method of a message refused over MCP (initialize; tools/call ' +
        'naming no tool; POST /mcp: no message could be read)',
    ),
  surface: z.enum(['http', 'mcp']),
  route: z
    .string()
    .optional()
    .describe('on HTTP: the route asked, its method and path template (GET /v1/messages/:id); a route not found, as asked'),
  code: z.string(),
  status: z.number().int(),
  message: z.string().describe('what the caller was told'),
  to: z.string().optional().describe('the recipient refused (a list: its entries joined)'),
  entry: z.string().optional().describe("the entry of a list 'to' that was refused"),
  identity: z.string().optional().describe('the agent a registry command named and did not find'),
  suggestions: z
    .array(z.string())
    .optional()
    .describe("what the caller was offered instead of the refused entry, identity, recipient or field (the error's own)"),
  field: z.string().optional().describe('the field refused'),
});

export const rejectionPageSchema = z.object({
  rejections: z.array(rejectionSchema).describe('newest first'),
  capacity: z.number().int().describe('how many recent rejections are kept'),
  backend: z.enum(['memory', 'redis']),
});

export const consoleAgentsSchema = z.object({
  agents: z.array(
    z.object({
      identity: z.string(),
      role: z.enum(ROLES),
      registeredAt: timestamp,
      retired: z.boolean(),
      retiredAt: timestamp.nullable(),
      unreadCount: z.number().int(),
      oldestUnreadAt: timestamp.nullable(),
      lastActivityAt: timestamp.nullable(),
      wakeStreams: z.number().int().describe('open wake streams on the node that answered'),
      lastNudge: z
        .object({ at: timestamp, via: z.string().describe('webhook, hook or redis') })
        .nullable()
        .describe("the newest heartbeat nudge delivered to it (a WakeObserved via the agent's nudge target); null: never"),
    }),
  ),
});

export const seriesSchema = z.object({
  everySeconds: z.number(),
  samples: z.array(
    z.object({
      t: z.number().describe('Unix time, seconds'),
      sendsPerSecond: z.number().nullable().describe('sends accepted by this node per second since the previous sample'),
      lag: z.number().nullable(),
      unread: z
        .number()
        .nullable()
        .describe("the registered agents' unread mail, as the agents table sums it (a name no agent holds is not counted)"),
    }),
  ),
});

export const messageStorySchema = z.looseObject({
  messageId: z.string(),
  sent: z.looseObject({
    from: z.string(),
    // As sent: one identity, AGENT:*, or the list of identities (a list send keeps its list).
    to: z.union([z.string(), z.array(z.string())]),
    threadId: z.string(),
    position: z.string(),
    isBroadcast: z.boolean(),
  }),
  audience: z.array(z.string()),
  recipients: z.array(
    z.object({
      identity: z.string(),
      deliveredAt: timestamp.nullable(),
      deliveredPosition: z.string().nullable(),
      readAt: timestamp.nullable(),
      readPosition: z.string().nullable(),
      archivedAt: timestamp.nullable(),
      archivedPosition: z.string().nullable(),
      archivedUnread: z.boolean().nullable(),
      unarchived: z
        .array(
          z.object({
            archivedAt: timestamp,
            archivedPosition: z.string(),
            unarchivedAt: timestamp,
            unarchivedPosition: z.string(),
          }),
        )
        .describe(
          'each archive the recipient undid, in log order (archivedAt and archivedPosition above are null once it is back in the inbox)',
        ),
    }),
  ),
  replyDueBy: timestamp.nullable().describe("when the sender expects the recipients' replies (expectsReplyBy), or null"),
  anomalies: z.array(z.string()).describe('whatever in the stream contradicts the story'),
  retiredRecipients: z
    .record(z.string(), z.object({ at: timestamp, position: z.string() }))
    .describe(
      'the recipients that were retired, by identity: when, and the log position of their AgentRetired (one retired before this message reached it can never read it)',
    ),
});

export const unwokenAlarmSchema = z.object({
  slaMs: z.number().int().describe('MAILBOX_WAKE_SLA_MS: a message that woke none of its recipients within this long is unwoken'),
  sentBefore: timestamp.describe("now (the server's clock) minus the SLA"),
  count: z
    .number()
    .int()
    .describe(
      'unwoken messages in all (the mailbox_unwoken_messages gauge); mail to identities no agent was registered as, or suppressed, expects no wake and is never counted',
    ),
  messages: z
    .array(
      z.object({
        messageId: z.string(),
        sender: z.string(),
        sentAt: timestamp,
        recipientCount: z.number().int(),
        escalatedAt: timestamp.nullable().describe('when the heartbeat escalated it (null: not yet)'),
      }),
    )
    .describe('the oldest first, at most limit'),
});

type Fits<Value, Schema extends z.ZodType> = Value extends z.input<Schema> ? true : never;
const fits = <T extends true>(): T => true as T;
void [
  fits<Fits<FlowEntry, typeof flowEntrySchema>>(),
  fits<Fits<RejectionRecord, typeof rejectionSchema>>(),
  fits<Fits<UnwokenAlarm, typeof unwokenAlarmSchema>>(),
  fits<Fits<{ identity: string; role: (typeof ROLES)[number]; limits: ServedLimits }, typeof whoamiSchema>>(),
];
