/**
 * Records every rejected command in the rejection log (they write no event):
 * HTTP commands through an onError hook on the authenticated routes (a refused
 * token included, with no agent), MCP tool calls through their command meter.
 * Reads (GET) are not commands and are not recorded.
 */
import type { FastifyInstance } from 'fastify';
import type { CommandMeter } from '../../application/agentApi';
import type { Actor } from '../../commands/roles';
import { rejectionOf, type RejectionLog } from '../../application/rejectionLog';
import { toMailboxError, type HttpLimits } from './httpErrors';

/** The command behind each write route; a route not listed is named by its method and path. */
const COMMAND_OF_ROUTE: Record<string, string> = {
  'POST /v1/agents': 'register_agent',
  'DELETE /v1/agents/:identity': 'retire_agent',
  'POST /v1/agents/:identity/token': 'rotate_agent_token',
  'POST /v1/messages': 'send',
  'POST /v1/messages/read': 'mark_read',
  'POST /v1/messages/:id/read': 'mark_read',
  'POST /v1/messages/:id/archive': 'archive',
};

export function recordHttpRejections(scope: FastifyInstance, log: RejectionLog, limits: HttpLimits): void {
  scope.addHook('onError', async (request, _reply, error) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    const route = `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;
    log.record(
      rejectionOf(toMailboxError(error, limits), {
        at: new Date().toISOString(),
        agent: request.actor?.identity ?? null,
        role: request.actor?.role ?? null,
        command: COMMAND_OF_ROUTE[route] ?? route,
        surface: 'http',
      }),
    );
  });
}

/** The MCP tools' meter, also recording what it saw rejected. */
export function recordingMeter(meter: CommandMeter, log: RejectionLog, actor: Actor): CommandMeter {
  return {
    command: async (name, surface, run) => {
      try {
        return await meter.command(name, surface, run);
      } catch (error) {
        log.record(
          rejectionOf(error, { at: new Date().toISOString(), agent: actor.identity, role: actor.role, command: name, surface }),
        );
        throw error;
      }
    },
  };
}
