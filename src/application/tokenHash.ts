/** Bearer tokens: random, shown once, stored only as SHA-256 hashes. */
import crypto, { randomBytes, timingSafeEqual } from 'node:crypto';

export const generateToken = (prefix = 'mbx'): string => `${prefix}_${randomBytes(32).toString('base64url')}`;

/** SHA-256 in hex, one-shot (Node >= 20.12, package.json's engines): no Hash object per call, and it runs per request. */
const sha256Hex = (text: string): string => crypto.hash('sha256', text, 'hex');

export const hashToken = (token: string): string => sha256Hex(token);

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * A stable fingerprint of a request, so a reused Idempotency-Key with another payload is refused. It is stored in
 * MessageSent (requestHash) and compared on every retry, so its canonical form must never change: JSON with each
 * object's keys sorted by `localeCompare`, as `referenceCanonicalJson` writes it (an object rebuilt from the sorted
 * entries, so integer-like keys come first, ascending, as JavaScript orders an object's own keys).
 */
export function requestFingerprint(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** The canonical form by definition: JSON.stringify with a replacer that rebuilds each object from its sorted entries. */
export function referenceCanonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/**
 * The same text as referenceCanonicalJson, written directly (test/unit/requestFingerprint.unit.test.ts compares
 * them). Why: the replacer built a sorted copy of every object and JSON.stringify called back into it for every
 * value, which made the fingerprint 6-8% of the event loop's CPU per send. Plain data only (what a validated
 * command holds): anything else (a toJSON, a class instance, a function, a bigint) takes the reference path.
 */
export function canonicalJson(value: unknown): string {
  const text = writeCanonical(value);
  return text === undefined ? referenceCanonicalJson(value) : text;
}

/** `localeCompare` with its default locale and options is this collator's compare (ECMA-402), without a look-up per call. */
const collator = new Intl.Collator();
const byKey = (a: [string, unknown], b: [string, unknown]): number => collator.compare(a[0], b[0]);
/** An array index (0 to 2^32 - 2 in canonical form): an object lists such keys first, in ascending order. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;
const isArrayIndex = (key: string): boolean => ARRAY_INDEX.test(key) && Number(key) <= 4_294_967_294;

/** The canonical text of plain data, or undefined when `value` holds anything else. */
function writeCanonical(value: unknown): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return JSON.stringify(value);
  if (typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    const parts: string[] = [];
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      const text = element === undefined ? 'null' : writeCanonical(element);
      if (text === undefined) return undefined;
      parts.push(text);
    }
    return `[${parts.join(',')}]`;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return undefined;
  const entries = Object.entries(value).sort(byKey);
  const indices = entries.filter(([key]) => isArrayIndex(key));
  const ordered =
    indices.length === 0
      ? entries
      : [...indices.sort((a, b) => Number(a[0]) - Number(b[0])), ...entries.filter(([key]) => !isArrayIndex(key))];
  const parts: string[] = [];
  for (const [key, entry] of ordered) {
    if (entry === undefined) continue;
    const text = writeCanonical(entry);
    if (text === undefined) return undefined;
    parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}
