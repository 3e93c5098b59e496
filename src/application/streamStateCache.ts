/** Folded stream states by stream name, so a command reads only the events appended since it last looked. */
export interface CachedState<S> {
  revision: bigint | null; // null: the stream did not exist
  state: S;
}

export class StreamStateCache {
  private readonly entries = new Map<string, CachedState<unknown>>();

  constructor(private readonly maxEntries = 20_000) {}

  get<S>(streamName: string): CachedState<S> | undefined {
    const entry = this.entries.get(streamName);
    if (entry) {
      // Refresh recency: Map iteration order is insertion order, so re-insert.
      this.entries.delete(streamName);
      this.entries.set(streamName, entry);
    }
    return entry as CachedState<S> | undefined;
  }

  set<S>(streamName: string, entry: CachedState<S>): void {
    this.entries.delete(streamName);
    this.entries.set(streamName, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  delete(streamName: string): void {
    this.entries.delete(streamName);
  }
}
