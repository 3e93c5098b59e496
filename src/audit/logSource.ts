/**
 * Where an auditor reads the log from: the event store directly (config), or
 * the HTTP API's GET /v1/audit/events with an auditor or admin token. Both
 * yield events upcast to the current schema (the store port does it), exactly as the API serves them.
 */
import { MailboxHttpClient } from '../adapters/http/client/mailboxHttpClient';
import type { EventStore } from '../events/eventStore';
import type { StoredEvent } from '../events/types';

export interface LogSource {
  /** One page of the ordered log strictly after `after`. */
  readAll(after: bigint | null, limit: number): Promise<StoredEvent[]>;
  /** One stream's events, when the source can read a stream directly (else callers filter the log). */
  readStream: ((streamName: string) => Promise<StoredEvent[]>) | null;
  /** The log head for progress reporting; undefined when the source cannot tell. */
  head(): Promise<bigint | null | undefined>;
  /** Largest page the source serves. */
  readonly pageSize: number;
}

/** Pages of 1000 keep each page's objects young: larger pages measured slower (garbage collection). */
export function eventStoreSource(store: EventStore, pageSize = 1000): LogSource {
  return {
    pageSize,
    readAll: (after, limit) => store.readAll(after, limit),
    readStream: (streamName) => store.readStream(streamName),
    head: () => store.headPosition(),
  };
}

interface EventJson {
  position: string; streamName: string; revision: string; eventId: string;
  type: StoredEvent['type']; data: StoredEvent['data']; metadata: StoredEvent['metadata'];
}

const fromJson = (event: EventJson): StoredEvent => ({
  ...event, position: BigInt(event.position), revision: BigInt(event.revision),
} as StoredEvent);

/** The HTTP API serves at most 1000 events per page. */
export function httpLogSource(url: string, token: string): LogSource {
  const client = new MailboxHttpClient(url, token);
  return {
    pageSize: 1000,
    readAll: async (after, limit) => {
      const page = await client.request<{ events: EventJson[] }>('GET', '/v1/audit/events',
        { query: { after: after?.toString(), limit: Math.min(limit, 1000) } });
      return page.events.map(fromJson);
    },
    readStream: null,
    head: async () => undefined,
  };
}

/** Every event strictly after `after`, page by page (pages keep memory flat on long logs). */
export async function* pagesOf(source: LogSource, after: bigint | null): AsyncGenerator<StoredEvent[]> {
  let cursor = after;
  for (;;) {
    const page = await source.readAll(cursor, source.pageSize);
    if (page.length === 0) return;
    yield page;
    cursor = page[page.length - 1].position;
  }
}
