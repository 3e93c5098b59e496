/**
 * Where an auditor reads the log from (the ports of the audit tools): the event
 * store directly, or the HTTP API's GET /v1/audit/events with an auditor or
 * admin token; the composition root picks. Both yield events upcast to the
 * current schema (the store port does it), exactly as the API serves them.
 */
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

/**
 * One stored event as its store keeps it, for `replay --json`'s fast path: data
 * and metadata are JSON text, already at the current schema version, so a line
 * is built without a parse and re-stringify.
 */
export type JsonTextRow = [
  position: number | bigint,
  eventId: string,
  streamName: string,
  revision: number | bigint,
  type: string,
  data: string,
  metadata: string,
];

/** A log that can hand out JSON text rows (the embedded SQLite file); null where the store cannot. */
export interface JsonTextLog {
  head(): bigint | null;
  /** Rows strictly after `after` (null: from the start), of one stream when `stream` is set, in log order. */
  page(after: bigint | null, stream: string | null, limit: number): JsonTextRow[];
  close(): void;
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
