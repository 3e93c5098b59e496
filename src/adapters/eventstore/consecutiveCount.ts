/** The events after `after` up to `through` of a log whose positions number its events 1, 2, 3, ... (memory, SQLite). */
export function consecutiveCount(after: bigint | null, through: bigint, atMost: number): number {
  const between = through - (after ?? 0n);
  return between <= 0n ? 0 : Number(between < BigInt(atMost) ? between : BigInt(atMost));
}
