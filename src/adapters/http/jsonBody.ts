/**
 * Request bodies are JSON. An empty body reads as "no body" (so POST .../read
 * needs none); anything unparsable is a VALIDATION_FAILED envelope that says
 * where the JSON broke, never fastify's own error shape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MailboxError } from '../../errors';

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MailboxError('VALIDATION_FAILED', 'Validation failed',
      `The request body is not valid JSON (${(error as Error).message}); send a JSON object with Content-Type: application/json.`,
      { field: 'body' });
  }
}

/**
 * JSON for application/json and, leniently, for any other content type: `curl -d`
 * sends JSON labelled as a form, and refusing an input we understand helps nobody.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    try {
      done(null, parseJsonBody(body.toString()));
    } catch (error) {
      done(error as Error);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parse);
  app.addContentTypeParser('*', { parseAs: 'string' }, parse);
}
