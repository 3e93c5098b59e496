/**
 * Refused bearer tokens per client address: a token this mailbox does not know costs a registry read (on EventStoreDB a
 * network read), so a client sending made-up tokens in a loop made the server read without end. Each address has a
 * token bucket of `burst` refusals, refilled at `perSecond`; an address with none left has its unknown tokens answered
 * 429 RATE_LIMITED unread (auth.ts). Known tokens never draw from it. The buckets are at most `maxAddresses`, the least
 * recently used evicted first (one untouched for burst / perSecond seconds is full: evicting it forgets nothing).
 */
import { MailboxError } from '../../errors';

/** Addresses kept at most (about 100 bytes each). */
export const MAX_REFUSED_TOKEN_ADDRESSES = 10_000;

interface Bucket {
  refusals: number;
  updatedAt: number;
}

export class RefusedTokens {
  /** In order of last use, the least recent first. */
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** Milliseconds, from any origin; a clock that steps back refills nothing. */
    private readonly now: () => number,
    private readonly maxAddresses = MAX_REFUSED_TOKEN_ADDRESSES,
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  /** How many addresses have a bucket. */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one refusal of `address`'s for a token about to be looked up: false when it has none left. */
  take(address: string): boolean {
    if (!this.enabled) return true;
    const bucket = this.bucketOf(address);
    if (bucket.refusals < 1) return false;
    bucket.refusals -= 1;
    return true;
  }

  /** Gives back the refusal taken for a token that was not refused after all (it was known, or the lookup failed). */
  giveBack(address: string): void {
    if (!this.enabled) return;
    const bucket = this.bucketOf(address);
    bucket.refusals = Math.min(this.burst, bucket.refusals + 1);
  }

  /** The answer to a token from `address` once it has no refusal left: when one is back, and that nothing was done. */
  refusal(address: string): MailboxError {
    const refusals = this.buckets.get(address)?.refusals ?? 0;
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - refusals) / this.perSecond));
    return new MailboxError(
      'RATE_LIMITED',
      'Too many refused tokens',
      `Too many refused bearer tokens from this address (${address}): more than ${this.burst} at once, then ` +
        `${this.perSecond} a second. This token was not checked and nothing was done; retry after ` +
        `${retryAfterSeconds} s with a valid token (an agent gets its token when an admin registers it, POST /v1/agents).`,
      { retryAfterSeconds, limitPerSecond: this.perSecond, burst: this.burst },
    );
  }

  /** `address`'s bucket refilled to now, moved to the most recently used end (a new one full, evicting the least recent). */
  private bucketOf(address: string): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(address);
    if (bucket === undefined) {
      bucket = { refusals: this.burst, updatedAt: now };
      if (this.buckets.size >= this.maxAddresses) {
        const leastRecent = this.buckets.keys().next();
        if (!leastRecent.done) this.buckets.delete(leastRecent.value);
      }
    } else {
      this.buckets.delete(address);
      const elapsedMs = Math.max(0, now - bucket.updatedAt);
      bucket.refusals = Math.min(this.burst, bucket.refusals + (elapsedMs / 1000) * this.perSecond);
      bucket.updatedAt = now;
    }
    this.buckets.set(address, bucket);
    return bucket;
  }
}

/**
 * The key of a client's address: an IPv4 address as it is (also written IPv4-mapped, ::ffff:192.0.2.1), an IPv6
 * address by its /64, the least a host is given, so that one host cannot take a fresh bucket for each of its
 * addresses. The socket's address only: no X-Forwarded-For is trusted.
 */
export function clientAddressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remoteAddress);
  if (mapped) return mapped[1];
  if (!remoteAddress.includes(':')) return remoteAddress;
  const [head, tail = ''] = remoteAddress.split('%')[0].toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = remoteAddress.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = remoteAddress.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
