/**
 * GET /v1/wake: Server-Sent Events. `sync` (the unread count) first, then one
 * `wake` per message delivered to the caller, each sent after the views hold it.
 */
import type { FastifyInstance } from 'fastify';
import type { WakeStreamUpdate } from '../../../application/mailboxQueries';
import { hashToken } from '../../../application/tokenHash';
import { actorOf, bearerToken } from '../auth';
import type { HttpContext } from '../httpContext';
import { MAX_BUFFERED_BYTES, SseStream } from '../sseStream';
import { noExtraInput } from './routeInput';

export function wakeRoutes(app: FastifyInstance, { mailbox, config, wakeStreams, wakeLatency }: HttpContext): void {
  app.get('/v1/wake', { config: { streaming: true } }, async (request, reply) => {
    noExtraInput(request.query, 'GET /v1/wake');
    const actor = actorOf(request);
    // Reserved here before any other I/O (concurrent opens count against the cap at once), then across the nodes.
    // The token's hash goes with it: once that token stops working (retired or rotated, on any node), the stream ends.
    const token = bearerToken(request.headers.authorization);
    const slot = await wakeStreams.reserveAcrossNodes(actor.identity, token === undefined ? null : hashToken(token));
    // The stream starts with the first event, so a refusal (wrong role) is still an ordinary error response.
    let stream: SseStream | null = null;
    const emit = (event: WakeStreamUpdate) => {
      if (!stream) {
        reply.hijack();
        stream = new SseStream(reply.raw, config.sseHeartbeatMs, (unreadBytes) =>
          request.log.warn(
            { identity: actor.identity, unreadBytes },
            `wake stream of ${actor.identity} cut: its reader left ${unreadBytes} bytes unread (more than ` +
              `${MAX_BUFFERED_BYTES} are not kept); it gets a sync with the unread count when it reconnects`,
          ),
        );
        slot.attach(stream);
      }
      if (event.event === 'wake') {
        if (stream.send('wake', event.data, event.data.position)) {
          wakeLatency.wakeWritten(event.data.messageId);
          // Handed to an open stream: the recipient was woken (the delivery ledger), recorded off this path.
          if (event.data.type === 'wake/message')
            mailbox.wakeRecorder.observed(event.data.messageId, event.data.recipient, 'stream');
        }
      } else {
        stream.send(event.event, event.data);
      }
    };
    let unsubscribe: Awaited<ReturnType<typeof mailbox.queries.openWakeStream>>;
    try {
      unsubscribe = await mailbox.queries.openWakeStream(actor, emit);
    } catch (error) {
      slot.release(); // never opened: its place is free again
      throw error;
    }
    const opened = stream as SseStream | null;
    if (!opened) {
      slot.release();
      await unsubscribe();
      throw new Error('wake stream opened without its sync event');
    }
    opened.whenClosed(() => void unsubscribe());
    return reply;
  });
}
