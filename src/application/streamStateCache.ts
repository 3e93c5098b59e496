import { approximateBytes, type WeightMemo } from '../support/approximateBytes';

/** Folded stream states by stream name, so a command reads only the events appended since it last looked. */
export interface CachedState<S> {
  revision: bigint | null; // null: the stream did not exist
  state: S;
}

/** What a cache keeps at most: streams, and their states' estimated heap (support/approximateBytes.ts). */
export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

interface Kept {
  entry: CachedState<unknown>;
  bytes: number;
}

class Generation {
  readonly entries = new Map<string, Kept>();
  bytes = 0;

  set(streamName: string, kept: Kept): void {
    const previous = this.entries.get(streamName);
    if (previous) this.bytes -= previous.bytes;
    this.entries.set(streamName, kept);
    this.bytes += kept.bytes;
  }

  delete(streamName: string): void {
    const previous = this.entries.get(streamName);
    if (!previous) return;
    this.bytes -= previous.bytes;
    this.entries.delete(streamName);
  }
}

/**
 * Bounded, approximately least-recently-used: two generations, each of at
 * most maxEntries / 2 streams and maxBytes / 2 of states. Writes and hits go
 * to the young generation; when it is full it becomes the old one and the
 * previous old one is dropped whole.
 * (A single Map refreshed by delete + re-insert degrades badly once full:
 * every eviction scans the deleted slots at the front of V8's table —
 * ~37 µs per access at 20,000 entries, measured by bench/core/sendThroughput.)
 * Bytes as well as entries: a message's state holds its body and task, so a
 * count alone let 20,000 states of 60 KB bodies hold over a gigabyte (bench
 * core/largeMessages). A dropped entry only costs a re-read of its stream,
 * never correctness.
 */
export class StreamStateCache {
  private young = new Generation();
  private old = new Generation();
  private readonly generationEntries: number;
  private readonly generationBytes: number;
  /** States are never changed in place (a fold copies what it changes): what a state shares with the last is weighed once. */
  private readonly weights: WeightMemo = new WeakMap();

  constructor({ maxEntries, maxBytes }: CacheBounds) {
    this.generationEntries = Math.max(1, Math.floor(maxEntries / 2));
    this.generationBytes = Math.max(1, Math.floor(maxBytes / 2));
  }

  get<S>(streamName: string): CachedState<S> | undefined {
    const young = this.young.entries.get(streamName);
    if (young) return young.entry as CachedState<S>;
    const old = this.old.entries.get(streamName);
    if (!old) return undefined;
    this.remember(streamName, old); // a hit keeps the entry for another generation
    return old.entry as CachedState<S>;
  }

  set<S>(streamName: string, entry: CachedState<S>): void {
    this.remember(streamName, { entry, bytes: approximateBytes(entry.state, this.weights) });
  }

  delete(streamName: string): void {
    this.young.delete(streamName);
    this.old.delete(streamName);
  }

  /** Streams and estimated bytes held now (both generations). */
  size(): { entries: number; bytes: number } {
    return { entries: this.young.entries.size + this.old.entries.size, bytes: this.young.bytes + this.old.bytes };
  }

  /** Young entries always shadow old ones: every write lands in the young generation. */
  private remember(streamName: string, kept: Kept): void {
    this.old.delete(streamName); // its bytes are counted once, in the young generation
    this.young.set(streamName, kept);
    if (this.young.entries.size >= this.generationEntries || this.young.bytes >= this.generationBytes) {
      this.old = this.young;
      this.young = new Generation();
    }
  }
}
