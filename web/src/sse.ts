/**
 * Server-Sent Events over fetch: EventSource cannot send an Authorization
 * header, and the token must never travel in a URL. Reconnects after a drop,
 * resuming after the last position seen (the stream's ids are log positions).
 */
import { authHeaders, noAnswer, session } from './api';

export interface SseHandlers {
  onEvent(event: string, data: unknown, id: string | null): void;
  /** 'stopped': refused for a reason retrying cannot change (the filter, the token); the stream is not tried again. */
  onStatus(status: 'connecting' | 'live' | 'retrying' | 'stopped', detail?: string): void;
}

export function openEventStream(url: (after: string | null) => string, handlers: SseHandlers): () => void {
  const abort = new AbortController();
  let lastId: string | null = null;
  const run = async () => {
    while (!abort.signal.aborted) {
      handlers.onStatus('connecting');
      // This connection's own: ended by the page (abort) or by a silence longer than the server's heartbeats allow.
      const connection = new AbortController();
      const stopFollowing = () => connection.abort();
      abort.signal.addEventListener('abort', stopFollowing, { once: true });
      try {
        const token = session.token();
        const response = await fetch(url(lastId), {
          headers: authHeaders(token),
          signal: connection.signal,
          cache: 'no-store',
          credentials: 'omit',
        });
        if (!response.ok || !response.body) {
          const text = await response.text();
          let detail = `${response.status}`;
          try {
            const envelope = JSON.parse(text) as { code?: string; message?: string };
            detail = `${envelope.code}: ${envelope.message}`;
          } catch {
            /* not an envelope: the status says it */
          }
          if (response.status === 401) session.refused(token, detail);
          // Retrying cannot help a refused filter or token: the status says it stopped, not that it is retrying.
          if (response.status === 401 || response.status === 403 || response.status === 400) {
            handlers.onStatus('stopped', detail);
            return;
          }
          handlers.onStatus('retrying', detail);
          // The last position seen is past this log's head (the log was restored from an older backup): resuming there
          // is refused, so the next try starts live at the head, the refusal above saying what happened.
          if (response.status === 404 && lastId !== null) lastId = null;
        } else {
          handlers.onStatus('live');
          const silence = watchSilence(response, connection);
          try {
            await readEvents(
              response.body,
              (event, data, id) => {
                if (id !== null) lastId = id;
                // The stream's `ready` says where it began (null: an empty log, from its start). Until an entry comes,
                // that is where a reconnect resumes: resuming "live" at the new head skipped what was written while the
                // stream was down.
                else if (event === 'ready' && lastId === null) lastId = (data as { after?: string | null } | null)?.after ?? '0';
                handlers.onEvent(event, data, id);
              },
              silence.heard,
            );
          } finally {
            silence.stop();
          }
          handlers.onStatus('retrying', 'the stream ended');
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        const silent = connection.signal.reason instanceof SilentStream ? connection.signal.reason.message : null;
        handlers.onStatus('retrying', silent ?? (error instanceof TypeError ? noAnswer(error) : String(error)));
      }
      abort.signal.removeEventListener('abort', stopFollowing);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  void run();
  return () => abort.abort();
}

/** The stream went silent past the server's heartbeats: the reason its connection was ended. */
class SilentStream extends Error {}

/**
 * A stream with no byte (an event or a heartbeat comment) for three of the intervals the server names in
 * `x-mailbox-heartbeat-ms` is lost (the server stopped or frozen, the connection dropped on the way without a close):
 * its connection is ended and the flow reconnects. Without this the flow said "live" over such a stream for ever,
 * showing nothing, as the CLI's watch does not (streamSilence.ts). A server that names no interval gets no deadline.
 */
function watchSilence(response: Response, connection: AbortController): { heard(): void; stop(): void } {
  const header = response.headers.get('x-mailbox-heartbeat-ms') ?? '';
  const heartbeatMs = /^[1-9]\d{0,9}$/.test(header) ? Number(header) : null;
  if (heartbeatMs === null) return { heard: () => {}, stop: () => {} };
  const allowed = 3 * heartbeatMs;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const arm = () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(
      () =>
        connection.abort(
          new SilentStream(
            `the stream went silent: no event and no heartbeat for ${allowed} ms, and the server sends one every ` +
              `${heartbeatMs} ms (the server is stopped or overloaded, or the connection was dropped on the way)`,
          ),
        ),
      allowed,
    );
  };
  arm();
  return {
    heard: arm,
    stop: () => {
      if (timer !== null) clearTimeout(timer);
    },
  };
}

async function readEvents(
  body: ReadableStream<Uint8Array>,
  emit: (event: string, data: unknown, id: string | null) => void,
  heard: () => void,
) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    heard();
    buffer += decoder.decode(value, { stream: true });
    // One chunk holds many events at a high rate: walk it by index and cut the buffer once.
    let start = 0;
    let end: number;
    while ((end = buffer.indexOf('\n\n', start)) >= 0) {
      const block = buffer.slice(start, end);
      start = end + 2;
      let event = 'message';
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) emit(event, JSON.parse(data.join('\n')), id);
    }
    buffer = buffer.slice(start);
  }
}
