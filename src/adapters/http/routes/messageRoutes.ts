/**
 * Sending, listing, reading, marking read and archiving messages (DESIGN section 6). The commands are counted
 * and their rejections recorded by commandRecorder.ts, for every route at once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MailboxError } from '../../../errors';
import { strictUtf8Text } from '../../../support/utf8';
import { actorOf } from '../auth';
import type { HttpContext } from '../httpContext';
import { noExtraInput, requireBody, singleValuedQuery } from './routeInput';

type ById = { Params: { id: string } };

/** Said (with `true`) by a send's answer that replays the send which used its Idempotency-Key; absent otherwise. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * The Idempotency-Key header becomes idempotencyKey; the same key in the body is fine, two different keys are refused.
 * Node joins a repeated header into one value ("k1, k2"), which would be a third key that matches neither: each
 * occurrence is read from the raw headers instead; one key given twice is that key, two keys are refused.
 */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const given = headerValues(request.raw.rawHeaders, 'idempotency-key').map(utf8HeaderValue);
  const keys = [...new Set(given)];
  if (keys.length > 1) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `The Idempotency-Key header was given ${given.length} times with different keys (${keys.map((k) => `'${k}'`).join(', ')}); ` +
        'send one key per message.',
      { field: 'Idempotency-Key', values: keys },
    );
  }
  const key = keys[0];
  const inBody = (request.body as { idempotencyKey?: unknown } | undefined)?.idempotencyKey;
  if (key !== undefined && inBody !== undefined && inBody !== key) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      'The Idempotency-Key header and the idempotencyKey body field differ; send one of them.',
      { field: 'idempotencyKey' },
    );
  }
  return key;
}

/**
 * A header value as the UTF-8 text its bytes spell (node hands them over one character per byte, Latin-1): read as
 * Latin-1, 'déploiement' sent by curl was 'dÃ©ploiement', another key than the same key in the body's idempotencyKey.
 * Bytes that are not UTF-8 are refused, never guessed at.
 */
function utf8HeaderValue(value: string): string {
  return strictUtf8Text(
    Buffer.from(value, 'latin1'),
    (problem, offset) =>
      new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        `The Idempotency-Key header is not UTF-8: ${problem} (offset ${offset}). Send the key as UTF-8, or in the ` +
          "body's idempotencyKey field (JSON). Nothing was sent.",
        { field: 'Idempotency-Key', offset },
      ),
  );
}

/** Every value of a header, in order (raw headers alternate names and values; names in any case). */
function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) values.push(rawHeaders[i + 1]);
  return values;
}

export function messageRoutes(app: FastifyInstance, { mailbox, wakeLatency }: HttpContext): void {
  const { commands, queries } = mailbox;

  app.post('/v1/messages', async (request, reply) => {
    const body = requireBody(request.body, 'POST /v1/messages', '{"to": "@b", "subject": "hi", "body": "hello"}');
    const sent = await commands.sendOutcome(actorOf(request), body, { idempotencyKey: idempotencyKeyOf(request) });
    // A replay returns the original result (DESIGN: 201, the same body), and says so beside it, as Stripe does. It sent
    // nothing: its wakes (if any) are the original's, whose latency runs from the original's arrival, not this one's.
    if (sent.replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    else wakeLatency.sendAcknowledged(sent.result.messageId, request.startedAt);
    return reply.status(201).send(sent.result);
  });

  // HEAD (fastify answers it with this handler, less the body) shows nothing: nothing becomes seen.
  app.get('/v1/messages', async (request) =>
    queries.listMessages(actorOf(request), singleValuedQuery(request.query, ['tags'], 'GET /v1/messages'), {
      shown: request.method !== 'HEAD',
    }),
  );

  app.get<ById>('/v1/messages/:id', async (request) => {
    noExtraInput(request.query, 'GET /v1/messages/{id}');
    // HEAD shows nothing: the message does not become seen.
    return queries.getMessage(actorOf(request), { messageId: request.params.id }, { shown: request.method !== 'HEAD' });
  });

  app.get<ById>('/v1/messages/:id/delivery', async (request) => {
    const query = (singleValuedQuery(request.query, [], 'GET /v1/messages/{id}/delivery') ?? {}) as Record<string, unknown>;
    if ('messageId' in query) {
      throw new MailboxError('UNKNOWN_FIELD', 'Unknown field', 'The message id is in the path; give only after and limit.', {
        field: 'messageId',
        allowed: ['after', 'limit'],
      });
    }
    return mailbox.deliveries.delivery(actorOf(request), { ...query, messageId: request.params.id });
  });

  app.post('/v1/messages/read', async (request) =>
    commands.markRead(actorOf(request), requireBody(request.body, 'POST /v1/messages/read', '{"messageIds": ["<id>", "<id>"]}')),
  );

  app.post<ById>('/v1/messages/:id/read', async (request) => {
    noExtraInput(request.body, 'POST /v1/messages/{id}/read');
    return commands.markRead(actorOf(request), { messageId: request.params.id });
  });

  app.post<ById>('/v1/messages/:id/archive', async (request) => {
    noExtraInput(request.body, 'POST /v1/messages/{id}/archive');
    return commands.archive(actorOf(request), { messageId: request.params.id });
  });

  app.post<ById>('/v1/messages/:id/unarchive', async (request) => {
    noExtraInput(request.body, 'POST /v1/messages/{id}/unarchive');
    return commands.unarchive(actorOf(request), { messageId: request.params.id });
  });
}
