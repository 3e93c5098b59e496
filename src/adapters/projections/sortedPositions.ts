/**
 * Entries kept in ascending log position, for newest-first pages and cursor seeks by binary search.
 * Positions are numbers here, not bigints: exact up to 2^53 (far beyond any log this store holds),
 * compared faster, and no heap object per entry (1M entries: tens of MB less to keep and collect).
 */
export interface Positioned {
  position: number;
}

/** Index of the first entry whose position is >= `position`. */
export function lowerBound(entries: readonly Positioned[], position: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid].position < position) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Inserts keeping order; appends in O(1) in the usual case (events arrive in log order). */
export function insertSorted<T extends Positioned>(entries: T[], entry: T): void {
  if (entries.length === 0 || entries[entries.length - 1].position < entry.position) {
    entries.push(entry);
    return;
  }
  entries.splice(lowerBound(entries, entry.position), 0, entry);
}

/** Newest first, strictly older than `before` (null: from the newest). */
export function* newestFirst<T extends Positioned>(entries: readonly T[], before: number | null): Generator<T> {
  const start = before === null ? entries.length : lowerBound(entries, before);
  for (let i = start - 1; i >= 0; i--) yield entries[i];
}
