/**
 * Batched rendering for the live flow: entries arrive one by one (1,000/s and
 * more), are queued, and are handed to the view at most once per flush (a frame);
 * the view keeps only the newest `capacity`, so the tab's memory stays bounded
 * however long the stream runs. Entries held back while the view is paused are
 * bounded the same way: the oldest are dropped and counted, never silently.
 */
export interface Batched<T> {
  /** Newest first, at most `capacity`. */
  shown: T[];
  /** Entries received in all. */
  received: number;
  /** Entries that were pushed out (beyond capacity) before or after being shown. */
  dropped: number;
}

export class FlowBuffer<T> {
  private pending: T[] = [];
  private state: Batched<T> = { shown: [], received: 0, dropped: 0 };

  constructor(readonly capacity: number) {}

  push(entry: T): void {
    this.pending.push(entry);
    this.state.received += 1;
    if (this.pending.length > this.capacity) {
      const over = this.pending.length - this.capacity;
      this.pending.splice(0, over);
      this.state.dropped += over;
    }
  }

  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** The counts as of now, the queued entries with them (a paused view says these, not its last flush's). */
  counts(): { received: number; dropped: number; pending: number } {
    return { received: this.state.received, dropped: this.state.dropped, pending: this.pending.length };
  }

  /** Moves the queued entries into view (newest first) and returns the new state; one render per flush. */
  flush(): Batched<T> {
    if (this.pending.length === 0) return this.state;
    const incoming = this.pending.reverse();
    this.pending = [];
    const shown = incoming.concat(this.state.shown);
    const over = Math.max(0, shown.length - this.capacity);
    if (over > 0) shown.length = this.capacity;
    this.state = { shown, received: this.state.received, dropped: this.state.dropped + over };
    return this.state;
  }

  clear(): Batched<T> {
    this.pending = [];
    this.state = { shown: [], received: 0, dropped: 0 };
    return this.state;
  }
}
