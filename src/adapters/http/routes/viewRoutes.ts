/** Counts, heartbeat counts and the audit log. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { pageSize } from '../../../commands/numberFields';
import { parseInput } from '../../../commands/validation';
import { actorOf } from '../auth';
import type { HttpContext } from '../httpContext';
import { noExtraInput, singleValuedQuery } from './routeInput';

export const auditQuerySchema = z.strictObject({
  after: z.string().regex(/^\d+$/, 'is a log position (digits), as returned in nextAfter').optional(),
  limit: pageSize(1000, 100),
});

export function viewRoutes(app: FastifyInstance, { mailbox }: HttpContext): void {
  const { queries } = mailbox;

  app.get('/v1/inbox/count', async (request) => {
    noExtraInput(request.query, 'GET /v1/inbox/count');
    return queries.unreadCount(actorOf(request));
  });

  app.get('/v1/heartbeat', async (request) => {
    noExtraInput(request.query, 'GET /v1/heartbeat');
    return queries.heartbeats(actorOf(request));
  });

  app.get('/v1/audit/events', async (request) => {
    const actor = actorOf(request);
    const { after, limit } = parseInput(
      auditQuerySchema,
      singleValuedQuery(request.query, [], 'GET /v1/audit/events'),
      'GET /v1/audit/events',
    );
    return queries.auditEvents(actor, after === undefined ? null : BigInt(after), limit);
  });
}
