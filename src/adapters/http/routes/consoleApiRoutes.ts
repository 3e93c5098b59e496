/**
 * What the console reads besides the log (auditor or admin, like the log):
 * recent rejections, the agents table in one request, and the last hour's samples.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { pageSize } from '../../../commands/numberFields';
import { requireRole } from '../../../application/authorization';
import { servedLimitsOf } from '../../../application/servedLimits';
import type { UnwokenAlarm } from '../../../application/consoleResponseSchemas';
import { parseInput } from '../../../commands/validation';
import { actorOf } from '../auth';
import type { ConsoleSeries } from '../consoleSeries';
import type { HttpContext } from '../httpContext';
import { noExtraInput, singleValuedQuery } from './routeInput';

export const rejectionsQuerySchema = z.strictObject({
  limit: pageSize(1000, 100),
});

export const unwokenQuerySchema = z.strictObject({
  limit: pageSize(1000, 10, 0),
});

export function consoleApiRoutes(app: FastifyInstance, { mailbox, wakeStreams }: HttpContext, series: ConsoleSeries): void {
  // Who the token belongs to: the console's sign-in (any role may ask; the answer is the caller's own). With this
  // server's limits: `mailbox mcp` states them in its tools/list, as POST /mcp does.
  app.get('/v1/whoami', async (request) => {
    noExtraInput(request.query, 'GET /v1/whoami');
    const { identity, role } = actorOf(request);
    return { identity, role, limits: servedLimitsOf(mailbox.config) };
  });

  app.get('/v1/audit/rejections', async (request) => {
    requireRole(actorOf(request), ['auditor', 'admin'], 'Reading recent rejections');
    const what = 'GET /v1/audit/rejections';
    const { limit } = parseInput(rejectionsQuerySchema, singleValuedQuery(request.query, [], what), what);
    const { rejections } = mailbox;
    return { rejections: await rejections.recent(limit), capacity: rejections.capacity, backend: rejections.backend };
  });

  app.get('/v1/audit/agents', async (request) => {
    requireRole(actorOf(request), ['auditor', 'admin'], 'Reading the agents table');
    noExtraInput(request.query, 'GET /v1/audit/agents');
    const [agents, heartbeats, nudges] = await Promise.all([
      mailbox.projections.listAgents(),
      mailbox.projections.allHeartbeats(),
      mailbox.projections.lastNudges(),
    ]);
    const counts = new Map(heartbeats.map((h) => [h.identity, h]));
    const open = wakeStreams.openByIdentity();
    return {
      agents: agents.map((agent) => {
        const h = counts.get(agent.identity);
        return {
          ...agent,
          unreadCount: h?.unread ?? 0,
          oldestUnreadAt: h?.oldestUnreadAt ?? null,
          lastActivityAt: h?.lastActivityAt ?? null,
          wakeStreams: open.get(agent.identity) ?? 0,
          lastNudge: nudges.get(agent.identity) ?? null,
        };
      }),
    };
  });

  // The unwoken alarm as /metrics counts it (same SLA, same clock), with the oldest few so a person can open their story.
  app.get('/v1/audit/unwoken', async (request): Promise<UnwokenAlarm> => {
    requireRole(actorOf(request), ['auditor', 'admin'], 'Reading the unwoken alarm');
    const what = 'GET /v1/audit/unwoken';
    const { limit } = parseInput(unwokenQuerySchema, singleValuedQuery(request.query, [], what), what);
    const slaMs = mailbox.config.wakeSlaMs;
    const now = mailbox.clock?.now().getTime() ?? Date.now();
    const sentBefore = new Date(now - slaMs).toISOString();
    const page = await mailbox.projections.unwoken({ sentBefore, limit, pendingOnly: false });
    return { slaMs, sentBefore, ...page };
  });

  app.get('/v1/audit/series', async (request) => {
    requireRole(actorOf(request), ['auditor', 'admin'], 'Reading the console charts');
    noExtraInput(request.query, 'GET /v1/audit/series');
    return series.all();
  });
}
