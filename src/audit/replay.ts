/**
 * `audit replay`: the ordered log, streamed page by page with optional
 * filters. A stream filter reads that one stream when the source can (no scan).
 */
import type { MailboxEventType, StoredEvent } from '../events/types';
import { rowJsonLine } from './eventFormat';
import { pagesOf, type JsonTextLog, type LogSource } from './logSource';

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

const matcher =
  (filter: ReplayFilter) =>
  (event: StoredEvent): boolean =>
    (filter.from === null || event.position >= filter.from) &&
    (filter.types === null || filter.types.has(event.type)) &&
    (filter.stream === null || event.streamName === filter.stream);

/** Hands matching events to `sink` in log order, one page at a time; awaits the sink (backpressure). */
export async function replayLog(
  source: LogSource,
  filter: ReplayFilter,
  sink: (events: StoredEvent[]) => void | Promise<void>,
  progress?: ReplayProgress,
): Promise<ReplaySummary> {
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

const JSON_TEXT_PAGE = 1000;

/** replayLog as JSON lines straight from a JSON text log: the same lines as eventJsonLine, without the parse/stringify round trip. */
export async function replayJsonText(
  log: JsonTextLog,
  filter: ReplayFilter,
  sink: (text: string) => void | Promise<void>,
  progress?: ReplayProgress,
): Promise<ReplaySummary> {
  const summary: ReplaySummary = { scanned: 0, matched: 0, lastPosition: null };
  let after = filter.from === null ? null : filter.from - 1n;
  for (;;) {
    const rows = log.page(after, filter.stream, JSON_TEXT_PAGE);
    if (rows.length === 0) break;
    let text = '';
    for (const row of rows) {
      if (filter.types !== null && !filter.types.has(row[4] as MailboxEventType)) continue;
      text += `${rowJsonLine(row)}\n`;
      summary.matched++;
    }
    summary.scanned += rows.length;
    after = BigInt(rows[rows.length - 1][0]);
    summary.lastPosition = after;
    if (text !== '') await sink(text);
    progress?.(summary.lastPosition);
  }
  return summary;
}
