/**
 * A write (POST, DELETE) takes its input from its path and JSON body; fastify parses the query string of every
 * request, and no write route read it, so `POST /v1/messages?to=@c` with the body `{"to": "@b", ...}` sent to @b
 * alone and `POST /v1/messages/{id}/archive?undo=1` archived, each 201/200 as if the query had been honored.
 * A write with a query parameter is refused instead (UNKNOWN_FIELD, nothing done), as the reads refuse one they
 * do not take.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MailboxError } from '../../errors';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `/v1/messages/:id/read` as the errors and the API document write it: `/v1/messages/{id}/read`. */
const documentedPath = (request: FastifyRequest) =>
  (request.routeOptions.url ?? request.url.split('?')[0]).replace(/:([A-Za-z]+)/g, '{$1}');

export function refuseQueryOnWrites(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request) => {
    if (READS.has(request.method)) return;
    const names = Object.keys((request.query ?? {}) as Record<string, unknown>);
    if (names.length === 0) return;
    const route = `${request.method} ${documentedPath(request)}`;
    throw new MailboxError(
      'UNKNOWN_FIELD',
      'Unknown field',
      `${route} takes no query parameters (${names.map((name) => `'${name}'`).join(', ')}): a write's input is its path ` +
        'and its JSON body, never the query string; give the field in the body, or drop it. Nothing was done.',
      { field: names[0], fields: names, allowed: [] },
    );
  });
}

/**
 * The other way round: a read (GET, HEAD) takes its input from its path and query string, and fastify never reads
 * a read's body, so `GET /v1/messages` with the body `{"status": "unread"}` (clients that put filters in a GET body)
 * listed every message, 200, as if the filter had been applied. A read with a body is refused instead
 * (VALIDATION_FAILED, nothing done); an empty one (`Content-Length: 0`) is no body.
 */
export function refuseBodyOnReads(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    const length = request.headers['content-length'];
    const chunked = request.headers['transfer-encoding'] !== undefined;
    if (!chunked && (length === undefined || Number(length) === 0)) return;
    const route = `${request.method} ${documentedPath(request)}`;
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${route} takes no request body (${chunked ? 'a chunked body' : `${length} bytes`} were sent): a read's input is its ` +
        'path and its query string, never a body; give filters as query parameters (GET /docs lists them), or drop the body. ' +
        'Nothing was done.',
      { field: 'body' },
    );
  });
}

/** The one write that replays a retried request by its Idempotency-Key (a send: commands/idempotency). */
const HONORS_IDEMPOTENCY_KEY = 'POST /v1/messages';

/** Why a retry of this write needs no key, or what to do instead: said with the refusal. */
function retryAdvice(route: string): string {
  if (route === 'POST /v1/agents')
    return (
      "a registration's token is shown once and kept only as a hash, so a retry cannot be answered with it: on a retry " +
      'answered 409 AGENT_EXISTS, give the agent a new token (POST /v1/agents/{identity}/token)'
    );
  if (route === 'POST /mcp') return "on MCP, give add_message's idempotencyKey argument";
  return 'retried without it, this request is refused or changes nothing a second time, or says what it did (its answer)';
}

/**
 * An Idempotency-Key on a write that does not replay by it was ignored: a client that relied on it to make a retry
 * safe (a registration, a token rotation, a task move) got the retry applied or refused as a new request. Refused
 * instead (VALIDATION_FAILED, nothing done), naming the one route that honors it. Reads ignore it: they change nothing.
 */
export function refuseIdempotencyKeyWhereNotHonored(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request) => {
    if (READS.has(request.method) || request.headers['idempotency-key'] === undefined) return;
    const route = `${request.method} ${documentedPath(request)}`;
    if (route === HONORS_IDEMPOTENCY_KEY) return;
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${route} does not take an Idempotency-Key header: only ${HONORS_IDEMPOTENCY_KEY} (a send) replays a retried ` +
        `request by its key; ${retryAdvice(route)}. Drop the header. Nothing was done.`,
      { field: 'Idempotency-Key' },
    );
  });
}
