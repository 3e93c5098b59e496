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
      try {
        const token = session.token();
        const response = await fetch(url(lastId), {
          headers: authHeaders(token),
          signal: abort.signal,
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
          await readEvents(response.body, (event, data, id) => {
            if (id !== null) lastId = id;
            handlers.onEvent(event, data, id);
          });
          handlers.onStatus('retrying', 'the stream ended');
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        handlers.onStatus('retrying', error instanceof TypeError ? noAnswer(error) : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  void run();
  return () => abort.abort();
}

async function readEvents(body: ReadableStream<Uint8Array>, emit: (event: string, data: unknown, id: string | null) => void) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
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
