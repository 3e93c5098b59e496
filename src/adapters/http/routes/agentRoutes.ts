/** POST /v1/agents (admin), GET /v1/agents (any caller), DELETE /v1/agents/{identity} (admin), POST /v1/agents/{identity}/token (admin). */
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../auth';
import type { HttpContext } from '../httpContext';
import { noExtraInput, requireBody } from './routeInput';

export function agentRoutes(app: FastifyInstance, { mailbox, metrics }: HttpContext): void {
  app.post('/v1/agents', async (request, reply) => {
    const registration = await metrics.command('register_agent', 'http', async () =>
      mailbox.commands.registerAgent(actorOf(request), requireBody(request.body, 'POST /v1/agents', '{"identity": "@neo-gpt"}')),
    );
    return reply.status(201).send(registration);
  });

  app.get('/v1/agents', async (request) => {
    noExtraInput(request.query, 'GET /v1/agents');
    return mailbox.queries.listAgents();
  });

  app.delete<{ Params: { identity: string } }>('/v1/agents/:identity', async (request) => {
    return metrics.command('retire_agent', 'http', async () => {
      noExtraInput(request.body, 'DELETE /v1/agents/{identity}');
      return mailbox.commands.retireAgent(actorOf(request), { identity: request.params.identity });
    });
  });

  app.post<{ Params: { identity: string } }>('/v1/agents/:identity/token', async (request, reply) => {
    const rotation = await metrics.command('rotate_agent_token', 'http', async () => {
      noExtraInput(request.body, 'POST /v1/agents/{identity}/token');
      return mailbox.commands.rotateAgentToken(actorOf(request), { identity: request.params.identity });
    });
    return reply.status(201).send(rotation);
  });
}
