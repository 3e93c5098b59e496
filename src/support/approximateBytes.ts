/**
 * An upper-bound estimate of the heap a value holds, for caches bounded in bytes as well as entries: a cache
 * bounded only by its count holds count x the largest value (a stream state keeps a message's body and task,
 * up to the request limit, so 20,000 cached states of 60 KB bodies held 1.1-1.4 GB of heap).
 *
 * A walk of the value's own fields, strings at 2 bytes a character (V8 keeps most in one byte: an upper bound,
 * not an exact figure), with a fixed overhead per object, array slot and Map entry. Shared references count once
 * per reference (over, never under), and nesting deeper than MAX_DEPTH counts as one object (a cache's
 * values are plain data: no cycles). Cost: one visit per field, so weighing a value is as cheap as building it,
 * with two exceptions for values weighed again and again (a broadcast's state, re-cached at each of its 1,000
 * reads: 98 µs a weigh before them, see approximateBytes.unit.test.ts):
 * - a Map or Set of more than SAMPLED entries is weighed by its first SAMPLED and extrapolated. The domain's Maps
 *   (an agent per identity, a recipient's read state per identity) hold records of one small shape, never what a
 *   user sent (JSON never makes a Map), so the sample is representative;
 * - with a `memo` (a WeakMap the caller keeps), an object or array of MEMO_FROM fields or more is weighed once:
 *   for values that are never changed in place (folded states: a fold copies what it changes), so that the same
 *   event data in each next state costs a look-up.
 */
const MAX_DEPTH = 64;
const OBJECT = 32;
const SLOT = 8;
const MAP_ENTRY = 32;
const SAMPLED = 32;
const MEMO_FROM = 8;

export type WeightMemo = WeakMap<object, number>;

export function approximateBytes(value: unknown, memo?: WeightMemo): number {
  return weigh(value, 0, memo);
}

function weigh(value: unknown, depth: number, memo: WeightMemo | undefined): number {
  switch (typeof value) {
    case 'string':
      return 16 + 2 * value.length;
    case 'number':
    case 'boolean':
    case 'undefined':
      return SLOT;
    case 'bigint':
      return 24;
    case 'object': {
      if (value === null) return SLOT;
      if (depth >= MAX_DEPTH) return OBJECT;
      const known = memo?.get(value);
      if (known !== undefined) return known;
      return OBJECT + weighContents(value, depth + 1, memo);
    }
    default:
      return OBJECT; // functions, symbols: not data a cache keeps, counted as one object
  }
}

function weighContents(value: object, depth: number, memo: WeightMemo | undefined): number {
  if (ArrayBuffer.isView(value)) return value.byteLength; // a Buffer: its bytes, not a walk of its indexes
  if (value instanceof Date) return SLOT;
  if (value instanceof Map || value instanceof Set) return weighCollection(value, depth, memo);
  let bytes = 0;
  let fields = 0;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) bytes += SLOT + weigh(item, depth, memo);
    fields = value.length;
  } else {
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      bytes += SLOT + weigh((value as Record<string, unknown>)[key], depth, memo);
      fields++;
    }
  }
  // Near the top only (a state's own fields, such as a message's event data): deeper, a cut at MAX_DEPTH could differ.
  if (memo !== undefined && fields >= MEMO_FROM && depth <= 2) memo.set(value, OBJECT + bytes);
  return bytes;
}

/** Every entry of a small Map or Set; the first SAMPLED of a larger one, extrapolated to its size. */
function weighCollection(value: Map<unknown, unknown> | Set<unknown>, depth: number, memo: WeightMemo | undefined): number {
  let bytes = 0;
  let weighed = 0;
  for (const [key, item] of value.entries()) {
    bytes += MAP_ENTRY + weigh(key, depth, memo) + (value instanceof Map ? weigh(item, depth, memo) : 0);
    if (++weighed === SAMPLED) break;
  }
  return weighed === 0 ? 0 : Math.ceil((bytes / weighed) * value.size);
}
