/** An SSE client for GET /v1/wake that records every event and lets a test wait for one. */
import { readSse } from '../../src/adapters/http/client/sseReader';

export interface ReceivedEvent {
  event: string;
  data: any;
  id?: string;
}

export interface WakeSubscriber {
  status: number;
  events: ReceivedEvent[];
  wakes(): any[];
  /** Resolves with the first recorded event matching `predicate` (already received or future). */
  next(predicate: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  onEvent(listener: (event: ReceivedEvent) => void | Promise<void>): void;
  ended: Promise<void>;
  close(): void;
}

/** `path`: another SSE route of the API read the same way (GET /v1/audit/stream). */
export async function subscribe(url: string, token: string, path = '/v1/wake'): Promise<WakeSubscriber> {
  const abort = new AbortController();
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  if (response.status !== 200 || !response.body) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  const events: ReceivedEvent[] = [];
  const waiters: Array<{ predicate: (e: ReceivedEvent) => boolean; resolve: (e: ReceivedEvent) => void }> = [];
  const listeners: Array<(e: ReceivedEvent) => void | Promise<void>> = [];
  const ended = (async () => {
    try {
      for await (const raw of readSse(response.body!)) {
        const event = { event: raw.event, data: JSON.parse(raw.data), ...(raw.id ? { id: raw.id } : {}) };
        for (const listener of listeners) await listener(event); // before the event is visible to next()
        events.push(event);
        for (const waiter of waiters.splice(0)) {
          if (waiter.predicate(event)) waiter.resolve(event);
          else waiters.push(waiter);
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return {
    status: response.status,
    events,
    wakes: () => events.filter((e) => e.event === 'wake').map((e) => e.data),
    next(predicate, timeoutMs = 5000) {
      const found = events.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching wake event within ${timeoutMs} ms; got ${JSON.stringify(events)}`)),
          timeoutMs,
        );
        waiters.push({
          predicate,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      });
    },
    onEvent: (listener) => listeners.push(listener),
    ended,
    close: () => abort.abort(),
  };
}
