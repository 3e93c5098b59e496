/**
 * An upper-bound estimate of the heap a value holds, for caches bounded in bytes as well as entries: a cache
 * bounded only by its count holds count x the largest value (a stream state keeps a message's body and task,
 * up to the request limit, so 20,000 cached states of 60 KB bodies held 1.1-1.4 GB of heap).
 *
 * A walk of the value's own fields, strings at 2 bytes a character (V8 keeps most in one byte: an upper bound,
 * not an exact figure), with a fixed overhead per object, array slot and Map entry. Shared references count once
 * per reference (over, never under), and nesting deeper than MAX_DEPTH counts as one object (a cache's
 * values are plain data: no cycles). Cost: one visit per field, so weighing a value is as cheap as building it.
 */
const MAX_DEPTH = 64;
const OBJECT = 32;
const SLOT = 8;
const MAP_ENTRY = 32;

export function approximateBytes(value: unknown): number {
  return weigh(value, 0);
}

function weigh(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return 16 + 2 * value.length;
    case 'number':
    case 'boolean':
    case 'undefined':
      return SLOT;
    case 'bigint':
      return 24;
    case 'object':
      if (value === null) return SLOT;
      if (depth >= MAX_DEPTH) return OBJECT;
      return OBJECT + weighContents(value, depth + 1);
    default:
      return OBJECT; // functions, symbols: not data a cache keeps, counted as one object
  }
}

function weighContents(value: object, depth: number): number {
  if (ArrayBuffer.isView(value)) return value.byteLength; // a Buffer: its bytes, not a walk of its indexes
  if (value instanceof Date) return SLOT;
  let bytes = 0;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) bytes += SLOT + weigh(item, depth);
  } else if (value instanceof Map) {
    for (const [key, item] of value as Map<unknown, unknown>) bytes += MAP_ENTRY + weigh(key, depth) + weigh(item, depth);
  } else if (value instanceof Set) {
    for (const item of value as Set<unknown>) bytes += MAP_ENTRY + weigh(item, depth);
  } else {
    for (const key in value) {
      if (Object.prototype.hasOwnProperty.call(value, key)) bytes += SLOT + weigh((value as Record<string, unknown>)[key], depth);
    }
  }
  return bytes;
}
