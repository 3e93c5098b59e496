/** Unauthenticated operations endpoints: liveness, readiness, Prometheus metrics, the OpenAPI document and its page. */
import type { FastifyInstance } from 'fastify';
import { MailboxError, operatorNeeded } from '../../../errors';
import type { HttpContext } from '../httpContext';
import { sendEnvelope } from '../httpErrors';
import { buildOpenApiDocument } from '../openapi';
import { servedLimitsOf } from '../../../application/servedLimits';
import { checkReadiness } from '../readiness';
import { docsRoutes } from './docsRoutes';
import { noExtraInput } from './routeInput';

export function opsRoutes(app: FastifyInstance, { mailbox, metrics }: HttpContext): void {
  // Built at the first GET: its MCP example names the SDK's protocol versions, and the SDK loads at the first POST
  // /mcp, not at every start (test/e2e/cliStartup).
  let document: ReturnType<typeof buildOpenApiDocument> | null = null;

  // None takes a query parameter: `/readyz?verbose` or a scrape's `params` (`/metrics?name[]=...`) is refused, not
  // answered as if it had been read.
  app.get('/healthz', async (request) => {
    noExtraInput(request.query, 'GET /healthz');
    return { status: 'ok' };
  });

  app.get('/readyz', async (request, reply) => {
    noExtraInput(request.query, 'GET /readyz');
    const readiness = await checkReadiness(mailbox);
    if (readiness.ready) return { status: readiness.status, ...readiness.checks };
    const { eventStore, projections, projectionStore } = readiness.checks;
    // The event store refused what no retry mends (the user may not read $all): not ready until an operator acts.
    if (eventStore.operatorAction !== undefined)
      return sendEnvelope(
        reply,
        operatorNeeded(
          `This node is not ready to serve, and will not be until an operator acts: ${eventStore.error}`,
          eventStore.operatorAction,
          { checks: readiness.checks },
        ),
      );
    // Views of another log, or views the store knows damaged: not ready until an operator acts (no Retry-After).
    const damaged = projectionStore.error !== undefined && 'checkpoint' in projectionStore; // answered, yet marked damaged
    if (projections.views === 'foreign' || damaged)
      return sendEnvelope(
        reply,
        operatorNeeded(
          `This node is not ready to serve, and will not be until an operator acts: ${projections.viewsProblem ?? projectionStore.error}`,
          projections.views === 'foreign' ? 'mailbox projections rebuild --take-over' : 'see checks.projectionStore.error',
          { checks: readiness.checks },
        ),
      );
    return sendEnvelope(
      reply,
      new MailboxError('UNAVAILABLE', 'Not ready', 'This node is not ready to serve: see checks for the failing dependency.', {
        checks: readiness.checks,
      }),
    );
  });

  app.get('/metrics', async (request, reply) => {
    noExtraInput(request.query, 'GET /metrics');
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).send(body);
  });

  app.get('/openapi.json', async (request) => {
    noExtraInput(request.query, 'GET /openapi.json');
    return (document ??= buildOpenApiDocument(servedLimitsOf(mailbox.config)));
  });
  docsRoutes(app);
}
