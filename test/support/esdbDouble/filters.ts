/**
 * Server-side filters of Streams.Read: on stream name or event type, by
 * prefixes or a regular expression, with a checkpoint every
 * `window x checkpointIntervalMultiplier` events considered.
 */
import type { ReadReq } from '@eventstore/db-client/generated/streams_pb';
import type { LogRecord } from './doubleLog';

export interface RecordFilter {
  matches(record: LogRecord): boolean;
  /** Send a checkpoint after this many considered events (null: no filter, no checkpoints). */
  checkpointEvery: number | null;
  description: string;
}

/** EventStoreDB's default search window when the client sends `count` instead of `max`. */
const DEFAULT_WINDOW = 32;

export const NO_FILTER: RecordFilter = { matches: () => true, checkpointEvery: null, description: 'none' };

export function filterOf(options: ReadReq.Options): RecordFilter {
  if (!options.hasFilter()) return NO_FILTER;
  const filter = options.getFilter()!;
  const onStream = filter.hasStreamIdentifier();
  const expression = onStream ? filter.getStreamIdentifier()! : filter.getEventType()!;
  const prefixes = expression.getPrefixList();
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : null;
  const field = (record: LogRecord) => (onStream ? record.streamName : record.type);
  const test = (value: string) =>
    (prefixes.length > 0 && prefixes.some((prefix) => value.startsWith(prefix))) || (regex !== null && regex.test(value));
  const window = filter.hasMax() ? filter.getMax() : DEFAULT_WINDOW;
  const multiplier = Math.max(1, filter.getCheckpointintervalmultiplier());
  return {
    matches: (record) => test(field(record)),
    checkpointEvery: window * multiplier,
    description: `${onStream ? 'stream' : 'eventType'} ${prefixes.length ? `prefixes [${prefixes.join(', ')}]` : `regex ${regex}`}`,
  };
}
