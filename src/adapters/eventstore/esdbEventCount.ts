/**
 * Counting events on EventStoreDB, where positions are byte offsets: the events between two positions are counted by
 * reading them. Each /readyz, each /metrics scrape and each heartbeat tick asks while the views are behind, and read up
 * to 10,001 events every time (a node 10,000 events behind read them all at each check). This remembers the positions
 * it read and reads only past them: $all's positions never change for a log, so the events the log held between two
 * positions are the same at the next check, and only the part past the last one read is new.
 *
 * What it remembers is exact (every mailbox event in (from, through], in order), never a guess: a count from it is the
 * count a fresh read gives. A checkpoint that went back before what it remembers (views rebuilt) starts afresh.
 * Counts run one at a time, so two checks never read the same events side by side.
 */
import type { StoredEvent } from '../../events/types';

/** Every mailbox event after `from` up to `through` (inclusive), by position; -1n stands for "the start of the log". */
interface Scanned {
  from: bigint;
  through: bigint;
  positions: bigint[];
}

const START = -1n;
const asAfter = (position: bigint): bigint | null => (position === START ? null : position);

/** How many of the ascending `positions` are at or below `position`. */
function countAtOrBelow(positions: readonly bigint[], position: bigint): number {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (positions[middle] <= position) low = middle + 1;
    else high = middle;
  }
  return low;
}

export class EsdbEventCount {
  private scanned: Scanned | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly readAll: (after: bigint | null, limit: number) => Promise<Pick<StoredEvent, 'position'>[]>,
    private readonly pageSize: number,
  ) {}

  count(after: bigint | null, through: bigint, atMost: number): Promise<number> {
    const counted = this.queue.then(() => this.counted(after ?? START, through, atMost));
    this.queue = counted.catch(() => undefined);
    return counted;
  }

  private async counted(from: bigint, through: bigint, atMost: number): Promise<number> {
    const previous = this.scanned;
    const known: Scanned =
      previous === null || from < previous.from || from > previous.through
        ? { from, through: from, positions: [] }
        : { from, through: previous.through, positions: previous.positions.slice(countAtOrBelow(previous.positions, from)) };
    this.scanned = known; // exact at every step below: a read that fails keeps what was read before it
    // Read on past what is known while the count could still grow: `through` not reached and fewer than atMost known.
    while (known.through < through && known.positions.length < atMost) {
      const wanted = Math.min(this.pageSize, atMost - known.positions.length);
      const page = await this.readAll(asAfter(known.through), wanted);
      for (const event of page) known.positions.push(event.position);
      if (page.length > 0) known.through = page[page.length - 1].position;
      if (page.length < wanted) break; // the end of the log: what is appended later is read at a later count
    }
    return Math.min(countAtOrBelow(known.positions, through), atMost);
  }
}
