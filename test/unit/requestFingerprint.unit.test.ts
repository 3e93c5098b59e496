import { canonicalJson, referenceCanonicalJson, requestFingerprint } from '../../src/application/tokenHash';
import { prng as random } from '../contract/projectionStoreLog';

/** Keys that sort differently by locale and by code unit, integer-like keys (which an object lists first), and __proto__. */
const KEYS = [
  'a',
  'B',
  'b',
  'A',
  'ä',
  'z',
  'Z',
  'é',
  'e',
  'E',
  '_x',
  '-',
  '1',
  '01',
  '10',
  '9',
  '0',
  '-1',
  '1.5',
  '4294967294',
  '4294967295',
  '99999999999',
  '__proto__',
  'toJSON',
  'constructor',
  '😀',
  '中',
  'subject',
  'to',
  'body',
  'task',
  '',
];
const LEAVES: unknown[] = [null, true, false, 0, -0, 1.5, -3e21, 1e-7, NaN, Infinity, '', 'text', 'é😀"\\\n\u0001', undefined];

function value(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth > 4 || pick < 0.45) return LEAVES[Math.floor(next() * LEAVES.length)];
  if (pick < 0.65) return Array.from({ length: Math.floor(next() * 5) }, () => value(next, depth + 1));
  // Built through JSON.parse as a request body is: __proto__ is then an own key, as it is in a parsed command.
  const object: Record<string, unknown> = JSON.parse('{}');
  for (let i = Math.floor(next() * 8); i > 0; i--) {
    const key = KEYS[Math.floor(next() * KEYS.length)];
    Object.defineProperty(object, key, { value: value(next, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

describe('requestFingerprint (stored in MessageSent: its canonical form never changes)', () => {
  it('writes the same canonical JSON as the reference for 5,000 random values', () => {
    for (let seed = 1; seed <= 5_000; seed++) {
      const input = { payload: value(random(seed), 0) };
      const expected = referenceCanonicalJson(input);
      if (canonicalJson(input) !== expected) throw new Error(`seed ${seed}: ${canonicalJson(input)} !== ${expected}`);
    }
  });

  it('orders keys by locale, integer-like keys first, and leaves out undefined', () => {
    const input = JSON.parse('{"b":1,"B":2,"a":[3,null],"10":4,"9":5,"é":6}') as Record<string, unknown>;
    input.skipped = undefined;
    expect(canonicalJson(input)).toBe('{"9":5,"10":4,"a":[3,null],"b":1,"B":2,"é":6}');
    expect(canonicalJson(input)).toBe(referenceCanonicalJson(input));
  });

  it('takes the reference path for what is not plain data (a toJSON, a Date)', () => {
    const input = { at: new Date(0), custom: { toJSON: () => 'mine' }, list: [new Date(1)] };
    expect(canonicalJson(input)).toBe(referenceCanonicalJson(input));
    expect(canonicalJson(input)).toContain('"custom":"mine"');
  });

  it('is the SHA-256 of that text: the same payload in another key order has the same fingerprint', () => {
    const one = requestFingerprint({ to: '@b', subject: 'hi', task: { input: { z: 1, a: 2 } } });
    const other = requestFingerprint({ task: { input: { a: 2, z: 1 } }, subject: 'hi', to: '@b' });
    expect(one).toBe(other);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint({ to: '@b', subject: 'hi!' })).not.toBe(requestFingerprint({ to: '@b', subject: 'hi' }));
  });
});
