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
