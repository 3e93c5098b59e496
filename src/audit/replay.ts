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
  /** Events read (a stream read directly is read whole; a scan reads the log from --from on). */
  scanned: number;
  /**
   * Events in the range asked for, before --type: of the stream (or the log), at or after --from. The same read directly
   * or over the API (`scanned` is not: the whole stream read directly, every event from --from on in a scan).
   */
  inRange: number;
  matched: number;
  lastPosition: bigint | null;
  /**
   * With a stream filter: whether the log holds that stream at all (before --from and --type narrow it), so that a
   * misspelt name is told apart from a stream with nothing in range; null without a stream filter, or when a scan
   * found no event at all at or after --from (the log ends before it).
   */
  streamFound: boolean | null;
}

const inRange =
  (filter: ReplayFilter) =>
  (event: StoredEvent): boolean =>
    (filter.from === null || event.position >= filter.from) && (filter.stream === null || event.streamName === filter.stream);

/** Hands matching events to `sink` in log order, one page at a time; awaits the sink (backpressure). */
export async function replayLog(
  source: LogSource,
  filter: ReplayFilter,
  sink: (events: StoredEvent[]) => void | Promise<void>,
  progress?: ReplayProgress,
): Promise<ReplaySummary> {
  const inScope = inRange(filter);
  const summary: ReplaySummary = { scanned: 0, inRange: 0, matched: 0, lastPosition: null, streamFound: null };
  const take = async (page: StoredEvent[]) => {
    const ranged = page.filter(inScope);
    const kept = filter.types === null ? ranged : ranged.filter((event) => filter.types!.has(event.type));
    summary.scanned += page.length;
    summary.inRange += ranged.length;
    summary.matched += kept.length;
    if (page.length > 0) summary.lastPosition = page[page.length - 1].position;
    if (kept.length > 0) await sink(kept);
    if (summary.lastPosition !== null) progress?.(summary.lastPosition);
  };
  const stream = filter.stream;
  if (stream !== null && source.readStream !== null) {
    const events = await source.readStream(stream); // the whole stream: --from is applied by the matcher
    summary.streamFound = events.length > 0;
    await take(events);
    return summary;
  }
  let inStream = 0;
  for await (const page of pagesOf(source, filter.from === null ? null : filter.from - 1n)) {
    if (stream !== null) inStream += page.filter((event) => event.streamName === stream).length;
    await take(page);
  }
  // Nothing at or after --from at all: the log ends before it, which the caller says; no scan for the stream then.
  if (stream !== null)
    summary.streamFound =
      inStream > 0 || filter.from === null
        ? inStream > 0
        : summary.scanned === 0
          ? null
          : await holdsBefore(source, stream, filter.from);
  return summary;
}

/** Whether `stream` has an event before position `before`: the part of the log a scan from --from did not read. */
async function holdsBefore(source: LogSource, stream: string, before: bigint): Promise<boolean> {
  for await (const page of pagesOf(source, null)) {
    for (const event of page) {
      if (event.position >= before) return false;
      if (event.streamName === stream) return true;
    }
  }
  return false;
}

const JSON_TEXT_PAGE = 1000;

/** replayLog as JSON lines straight from a JSON text log: the same lines as eventJsonLine, without the parse/stringify round trip. */
export async function replayJsonText(
  log: JsonTextLog,
  filter: ReplayFilter,
  sink: (text: string) => void | Promise<void>,
  progress?: ReplayProgress,
): Promise<ReplaySummary> {
  const summary: ReplaySummary = { scanned: 0, inRange: 0, matched: 0, lastPosition: null, streamFound: null };
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
    summary.inRange += rows.length; // the query reads the range: the stream's rows from --from on
    after = BigInt(rows[rows.length - 1][0]);
    summary.lastPosition = after;
    if (text !== '') await sink(text);
    progress?.(summary.lastPosition);
  }
  // The rows are the stream's already (the query filters on it); none from --from on: is there any before it?
  if (filter.stream !== null)
    summary.streamFound = summary.scanned > 0 || (filter.from !== null && log.page(null, filter.stream, 1).length > 0);
  return summary;
}
