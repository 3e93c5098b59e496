/**
 * `audit replay`: the ordered log, streamed page by page with optional
 * filters. A stream filter reads that one stream when the source can (no scan).
 */
import type { MailboxEventType, StoredEvent } from '../events/types';
import { pagesOf, type LogSource } from './logSource';

export interface ReplayFilter {
  /** First position to include (inclusive); null: from the start. */
  from: bigint | null;
  types: ReadonlySet<MailboxEventType> | null;
  stream: string | null;
}

export interface ReplayProgress {
  /** Called after each page with the last position read. */
  (position: bigint): void;
}

export interface ReplaySummary {
  scanned: number;
  matched: number;
  lastPosition: bigint | null;
}

const matcher = (filter: ReplayFilter) => (event: StoredEvent): boolean =>
  (filter.from === null || event.position >= filter.from)
  && (filter.types === null || filter.types.has(event.type))
  && (filter.stream === null || event.streamName === filter.stream);

/** Hands matching events to `sink` in log order, one page at a time; awaits the sink (backpressure). */
export async function replayLog(source: LogSource, filter: ReplayFilter,
  sink: (events: StoredEvent[]) => void | Promise<void>, progress?: ReplayProgress): Promise<ReplaySummary> {
  const matches = matcher(filter);
  const summary: ReplaySummary = { scanned: 0, matched: 0, lastPosition: null };
  const take = async (page: StoredEvent[]) => {
    const kept = page.filter(matches);
    summary.scanned += page.length;
    summary.matched += kept.length;
    if (page.length > 0) summary.lastPosition = page[page.length - 1].position;
    if (kept.length > 0) await sink(kept);
    if (summary.lastPosition !== null) progress?.(summary.lastPosition);
  };
  if (filter.stream !== null && source.readStream !== null) {
    await take(await source.readStream(filter.stream));
    return summary;
  }
  for await (const page of pagesOf(source, filter.from === null ? null : filter.from - 1n)) await take(page);
  return summary;
}
