/**
 * POST /v1/agents (admin), GET /v1/agents (any caller), DELETE /v1/agents/{identity} (admin), POST /v1/agents/{identity}/token (admin).
 * The commands are counted and their rejections recorded by commandRecorder.ts, for every route at once.
 */
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../auth';
import type { HttpContext } from '../httpContext';
import { noExtraInput, requireBody } from './routeInput';

export function agentRoutes(app: FastifyInstance, { mailbox }: HttpContext): void {
  app.post('/v1/agents', async (request, reply) => {
    const registration = await mailbox.commands.registerAgent(
      actorOf(request),
      requireBody(request.body, 'POST /v1/agents', '{"identity": "@neo-gpt"}'),
    );
    return reply.status(201).send(registration);
  });

  app.get('/v1/agents', async (request) => {
    noExtraInput(request.query, 'GET /v1/agents');
    return mailbox.queries.listAgents();
  });

  app.delete<{ Params: { identity: string } }>('/v1/agents/:identity', async (request) => {
    noExtraInput(request.body, 'DELETE /v1/agents/{identity}');
    return mailbox.commands.retireAgent(actorOf(request), { identity: request.params.identity });
  });

  app.post<{ Params: { identity: string } }>('/v1/agents/:identity/token', async (request, reply) => {
    noExtraInput(request.body, 'POST /v1/agents/{identity}/token');
    const rotation = await mailbox.commands.rotateAgentToken(actorOf(request), { identity: request.params.identity });
    return reply.status(201).send(rotation);
  });
}
