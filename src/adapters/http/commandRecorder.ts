/**
 * The one place HTTP commands are counted (mailbox_commands_total) and their
 * rejections recorded (GET /v1/audit/rejections), by hooks on the authenticated
 * routes rather than a call in each route, so a new command route cannot be left
 * out of either: a refusal (a refused token or rate limit included, with no agent)
 * is seen by onError, an answer by preSerialization. MCP tool calls are counted
 * through their command meter and their refusals recorded by toolRefusals. Reads
 * (GET) are not commands, and not counted; their refusals are recorded, as are
 * requests no route answers (404, 405), calls of a tool that does not exist and JSON-RPC messages POST /mcp refuses
 * (mcpRoutes.ts and mcpServer.ts tell toolRefusals of each).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CommandName } from '../../application/commandNames';
import type { Clock } from '../../application/runtime';
import type { Actor } from '../../commands/roles';
import type { Authenticator } from '../../application/authenticator';
import type { MailboxError } from '../../errors';
import { authenticateFrom, authorizationOf, bearerToken } from './auth';
import type { RefusedTokens } from './refusedTokens';
import { rejectionOf, type RejectionLog } from '../../application/rejectionLog';
import { toMailboxError, type HttpLimits } from './httpErrors';
import type { MailboxMetrics } from './metrics';

/** The command behind each write route; a route not listed is named by its method and path. */
const COMMAND_OF_ROUTE: Record<string, CommandName> = {
  'POST /v1/agents': 'register_agent',
  'DELETE /v1/agents/:identity': 'retire_agent',
  'POST /v1/agents/:identity/token': 'rotate_agent_token',
  'POST /v1/messages': 'send',
  'POST /v1/messages/read': 'mark_read',
  'POST /v1/messages/:id/read': 'mark_read',
  'POST /v1/messages/:id/archive': 'archive',
  'POST /v1/messages/:id/unarchive': 'unarchive',
  'POST /v1/tasks/:id/claim': 'claim_task',
  'POST /v1/tasks/:id/transition': 'update_task',
};

/**
 * The MCP tool behind each read route (GET or HEAD): a refused read is recorded under the tool's name, as MCP records
 * it, so that an auditor groups one refusal across transports (its route beside it, in `route`).
 */
const TOOL_OF_READ_ROUTE: Record<string, string> = {
  '/v1/messages': 'list_messages',
  '/v1/messages/:id': 'get_message',
  '/v1/messages/:id/delivery': 'get_delivery',
  '/v1/agents': 'list_agents',
  '/v1/inbox/count': 'unread_count',
  '/v1/tasks': 'list_tasks',
  '/v1/tasks/:id': 'get_task',
};

const isRead = (request: FastifyRequest) => request.method === 'GET' || request.method === 'HEAD';
const routeOf = (request: FastifyRequest) => `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;

/** Write routes in `scope` whose command (see COMMAND_OF_ROUTE) is not listed: what the tests hold at none. */
export const uncountedWriteRoutes = (routes: Array<{ method: string; url: string }>): string[] =>
  routes
    .filter((route) => route.method !== 'GET' && route.method !== 'HEAD' && route.url !== '/mcp')
    .map((route) => `${route.method} ${route.url}`)
    .filter((route) => !(route in COMMAND_OF_ROUTE));

export function recordHttpCommands(
  scope: FastifyInstance,
  log: RejectionLog,
  clock: Clock,
  metrics: MailboxMetrics,
  limits: HttpLimits,
): void {
  scope.addHook('onError', async (request, _reply, error) => {
    const route = routeOf(request);
    const read = isRead(request) ? TOOL_OF_READ_ROUTE[request.routeOptions.url ?? ''] : undefined;
    const command = COMMAND_OF_ROUTE[route] ?? read ?? route;
    const rejection = toMailboxError(error, limits, request.raw);
    // A refused read (a listing's bad filter) is recorded, not counted: mailbox_commands_total counts commands.
    if (!isRead(request)) metrics.rejected(command, 'http', rejection);
    log.record(
      rejectionOf(rejection, clock, {
        agent: request.actor?.identity ?? null,
        role: request.actor?.role ?? null,
        command,
        surface: 'http',
        route,
      }),
    );
  });
  // Every command route answers an object, which passes here once, before it is serialized (a refusal's
  // envelope passes here too, with its 4xx or 5xx status: counted by onError above).
  scope.addHook('preSerialization', async (request, reply, payload) => {
    const command = COMMAND_OF_ROUTE[routeOf(request)];
    if (command && reply.statusCode < 400) metrics.accepted(command, 'http', payload);
    return payload;
  });
}

/**
 * What an MCP request refused, recorded: a command's refusal (its arguments' too, refused before the command ran), a
 * read's, a call of a tool that does not exist (by the name called) and a JSON-RPC message refused (by its method).
 * `command` is the command's name (send for add_message, as /metrics names it), else the tool's, else the method's.
 */
export const toolRefusals =
  (log: RejectionLog, clock: Clock, actor: Actor) =>
  (command: string, error: unknown): void =>
    log.record(rejectionOf(error, clock, { agent: actor.identity, role: actor.role, command, surface: 'mcp' }));

/**
 * A request no route answers (404, 405), recorded by its method and path (the query left out): no route's hooks ran, so
 * the caller is named only when its bearer token is one the mailbox knows; the token itself is never recorded. Its
 * lookup counts against its address's refused tokens as any other (else made-up tokens sent to a path that is no
 * route were read without end); one over them is not read, and the request is recorded with no caller.
 */
export async function recordRouteNotFound(
  log: RejectionLog,
  clock: Clock,
  authenticator: Authenticator,
  refused: RefusedTokens,
  request: FastifyRequest,
  error: MailboxError,
): Promise<void> {
  const token = bearerToken(authorizationOf(request));
  const actor = await authenticateFrom(request, token, authenticator, refused).catch(() => null);
  const command = `${request.method} ${request.url.split('?')[0]}`;
  log.record(
    rejectionOf(error, clock, {
      agent: actor?.identity ?? null,
      role: actor?.role ?? null,
      command,
      surface: 'http',
      route: command,
    }),
  );
}
