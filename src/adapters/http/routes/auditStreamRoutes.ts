/**
 * GET /v1/audit/stream (auditor or admin): the ordered log as Server-Sent
 * Events of flow entries, from `after` (or the Last-Event-ID a reconnecting
 * reader sends) or, by default, live from the head; filterable by agent,
 * thread and event type. Each entry's SSE id is its log position. It ends with
 * a last `revoked` event when the reader's token stops working.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { identitySchema } from '../../../commands/schemas';
import { parseInput } from '../../../commands/validation';
import { MAILBOX_EVENT_TYPES } from '../../../events/types';
import { openAuditStream } from '../../../application/auditStream';
import { hashToken } from '../../../application/tokenHash';
import { actorOf, bearerToken } from '../auth';
import type { HttpContext } from '../httpContext';
import { MAX_BUFFERED_BYTES, SseStream } from '../sseStream';
import { TOKEN_RECHECK_MS } from '../wakeStreams';
import { singleValuedQuery } from './routeInput';

const position = z.string().regex(/^\d+$/, 'is a log position (digits), as in an entry\'s "position" or its SSE id');

/** The header a reconnecting reader sends, named in the error as the field ("'Last-Event-ID' is a log position ..."). */
const lastEventIdSchema = z.object({ 'Last-Event-ID': position });

export const auditStreamQuerySchema = z.strictObject({
  after: position.optional(),
  agent: identitySchema.optional(),
  threadId: z.string().min(1).max(200).optional(),
  type: z
    .string()
    .transform((value) => value.split(',').filter(Boolean))
    .pipe(z.array(z.enum(MAILBOX_EVENT_TYPES as [string, ...string[]])))
    .optional(),
});

export function auditStreamRoutes(app: FastifyInstance, { mailbox, config, auditStreams, openAuditStreams }: HttpContext): void {
  app.get('/v1/audit/stream', { config: { streaming: true } }, async (request, reply) => {
    const what = 'GET /v1/audit/stream';
    const query = parseInput(auditStreamQuerySchema, singleValuedQuery(request.query, [], what), what);
    await mailbox.queries.refuseUnregisteredFlowAgent(actorOf(request), what, query.agent);
    const lastEventId = request.headers['last-event-id'];
    const resumeFrom =
      query.after ??
      (typeof lastEventId === 'string'
        ? parseInput(lastEventIdSchema, { 'Last-Event-ID': lastEventId }, what)['Last-Event-ID']
        : undefined);
    // An auditor's streams are capped (each reads the log at every append), its place taken before any I/O so that
    // concurrent opens count at once; the admin's are not. Refusals below give the place back.
    const actor = actorOf(request);
    const slot = actor.role === 'admin' ? null : auditStreams.reserve(actor.identity);
    let stream: SseStream | null = null;
    // The reader's token stops working (its auditor retired, or its token rotated): the stream ends now, as a wake
    // stream does, with a last `revoked` event, rather than go on showing the log to a token that is refused.
    // Watched from before the stream opens, so that a revocation while it opens ends it too.
    const { identity } = actorOf(request);
    let revokedBecause: string | null = null;
    const endRevoked = () => {
      if (revokedBecause === null || stream === null || stream.isClosed) return;
      stream.send('revoked', { identity, reason: revokedBecause });
      stream.close();
    };
    const revoke = (reason: string) => {
      revokedBecause = reason;
      endRevoked();
    };
    const stopHearing = mailbox.authenticator.onRevoked((revoked, reason) => {
      if (revoked === identity) revoke(reason);
    });
    // Retired or rotated through another API node: this node hears of it only by reading the registry, so the token is
    // looked up again every second, as a request with it would be (a failed lookup keeps the stream until one tells).
    const token = bearerToken(request.headers.authorization);
    const tokenHash = token === undefined ? null : hashToken(token);
    const recheck =
      tokenHash === null
        ? null
        : setInterval(() => {
            mailbox.authenticator.revocationOf(tokenHash).then(
              (reason) => {
                if (reason !== null) revoke(reason);
              },
              () => undefined,
            );
          }, TOKEN_RECHECK_MS);
    recheck?.unref();
    const stopWatching = () => {
      stopHearing();
      if (recheck !== null) clearInterval(recheck);
    };
    let close: () => Promise<void>;
    try {
      close = await openAuditStream(
        mailbox.eventStore,
        actorOf(request),
        {
          after: resumeFrom === undefined ? null : BigInt(resumeFrom),
          afterFrom: query.after !== undefined ? 'after' : 'Last-Event-ID',
          filter: { agent: query.agent, threadId: query.threadId, types: query.type },
        },
        {
          ready: (after) => {
            // Refusals (role, input) happen before this point and are ordinary error responses.
            reply.hijack();
            stream = new SseStream(reply.raw, config.sseHeartbeatMs, (unreadBytes) =>
              request.log.warn(
                { identity: actorOf(request).identity, unreadBytes },
                `audit stream cut: its reader left ${unreadBytes} bytes unread (more than ${MAX_BUFFERED_BYTES} are not ` +
                  'kept); it resumes from its last event id when it reconnects',
              ),
            );
            slot?.attach(stream);
            openAuditStreams.add(stream); // ended at shutdown, the admin's too (no slot holds those)
            stream.send('ready', { after });
          },
          entry: (entry) => stream!.send('entry', entry, entry.position),
          failed: (error) => {
            request.log.warn(
              { err: error },
              'audit stream: the log subscription failed; the reader reconnects from its last position',
            );
            stream?.close('the log subscription failed; reconnect with Last-Event-ID');
          },
        },
      );
    } catch (error) {
      stopWatching();
      if (stream === null) slot?.release();
      throw error;
    }
    const opened = stream as SseStream | null;
    if (opened === null) {
      stopWatching();
      slot?.release();
    }
    opened?.whenClosed(() => {
      stopWatching();
      void close();
    });
    endRevoked();
    return reply;
  });
}
