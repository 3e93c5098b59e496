/**
 * How far the views are behind the log, in events: what /readyz, /metrics and the console's chart call the projection
 * lag. It was the log head's position less the checkpoint's, which counts events only where positions number them
 * (SQLite, memory): on EventStoreDB positions are byte offsets in the server's log, and one send 807 positions behind
 * read "lag 807" ("807 events behind" in the console), and /readyz said not ready once the views were about a dozen
 * sends behind (its limit of 10,000 was meant in events).
 */
import type { EventStore } from '../events/eventStore';

/** Events behind counted at most (EventStoreDB reads them to count): beyond it the lag is "at least" this. */
export const LAG_COUNTED_UP_TO = 10_001;

export interface ViewsLag {
  /** Events in the log after the checkpoint up to the head; below zero: the views stand ahead of the log (positions). */
  events: number;
  /** True when counting stopped at LAG_COUNTED_UP_TO: the views are at least that many events behind. */
  atLeast: boolean;
}

export async function viewsLag(log: EventStore, head: bigint | null, checkpoint: bigint | null): Promise<ViewsLag> {
  const through = head ?? 0n;
  const from = checkpoint ?? 0n;
  // Views ahead of the log (another log's, or a log that lost events) keep saying so with a lag below zero.
  if (from >= through) return { events: Number(through - from), atLeast: false };
  const events = await log.countEvents(checkpoint, through, LAG_COUNTED_UP_TO);
  return { events, atLeast: events >= LAG_COUNTED_UP_TO };
}
