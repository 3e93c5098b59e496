/** Unauthenticated operations endpoints: liveness, readiness, Prometheus metrics, the OpenAPI document and its page. */
import type { FastifyInstance } from 'fastify';
import { MailboxError } from '../../../errors';
import type { HttpContext } from '../httpContext';
import { sendEnvelope } from '../httpErrors';
import { buildOpenApiDocument } from '../openapi';
import { checkReadiness } from '../readiness';
import { docsRoutes } from './docsRoutes';

export function opsRoutes(app: FastifyInstance, { mailbox, metrics }: HttpContext): void {
  const document = buildOpenApiDocument();

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const readiness = await checkReadiness(mailbox);
    if (readiness.ready) return { status: readiness.status, ...readiness.checks };
    return sendEnvelope(
      reply,
      new MailboxError('UNAVAILABLE', 'Not ready', 'This node is not ready to serve: see checks for the failing dependency.', {
        checks: readiness.checks,
      }),
    );
  });

  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).send(body);
  });

  app.get('/openapi.json', async () => document);
  docsRoutes(app);
}
