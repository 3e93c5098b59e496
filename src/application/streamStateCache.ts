/** Folded stream states by stream name, so a command reads only the events appended since it last looked. */
export interface CachedState<S> {
  revision: bigint | null; // null: the stream did not exist
  state: S;
}

/**
 * Bounded, approximately least-recently-used: two generations of at most
 * maxEntries / 2 each. Writes and hits go to the young generation; when it is
 * full it becomes the old one and the previous old one is dropped whole.
 * (A single Map refreshed by delete + re-insert degrades badly once full:
 * every eviction scans the deleted slots at the front of V8's table —
 * ~37 µs per access at 20,000 entries, measured by bench/core/sendThroughput.)
 * A dropped entry only costs a re-read of its stream, never correctness.
 */
export class StreamStateCache {
  private young = new Map<string, CachedState<unknown>>();
  private old = new Map<string, CachedState<unknown>>();
  private readonly generationSize: number;

  constructor(maxEntries = 20_000) {
    this.generationSize = Math.max(1, Math.floor(maxEntries / 2));
  }

  get<S>(streamName: string): CachedState<S> | undefined {
    const young = this.young.get(streamName);
    if (young) return young as CachedState<S>;
    const old = this.old.get(streamName);
    if (old) this.remember(streamName, old); // a hit keeps the entry for another generation
    return old as CachedState<S> | undefined;
  }

  set<S>(streamName: string, entry: CachedState<S>): void {
    this.remember(streamName, entry);
  }

  delete(streamName: string): void {
    this.young.delete(streamName);
    this.old.delete(streamName);
  }

  /** Young entries always shadow old ones: every write lands in the young generation. */
  private remember(streamName: string, entry: CachedState<unknown>): void {
    this.young.set(streamName, entry);
    if (this.young.size >= this.generationSize) {
      this.old = this.young;
      this.young = new Map();
    }
  }
}
