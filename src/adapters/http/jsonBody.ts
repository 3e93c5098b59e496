/**
 * Request bodies are JSON. An empty body reads as "no body" (so POST .../read
 * needs none); anything unparsable is a VALIDATION_FAILED envelope that says
 * where the JSON broke, never fastify's own error shape (a leading byte order mark is skipped); so is an object that
 * names a key twice (jsonDuplicateKeys.ts), and a body whose bytes are not UTF-8 (utf8Body.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertJsonDepth } from '../../commands/jsonDepth';
import { assertNoDuplicateKeys } from '../../commands/jsonDuplicateKeys';
import { MailboxError } from '../../errors';
import { decodeUtf8Body } from './utf8Body';

export function parseJsonBody(body: string, checkDepth = true): unknown {
  // A byte order mark before the JSON (PowerShell's `Set-Content -Encoding UTF8`, Notepad) is no part of it: RFC 8259
  // lets a parser ignore it, and JSON.parse's "Unexpected token '' (U+FEFF between the quotes)" names a character nobody can see.
  const text = body.startsWith('\uFEFF') ? body.slice(1) : body;
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `The request body is not valid JSON (${(error as Error).message}); send a JSON object with Content-Type: application/json.`,
      { field: 'body' },
    );
  }
  if (checkDepth) assertJsonDepth(value); // before any validator recurses into it
  assertNoDuplicateKeys(text); // JSON.parse kept the last of a repeated key: refused, not guessed
  return value;
}

/** Routes whose body is an envelope around the input (JSON-RPC), which check the depth of the input themselves. */
const ENVELOPED_ROUTES = new Set(['/mcp']);

/** A request's body, read whole, as its route takes it; throws the envelope of what is wrong with it. */
export function parseRequestBody(request: FastifyRequest, body: string | Buffer): unknown {
  const text = typeof body === 'string' ? body : decodeUtf8Body(body, request.headers['content-type']);
  return parseJsonBody(text, !ENVELOPED_ROUTES.has(request.routeOptions.url ?? ''));
}

/**
 * JSON for application/json and, leniently, for any other content type: `curl -d`
 * sends JSON labelled as a form, and refusing an input we understand helps nobody.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    try {
      done(null, parseRequestBody(request, body));
    } catch (error) {
      done(error as Error);
    }
  };
  // As bytes: fastify's 'string' decodes leniently (an invalid byte becomes U+FFFD); decodeUtf8Body refuses it.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parse);
}
