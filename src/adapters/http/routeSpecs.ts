/**
 * The API's routes as data, for the OpenAPI document. A test checks that this
 * table and the routes the server registers are the same set.
 */
import type { ErrorCode } from '../../errors';
import type * as McpTypes from '@modelcontextprotocol/sdk/types.js';
import { deliveryQuerySchema, markReadSchema, registerAgentSchema, sendMessageSchema } from '../../commands/schemas';
import { deliveryLedgerSchema } from '../../application/deliveryResponseSchemas';
import { listQuerySchema } from '../../application/listQueryParser';
import { LIST_QUERY_DESCRIPTIONS } from '../../application/queryDescriptions';
import * as responses from '../../application/responseSchemas';
import { sendLimitDescriptions } from '../../application/servedLimits';
import { auditQuerySchema } from './routes/viewRoutes';
import { TASK_ROUTE_SPECS } from './taskRouteSpecs';
import type { RouteSpec } from './routeSpec';
import * as consoleResponses from '../../application/consoleResponseSchemas';
import { auditStreamQuerySchema } from './routes/auditStreamRoutes';
import { rejectionsQuerySchema, unwokenQuerySchema } from './routes/consoleApiRoutes';

export type { RouteSpec };

const AUTH: ErrorCode[] = ['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED'];
const BODY: ErrorCode[] = ['UNKNOWN_FIELD', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE'];

/** The MCP protocol versions the SDK speaks, as its own refusal lists them (loaded only when asked). */
const supportedProtocolVersions = (): string[] =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('@modelcontextprotocol/sdk/types.js') as typeof McpTypes).SUPPORTED_PROTOCOL_VERSIONS;

export const ROUTE_SPECS: RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/agents',
    operationId: 'registerAgent',
    summary: 'Register an agent or auditor; the token is shown once',
    tag: 'agents',
    auth: 'admin',
    body: registerAgentSchema,
    success: {
      status: 201,
      schema: responses.registrationSchema,
      description: '{identity, role, token, registeredAt, warnings?}',
    },
    errors: [...AUTH, ...BODY, 'AGENT_EXISTS', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'get',
    path: '/v1/agents',
    operationId: 'listAgents',
    summary: 'List registered agents',
    tag: 'agents',
    auth: 'any',
    success: {
      status: 200,
      schema: responses.agentListSchema,
      description: '{agents: [{identity, role, registeredAt, retired, retiredAt}]}',
    },
    errors: [...AUTH, 'UNKNOWN_FIELD'],
  },
  {
    method: 'delete',
    path: '/v1/agents/{identity}',
    operationId: 'retireAgent',
    summary:
      'Retire an agent (its token stops working; later broadcasts skip it; the AGENT:* and list tasks it holds unfinished go back to their audiences; the tasks it sent that have not ended are canceled)',
    tag: 'agents',
    auth: 'admin',
    success: {
      status: 200,
      schema: responses.retirementSchema,
      description: '{identity, retiredAt, changed, releasedTasks, canceledTasks, warnings?}',
    },
    errors: [...AUTH, 'VALIDATION_FAILED', 'AGENT_NOT_FOUND', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'post',
    path: '/v1/agents/{identity}/token',
    operationId: 'rotateAgentToken',
    summary: 'Issue a registered agent a new token (shown once); the old token is refused from then on',
    tag: 'agents',
    auth: 'admin',
    success: { status: 201, schema: responses.tokenRotationSchema, description: '{identity, token, rotatedAt, warnings?}' },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'AGENT_NOT_FOUND', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'post',
    path: '/v1/messages',
    operationId: 'sendMessage',
    summary: 'Send a direct message (@identity) or a broadcast (AGENT:*)',
    tag: 'messages',
    auth: 'agent',
    body: sendMessageSchema,
    bodyLimitDescriptions: sendLimitDescriptions,
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          "a retried send with the same key returns the original result and writes nothing; read as UTF-8 (bytes that are not are refused), the same key as the body's idempotencyKey",
      },
    ],
    success: {
      status: 201,
      schema: responses.sendResultSchema,
      description:
        '{messageId, status: "sent", sentAt, to, recipients, threadId, expectsReplyBy?, warnings?} (expectsReplyBy: the due time kept; warnings: near-miss recipients, VIEWS_LAGGING; ' +
        'TASK_ANSWERED, a task of yours this message answered; TASK_AWAITS_INPUT, one still waiting on you that it did not; TASK_UNCHANGED, one you hold that it did not move); ' +
        'a replay (the same Idempotency-Key and content as a send already made) is this same 201 and body, the original result, ' +
        'nothing written, and carries Idempotent-Replayed: true',
      headers: [
        {
          name: 'Idempotent-Replayed',
          description:
            'true: this answer is a replay of the send that already used this Idempotency-Key (nothing new was written); ' +
            'absent on the send that wrote the message (as Stripe does)',
          values: ['true'],
        },
      ],
    },
    errors: [
      ...AUTH,
      ...BODY,
      'INVALID_RECIPIENT_SHAPE',
      'UNKNOWN_RECIPIENT',
      'MESSAGE_NOT_FOUND',
      'IDEMPOTENCY_KEY_REUSED',
      'CONCURRENCY_CONFLICT',
    ],
  },
  {
    method: 'get',
    path: '/v1/messages',
    operationId: 'listMessages',
    summary: 'List the inbox (or outbox with box=outbox), newest first',
    tag: 'messages',
    auth: 'agent',
    query: listQuerySchema,
    // priority only here: the list_messages tool's schema (its enum) stays within the tools/list budget.
    queryDescriptions: { ...LIST_QUERY_DESCRIPTIONS, priority: 'only messages of this priority (low, normal or high)' },
    success: {
      status: 200,
      schema: responses.messagePageSchema,
      description:
        '{messages: [{messageId, from, to, subject, priority, sentAt, readAt, threadId, inReplyTo, tags, task?}], nextCursor, unreadCount}',
    },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'FILTER_NOT_APPLICABLE', 'VALIDATION_FAILED', 'CURSOR_MISMATCH'],
  },
  {
    method: 'get',
    path: '/v1/messages/{id}',
    operationId: 'getMessage',
    summary: 'One message with its body and your readAt',
    tag: 'messages',
    auth: 'sender, recipient, auditor or admin',
    success: {
      status: 200,
      schema: responses.messageDetailSchema,
      description: 'the message with body, readAt, archivedAt (receipts for its sender, auditors and the admin)',
    },
    errors: [...AUTH, 'VALIDATION_FAILED', 'MESSAGE_NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/v1/messages/{id}/delivery',
    operationId: 'getDelivery',
    summary:
      'The delivery ledger: per recipient accepted, inView, woken, seen, read, replied, with counts per stage; ' +
      'paged by recipient (after, limit). An agent that did not send the message gets 403 whether or not it exists',
    tag: 'messages',
    auth: 'sender, auditor or admin',
    query: deliveryQuerySchema.omit({ messageId: true }),
    success: {
      status: 200,
      schema: deliveryLedgerSchema,
      description:
        '{messageId, sender, accepted, summary: {recipients, inView, woken, seen, read, replied}, recipients, nextAfter}',
    },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'MESSAGE_NOT_FOUND'],
  },
  {
    method: 'post',
    path: '/v1/messages/read',
    operationId: 'markRead',
    summary:
      'Mark read: {messageId}, {messageIds} (array or JSON-encoded array), or {all: true} with optional threadId, from, ' +
      'priority, before, includeUnseen (read-all: only messages already returned to you, unless includeUnseen)',
    tag: 'messages',
    auth: 'agent',
    body: markReadSchema,
    success: {
      status: 200,
      schema: responses.markReadResultSchema,
      description:
        '{messageId, readAt, status, warnings?}, {results: [per distinct id], warnings? (DUPLICATE_MESSAGE_ID for a repeated id)}, or for all: ' +
        '{all: true, status, changed, messageIds, withheldUnseenCount, readAt, warnings?}',
    },
    errors: [...AUTH, ...BODY, 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'post',
    path: '/v1/messages/{id}/read',
    operationId: 'markOneRead',
    summary: 'Mark one message read (idempotent: the first readAt is kept)',
    tag: 'messages',
    auth: 'agent',
    success: { status: 200, schema: responses.readResultSchema, description: '{messageId, readAt, status: "read", warnings?}' },
    errors: [...AUTH, 'VALIDATION_FAILED', 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'post',
    path: '/v1/messages/{id}/archive',
    operationId: 'archiveMessage',
    summary: 'Archive a message for yourself (hidden from inbox and counts)',
    tag: 'messages',
    auth: 'agent',
    success: {
      status: 200,
      schema: responses.archiveResultSchema,
      description: '{messageId, archivedAt, status: "archived", changed, warnings?} (changed false: it was archived already)',
    },
    errors: [...AUTH, 'VALIDATION_FAILED', 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'post',
    path: '/v1/messages/{id}/unarchive',
    operationId: 'unarchiveMessage',
    summary: 'Bring an archived message back to your inbox (unread again if you never read it; counts move with it)',
    tag: 'messages',
    auth: 'agent',
    success: {
      status: 200,
      schema: responses.unarchiveResultSchema,
      description: '{messageId, status: "inbox", readAt, changed, warnings?} (changed false: it was not archived)',
    },
    errors: [...AUTH, 'VALIDATION_FAILED', 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND', 'CONCURRENCY_CONFLICT'],
  },
  {
    method: 'get',
    path: '/v1/inbox/count',
    operationId: 'unreadCount',
    summary: 'Unread count, total and by priority',
    tag: 'views',
    auth: 'agent',
    success: {
      status: 200,
      schema: responses.inboxCountSchema,
      description: "unreadCount and byPriority; unread: the same number under its first name (DESIGN's contract), kept",
    },
    errors: AUTH,
  },
  {
    method: 'get',
    path: '/v1/heartbeat',
    operationId: 'heartbeatCounts',
    summary: 'Heartbeat counts of every agent',
    tag: 'views',
    auth: 'auditor or admin',
    success: {
      status: 200,
      schema: responses.heartbeatListSchema,
      description:
        'per agent: unreadCount (unread: the same number under its first name, kept), byPriority, oldestUnreadAt, lastActivityAt',
    },
    errors: AUTH,
  },
  {
    method: 'get',
    path: '/v1/audit/events',
    operationId: 'auditEvents',
    summary: 'The ordered event log, paged by position',
    tag: 'views',
    auth: 'auditor or admin',
    query: auditQuerySchema,
    queryDescriptions: {
      after:
        'nextAfter from the previous page; omit to start at the beginning. A position past the log head is refused (404 NOT_FOUND): paging on from it would skip the events up to it',
      limit: 'page size; default 100',
    },
    success: {
      status: 200,
      schema: responses.auditPageSchema,
      description:
        "{events: [...], nextAfter}; a stored token hash (AgentRegistered, AgentTokenRotated: data.tokenHash) reads '<the token hash, not shown>'",
    },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/v1/audit/stream',
    operationId: 'auditStream',
    summary: "Server-Sent Events: the ordered log as it grows (the console's live flow), filtered, resumable",
    tag: 'views',
    auth: 'auditor or admin',
    query: auditStreamQuerySchema,
    queryDescriptions: {
      after:
        "start strictly after this log position (an entry's position); omit to start live at the head. A reconnecting reader may send Last-Event-ID instead. A position past the log head is refused (404 NOT_FOUND): the events up to it would be skipped",
      agent:
        'only events that concern this @identity (as actor, sender, recipient or registered agent); one never registered is refused (400)',
      threadId: 'only events of this thread (reads and archives included)',
      type: 'only these event types, comma-separated (e.g. MessageSent,ReceiptRead)',
    },
    headers: [{ name: 'Last-Event-ID', description: 'resume after this position (the id of the last entry received)' }],
    success: {
      status: 200,
      example:
        'event: ready\ndata: {"after":"41"}\n\nevent: entry\nid: 42\ndata: {"position":"42","type":"MessageSent","actor":"@a",...}\n\n',
      description:
        'event: ready {after} first, then event: entry (id: log position) per event that passes the filter; heartbeat comments; ' +
        "a last event: revoked {identity, reason} when the reader's token stops working (its token rotated, or it was retired)",
      contentType: 'text/event-stream',
    },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/v1/audit/rejections',
    operationId: 'recentRejections',
    summary: 'Recent rejected commands (they write no events), newest first',
    tag: 'views',
    auth: 'auditor or admin',
    query: rejectionsQuerySchema,
    queryDescriptions: { limit: 'how many; default 100' },
    success: { status: 200, schema: consoleResponses.rejectionPageSchema, description: '{rejections: [...], capacity, backend}' },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED'],
  },
  {
    method: 'get',
    path: '/v1/audit/agents',
    operationId: 'agentsTable',
    summary: "Every agent with its counts, activity and this node's open wake streams (the console's agents table)",
    tag: 'views',
    auth: 'auditor or admin',
    success: { status: 200, schema: consoleResponses.consoleAgentsSchema, description: '{agents: [...]}' },
    errors: [...AUTH, 'UNKNOWN_FIELD'],
  },
  {
    method: 'get',
    path: '/v1/audit/unwoken',
    operationId: 'unwokenAlarm',
    summary:
      'The unwoken alarm: messages that expected a wake (some recipient was a registered agent, not retired, when sent; wakes not suppressed) and woke none of their recipients within MAILBOX_WAKE_SLA_MS (and that not all of the recipients due a wake saw or read already), oldest first',
    tag: 'views',
    auth: 'auditor or admin',
    query: unwokenQuerySchema,
    queryDescriptions: { limit: 'how many of the oldest to list (0: only the count); default 10' },
    success: {
      status: 200,
      schema: consoleResponses.unwokenAlarmSchema,
      description: '{slaMs, sentBefore, count, messages: [...]}',
    },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED'],
  },
  {
    method: 'get',
    path: '/v1/audit/series',
    operationId: 'consoleSeries',
    summary: 'The last hour, sampled every 10 s: sends/s (this node), projection lag, unread mail',
    tag: 'views',
    auth: 'auditor or admin',
    success: { status: 200, schema: consoleResponses.seriesSchema, description: '{everySeconds, samples: [...]}' },
    errors: [...AUTH, 'UNKNOWN_FIELD'],
  },
  {
    method: 'get',
    path: '/v1/audit/messages/{id}',
    operationId: 'messageStory',
    summary: "One message's story from its own stream: audience, each recipient's delivery, read and archive",
    tag: 'views',
    auth: 'auditor or admin',
    success: {
      status: 200,
      schema: consoleResponses.messageStorySchema,
      description:
        'as `mailbox audit message <id> --json` gives it, without its delivery ledger (GET /v1/messages/{id}/delivery)',
    },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'MESSAGE_NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/v1/whoami',
    operationId: 'whoami',
    summary: "The token's holder (identity and role) and this server's limits (the largest message body it takes)",
    tag: 'agents',
    auth: 'any',
    success: { status: 200, schema: consoleResponses.whoamiSchema, description: '{identity, role, limits: {maxBodyBytes}}' },
    errors: [...AUTH, 'UNKNOWN_FIELD'],
  },
  {
    method: 'get',
    path: '/v1/wake',
    operationId: 'wakeStream',
    summary: 'Server-Sent Events: `sync` (unread count) first, then one `wake` per delivered message',
    tag: 'wake',
    auth: 'agent',
    success: {
      status: 200,
      example: 'event: sync\ndata: {"unreadCount":1,"byPriority":{"low":0,"normal":1,"high":0}}\n\n',
      description:
        'event: sync / event: wake (id: log position), heartbeat comments every ~15 s (MAILBOX_SSE_HEARTBEAT_MS, named in the X-Mailbox-Heartbeat-Ms response header: a client that hears nothing for a few of them can take the stream as lost); Last-Event-ID is not replayed: a reconnect starts with a fresh sync, and an open stream gets one too when the server may have missed its wakes (its Redis wake subscription dropped and came back)',
      contentType: 'text/event-stream',
    },
    errors: AUTH,
  },
  {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp',
    summary: 'MCP, streamable HTTP transport (stateless; JSON responses)',
    tag: 'mcp',
    auth: 'agent',
    success: {
      status: 200,
      schema: responses.jsonRpcResponseSchema,
      description:
        'JSON-RPC response. GET and DELETE /mcp answer 405: the endpoint is stateless (no sessions, no server-initiated stream). ' +
        'Each message of a JSON-RPC batch counts as one request against the rate limit; a batch larger than its burst is 400.',
    },
    errors: [...AUTH, 'VALIDATION_FAILED'],
    // The MCP transport's own refusals (the SDK's streamable HTTP server), before any tool runs: JSON-RPC errors, as
    // MCP clients read them. A request without an id or JSON too deep are the envelope (mcpRoutes.ts).
    protocolAnswers: [
      {
        status: 202,
        body: 'none',
        description: 'Only notifications (notifications/*) or JSON-RPC responses were sent: accepted, no body',
      },
      {
        status: 400,
        body: 'jsonRpcError',
        description:
          'A body that is not JSON, not UTF-8 or names a key twice (-32700 Parse error, id null; data is the envelope ' +
          'saying where), a JSON body that is no JSON-RPC 2.0 message, or a batch with one (the message names what is ' +
          'wrong and the valid form; data is the envelope), an empty batch [], a batch of over 100 messages or with two ' +
          'initialize requests (-32600 Invalid Request), or an MCP-Protocol-Version header this server does not speak ' +
          '(-32000). A request without an id (a tools/call would be dropped as a notification) or JSON nested too deep ' +
          'is the envelope, VALIDATION_FAILED',
        examples: {
          notJsonRpc: {
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32600,
              message: 'Invalid Request: the message has no "jsonrpc": it must be "2.0". Nothing was done.',
              data: {
                error: 'Validation failed',
                code: 'VALIDATION_FAILED',
                message: 'Invalid Request: the message has no "jsonrpc": it must be "2.0". Nothing was done.',
                field: 'jsonrpc',
              },
            },
          },
          emptyBatch: {
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32600,
              message:
                'Invalid Request: an empty batch ([]) holds no message, so nothing was done. Send one JSON-RPC request, e.g. ' +
                '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, or an array of one or more.',
              data: {
                error: 'Validation failed',
                code: 'VALIDATION_FAILED',
                message:
                  'Invalid Request: an empty batch ([]) holds no message, so nothing was done. Send one JSON-RPC request, ' +
                  'e.g. {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, or an array of one or more.',
                field: 'body',
              },
            },
          },
          twoInitializeRequests: {
            jsonrpc: '2.0',
            error: { code: -32600, message: 'Invalid Request: Only one initialization request is allowed' },
            id: null,
          },
          // Read when the document is generated: a server loads the MCP SDK at its first POST /mcp, not at start.
          get unsupportedProtocolVersion() {
            return {
              jsonrpc: '2.0',
              error: {
                code: -32000,
                message: `Bad Request: Unsupported protocol version: 1999-01-01 (supported versions: ${supportedProtocolVersions().join(', ')})`,
              },
              id: null,
            };
          },
        },
      },
      {
        status: 406,
        body: 'jsonRpcError',
        description: 'The Accept header does not list both application/json and text/event-stream',
        examples: {
          notAcceptable: {
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' },
            id: null,
          },
        },
      },
      {
        status: 415,
        body: 'jsonRpcError',
        description: 'The Content-Type is not application/json',
        examples: {
          unsupportedMediaType: {
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' },
            id: null,
          },
        },
      },
    ],
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    summary: 'Liveness',
    tag: 'operations',
    auth: 'none',
    success: { status: 200, schema: responses.healthSchema, description: 'the process is up' },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    summary: 'Readiness: event store, projection store (Redis), projection lag',
    tag: 'operations',
    auth: 'none',
    success: {
      status: 200,
      schema: responses.readinessSchema,
      description:
        '{status: "ready" | "degraded" (a command\'s views lag behind its write), eventStore, projectionStore, projections}',
    },
    errors: ['UNAVAILABLE'],
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    tag: 'operations',
    auth: 'none',
    success: {
      status: 200,
      description: 'Prometheus text exposition',
      contentType: 'text/plain',
      example: 'mailbox_projection_lag_events 0',
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'docsPage',
    summary: 'This API reference as a web page (Swagger UI, served by this server)',
    tag: 'operations',
    auth: 'none',
    success: { status: 200, description: 'an HTML page', contentType: 'text/html' },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    summary: 'This OpenAPI document',
    tag: 'operations',
    auth: 'none',
    success: { status: 200, schema: responses.openApiDocumentSchema, description: 'OpenAPI 3.1' },
    errors: [],
  },
  ...TASK_ROUTE_SPECS,
];

/** Served but not API operations: listed here so that the documentation check accounts for every route. */
export const UNDOCUMENTED_ROUTES: Array<{ method: string; url: string; why: string }> = [
  { method: 'GET', url: '/mcp', why: '405: the MCP endpoint is stateless (said in POST /mcp)' },
  { method: 'DELETE', url: '/mcp', why: '405: the MCP endpoint is stateless (said in POST /mcp)' },
  { method: 'GET', url: '/docs/assets/:file', why: "the API page's scripts and styles" },
  { method: 'GET', url: '/console', why: 'the operator console (a web page; README "Console")' },
  { method: 'GET', url: '/console/', why: 'the operator console (a web page; README "Console")' },
  { method: 'GET', url: '/console/assets/:file', why: "the console's scripts and styles" },
];
