/**
 * A Map keyed by strings, split into 256 Maps, for the views kept in process memory that grow with every
 * message (messages, ledgers, unwoken marks, an inbox's entries by id).
 *
 * Why: a JS Map is one hash table; when it fills, V8 copies all of it into a table twice the size, on the
 * event loop, in one go. Measured at 2,000 sends/s (bench http/sustainedLoad, issue 10), the views' apply
 * stalled 60 ms at ~65k messages, 126 ms at ~131k and 260 ms at ~262k: the per-message Maps doubling
 * together. Split 256 ways (once it holds 4k keys: a smaller one stays one Map), each table holds 1/256 of the keys, so the largest copy at 10M messages is
 * ~40k entries (a few ms), the shards cross their sizes at different moments, and the store never meets
 * V8's limit of 2^24 entries per Map (~16.7M messages would have crashed the process).
 *
 * The shard is picked from the key's length and last characters: message ids (UUIDs) and identities differ
 * there, and reading four characters costs far less than hashing the whole key. Keys that share their
 * ends only make shards uneven, never wrong. Iteration goes shard by shard, so it is not insertion order:
 * callers that need an order sort.
 */
const SHARDS = 256;
/**
 * Keys held in one Map before it splits. The split is one pass over them; at 32,768 the views' per-message maps split
 * together in one 60 ms stall (bench http/sustainedLoad), at 4,096 that is a few ms.
 */
const SPLIT_AT = 4_096;

const shardOf = (key: string): number => {
  const n = key.length;
  if (n === 0) return 0;
  const h =
    key.charCodeAt(n - 1) * 29_791 +
    (n > 1 ? key.charCodeAt(n - 2) * 961 : 0) +
    (n > 2 ? key.charCodeAt(n - 3) * 31 : 0) +
    (n > 3 ? key.charCodeAt(n - 4) : 0) +
    n;
  return (h ^ (h >>> 8)) & (SHARDS - 1);
};

export class ShardedMap<V> implements Iterable<[string, V]> {
  /** One Map while small (most inboxes: 256 empty Maps each would cost more than they hold), the shards after. */
  private single: Map<string, V> | null = new Map();
  private shards: Array<Map<string, V>> | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return (this.single ?? this.shards![shardOf(key)]).get(key);
  }

  has(key: string): boolean {
    return (this.single ?? this.shards![shardOf(key)]).has(key);
  }

  set(key: string, value: V): this {
    const map = this.single ?? this.shards![shardOf(key)];
    const before = map.size;
    map.set(key, value);
    this.count += map.size - before;
    if (this.single !== null && this.count >= SPLIT_AT) this.split(this.single);
    return this;
  }

  delete(key: string): boolean {
    const deleted = (this.single ?? this.shards![shardOf(key)]).delete(key);
    if (deleted) this.count -= 1;
    return deleted;
  }

  *keys(): IterableIterator<string> {
    for (const map of this.maps()) yield* map.keys();
  }

  *values(): IterableIterator<V> {
    for (const map of this.maps()) yield* map.values();
  }

  *entries(): IterableIterator<[string, V]> {
    for (const map of this.maps()) yield* map.entries();
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /** How many parts the keys come in (keysOfPart): one while the map is small, one per shard after. */
  get parts(): number {
    return this.maps().length;
  }

  /** The keys of one part: a walk over every key in steps that can be resumed from a part number. */
  keysOfPart(part: number): string[] {
    const map = this.maps()[part];
    return map === undefined ? [] : [...map.keys()];
  }

  /** The entries of one part (keysOfPart, with their values). */
  entriesOfPart(part: number): Array<[string, V]> {
    const map = this.maps()[part];
    return map === undefined ? [] : [...map.entries()];
  }

  private maps(): ReadonlyArray<Map<string, V>> {
    return this.single ? [this.single] : this.shards!;
  }

  /** Once, at SPLIT_AT keys: a pass over them (a few ms), instead of ever larger copies later. */
  private split(single: Map<string, V>): void {
    const shards = Array.from({ length: SHARDS }, () => new Map<string, V>());
    for (const [key, value] of single) shards[shardOf(key)].set(key, value);
    this.shards = shards;
    this.single = null;
  }
}
