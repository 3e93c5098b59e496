/**
 * The API's routes as data, for the OpenAPI document. A test checks that this
 * table and the routes the server registers are the same set.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../errors';
import { markReadSchema, registerAgentSchema, sendMessageSchema } from '../../commands/schemas';
import { listQuerySchema } from '../../projections/listQuery';
import { auditQuerySchema } from './routes/viewRoutes';

export interface RouteSpec {
  method: 'get' | 'post' | 'delete';
  path: string; // OpenAPI form: /v1/messages/{id}
  summary: string;
  tag: 'agents' | 'messages' | 'views' | 'wake' | 'mcp' | 'operations';
  auth: 'agent' | 'admin' | 'any' | 'auditor or admin' | 'none' | 'sender, recipient or auditor';
  body?: z.ZodType;
  query?: z.ZodType;
  headers?: Array<{ name: string; description: string }>;
  success: { status: number; description: string; contentType?: string };
  errors: ErrorCode[];
}

const AUTH: ErrorCode[] = ['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED'];
const BODY: ErrorCode[] = ['UNKNOWN_FIELD', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE'];

export const ROUTE_SPECS: RouteSpec[] = [
  { method: 'post', path: '/v1/agents', summary: 'Register an agent or auditor; the token is shown once', tag: 'agents', auth: 'admin',
    body: registerAgentSchema, success: { status: 201, description: '{identity, role, token, registeredAt}' },
    errors: [...AUTH, ...BODY, 'AGENT_EXISTS'] },
  { method: 'get', path: '/v1/agents', summary: 'List registered agents', tag: 'agents', auth: 'any',
    success: { status: 200, description: '{agents: [{identity, role, registeredAt, retired, retiredAt}]}' }, errors: [...AUTH, 'UNKNOWN_FIELD'] },
  { method: 'delete', path: '/v1/agents/{identity}', summary: 'Retire an agent (its token stops working; later broadcasts skip it)',
    tag: 'agents', auth: 'admin', success: { status: 200, description: '{identity, retiredAt}' },
    errors: [...AUTH, 'VALIDATION_FAILED', 'AGENT_NOT_FOUND'] },
  { method: 'post', path: '/v1/agents/{identity}/token',
    summary: 'Issue a registered agent a new token (shown once); the old token is refused from then on', tag: 'agents',
    auth: 'admin', success: { status: 201, description: '{identity, token, rotatedAt}' },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED', 'AGENT_NOT_FOUND'] },
  { method: 'post', path: '/v1/messages', summary: 'Send a direct message (@identity) or a broadcast (AGENT:*)', tag: 'messages',
    auth: 'agent', body: sendMessageSchema,
    headers: [{ name: 'Idempotency-Key', description: 'a retried send with the same key returns the original result and writes nothing' }],
    success: { status: 201, description: '{messageId, status: "sent", sentAt, to, recipients, threadId, warnings?}' },
    errors: [...AUTH, ...BODY, 'INVALID_RECIPIENT_SHAPE', 'UNKNOWN_RECIPIENT', 'MESSAGE_NOT_FOUND', 'IDEMPOTENCY_KEY_REUSED'] },
  { method: 'get', path: '/v1/messages', summary: 'List the inbox (or outbox with box=outbox), newest first', tag: 'messages',
    auth: 'agent', query: listQuerySchema,
    success: { status: 200, description: '{messages: [{messageId, from, to, subject, priority, sentAt, readAt, threadId, inReplyTo, tags, task?}], nextCursor, unreadCount}' },
    errors: [...AUTH, 'UNKNOWN_FIELD', 'FILTER_NOT_APPLICABLE', 'VALIDATION_FAILED'] },
  { method: 'get', path: '/v1/messages/{id}', summary: 'One message with its body and your readAt', tag: 'messages',
    auth: 'sender, recipient or auditor', success: { status: 200, description: 'the message with body, readAt, archivedAt (receipts for its sender and auditors)' },
    errors: [...AUTH, 'VALIDATION_FAILED', 'MESSAGE_NOT_FOUND'] },
  { method: 'post', path: '/v1/messages/read', summary: 'Mark read: {messageId} or {messageIds} (array or JSON-encoded array)', tag: 'messages',
    auth: 'agent', body: markReadSchema, success: { status: 200, description: '{messageId, readAt, status} or {results: [per id]}' },
    errors: [...AUTH, ...BODY, 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND'] },
  { method: 'post', path: '/v1/messages/{id}/read', summary: 'Mark one message read (idempotent: the first readAt is kept)', tag: 'messages',
    auth: 'agent', success: { status: 200, description: '{messageId, readAt, status: "read"}' },
    errors: [...AUTH, 'VALIDATION_FAILED', 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND'] },
  { method: 'post', path: '/v1/messages/{id}/archive', summary: 'Archive a message for yourself (hidden from inbox and counts)', tag: 'messages',
    auth: 'agent', success: { status: 200, description: '{messageId, archivedAt, status: "archived"}' },
    errors: [...AUTH, 'VALIDATION_FAILED', 'NOT_A_RECIPIENT', 'MESSAGE_NOT_FOUND'] },
  { method: 'get', path: '/v1/inbox/count', summary: 'Unread count, total and by priority', tag: 'views', auth: 'agent',
    success: { status: 200, description: '{unread, byPriority: {low, normal, high}}' }, errors: AUTH },
  { method: 'get', path: '/v1/heartbeat', summary: 'Heartbeat counts of every agent', tag: 'views', auth: 'auditor or admin',
    success: { status: 200, description: '{agents: [{identity, unread, byPriority, oldestUnreadAt, lastActivityAt}]}' }, errors: AUTH },
  { method: 'get', path: '/v1/audit/events', summary: 'The ordered event log, paged by position', tag: 'views', auth: 'auditor or admin',
    query: auditQuerySchema, success: { status: 200, description: '{events: [...], nextAfter}' }, errors: [...AUTH, 'UNKNOWN_FIELD', 'VALIDATION_FAILED'] },
  { method: 'get', path: '/v1/wake', summary: 'Server-Sent Events: `sync` (unread count) first, then one `wake` per delivered message',
    tag: 'wake', auth: 'agent', success: { status: 200, description: 'event: sync / event: wake (id: log position), heartbeat comments every ~15 s; Last-Event-ID is not replayed: a reconnect starts with a fresh sync', contentType: 'text/event-stream' },
    errors: AUTH },
  { method: 'post', path: '/mcp', summary: 'MCP, streamable HTTP transport (stateless; JSON responses)', tag: 'mcp', auth: 'agent',
    success: { status: 200, description: 'JSON-RPC response' }, errors: AUTH },
  { method: 'get', path: '/mcp', summary: 'Not offered: the MCP endpoint is stateless (405)', tag: 'mcp', auth: 'agent',
    success: { status: 405, description: 'Method not allowed; use POST' }, errors: AUTH },
  { method: 'delete', path: '/mcp', summary: 'Not offered: the MCP endpoint is stateless (405)', tag: 'mcp', auth: 'agent',
    success: { status: 405, description: 'Method not allowed; use POST' }, errors: AUTH },
  { method: 'get', path: '/healthz', summary: 'Liveness', tag: 'operations', auth: 'none', success: { status: 200, description: '{status: "ok"}' }, errors: [] },
  { method: 'get', path: '/readyz', summary: 'Readiness: event store, projection store (Redis), projection lag', tag: 'operations', auth: 'none',
    success: { status: 200, description: '{status: "ready", eventStore, projectionStore, projections}' }, errors: ['UNAVAILABLE'] },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag: 'operations', auth: 'none',
    success: { status: 200, description: 'Prometheus text exposition', contentType: 'text/plain' }, errors: [] },
  { method: 'get', path: '/docs', summary: 'This OpenAPI document', tag: 'operations', auth: 'none', success: { status: 200, description: 'OpenAPI 3.1' }, errors: [] },
  { method: 'get', path: '/openapi.json', summary: 'This OpenAPI document', tag: 'operations', auth: 'none', success: { status: 200, description: 'OpenAPI 3.1' }, errors: [] },
];
