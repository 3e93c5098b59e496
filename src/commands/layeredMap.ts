/**
 * An immutable Map whose changed copy costs what changed, not what it holds: for folded states that keep one
 * record per identity (a message's read and archive state per recipient).
 *
 * Why: a fold is pure, so each batch's changes go into a copy. With a plain Map the copy is the whole Map: a
 * broadcast to n agents, read by each of them, copied n entries at each read, n² in all (84 µs a read at 1,000
 * recipients; 10,000 would cost ~0.8 ms a read and ~8 s of CPU to read one broadcast through).
 *
 * How: a base Map that is never changed once built, shared by every copy, and a small overlay of the entries
 * changed since. A copy with changes copies the overlay only (at most about √n entries); once the overlay
 * outgrows that, the copy folds it into a new base (n entries, once every √n copies). A change costs O(√n)
 * amortized; a look-up two Map look-ups.
 *
 * It behaves as a ReadonlyMap: iteration is in insertion order (a changed entry keeps its place), size counts each
 * key once. There is no delete: the folds that use it never remove an identity.
 */
const OVERLAY_MIN = 32;

export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
  private constructor(
    /** Never changed after construction: shared by every copy made from it. */
    private readonly base: ReadonlyMap<K, V>,
    /** The entries changed since the base was built (each either replaces a base entry or adds one after them). */
    private readonly overlay: ReadonlyMap<K, V>,
    readonly size: number,
  ) {}

  static empty<K, V>(): LayeredMap<K, V> {
    return new LayeredMap(new Map(), new Map(), 0);
  }

  static of<K, V>(entries: Iterable<readonly [K, V]>): LayeredMap<K, V> {
    const base = new Map(entries);
    return new LayeredMap(base, new Map(), base.size);
  }

  /** A copy with `changes` set (each replaces its key's value, or adds the key at the end); this one is unchanged. */
  with(changes: ReadonlyMap<K, V>): LayeredMap<K, V> {
    if (changes.size === 0) return this;
    const overlay = new Map(this.overlay);
    let size = this.size;
    for (const [key, value] of changes) {
      if (!overlay.has(key) && !this.base.has(key)) size++;
      overlay.set(key, value);
    }
    if (overlay.size <= Math.max(OVERLAY_MIN, Math.sqrt(this.base.size))) return new LayeredMap(this.base, overlay, size);
    const base = new Map(this.base);
    for (const [key, value] of overlay) base.set(key, value);
    return new LayeredMap(base, new Map(), size);
  }

  get(key: K): V | undefined {
    return this.overlay.has(key) ? this.overlay.get(key) : this.base.get(key);
  }

  has(key: K): boolean {
    return this.overlay.has(key) || this.base.has(key);
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) yield [key, this.overlay.has(key) ? (this.overlay.get(key) as V) : value];
    for (const [key, value] of this.overlay) if (!this.base.has(key)) yield [key, value];
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
}
