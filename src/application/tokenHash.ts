/** Bearer tokens: random, shown once, stored only as SHA-256 hashes. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const generateToken = (prefix = 'mbx'): string => `${prefix}_${randomBytes(32).toString('base64url')}`;

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A stable fingerprint of a request, so a reused Idempotency-Key with another payload is refused. */
export function requestFingerprint(value: unknown): string {
  const canonical = JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
  return createHash('sha256').update(canonical).digest('hex');
}
