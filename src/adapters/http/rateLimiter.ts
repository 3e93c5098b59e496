/**
 * Per-agent token bucket: `burst` requests at once, refilled at `perSecond`.
 * A refused request is told when to retry (429 RATE_LIMITED + Retry-After),
 * never queued or dropped silently. With shared buckets (Redis) every API node
 * draws from the same bucket; should they fail, this process's own bucket
 * holds the line until they answer again (`observer` is told of each failure and each answer).
 */
import { IGNORE_SHARED_LIMITS, type SharedLimits, type SharedLimitsObserver } from '../../application/sharedLimits';
import { MailboxError } from '../../errors';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
    private readonly shared: SharedLimits | null = null,
    private readonly observer: SharedLimitsObserver = IGNORE_SHARED_LIMITS,
  ) {}

  /**
   * Takes `count` tokens (up to the burst) for `key` from the shared bucket when there is one, else from this
   * process's; all or none. `requests`: how many the request counts as in all, when some were taken before.
   */
  async admit(key: string, count = 1, requests = count): Promise<void> {
    if (!this.enabled || count <= 0) return;
    if (this.shared === null) return this.take(key, count, requests);
    let waitMs: number;
    try {
      waitMs = await this.shared.take(key, this.perSecond, this.burst, count);
    } catch (error) {
      this.observer.unavailable(error);
      return this.take(key, count, requests);
    }
    this.observer.answered();
    if (waitMs > 0) throw this.limited(key, Math.max(1, Math.ceil(waitMs / 1000)), requests);
  }

  /** The most requests one bucket holds at once. */
  get burstSize(): number {
    return this.burst;
  }

  get enabled(): boolean {
    return this.perSecond > 0 && this.burst > 0;
  }

  /** Takes `count` tokens for `key` (all or none) or throws RATE_LIMITED with the seconds until they are available. */
  take(key: string, count = 1, requests = count): void {
    if (!this.enabled) return;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updatedAt: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= count) {
      bucket.tokens -= count;
      return;
    }
    throw this.limited(key, Math.max(1, Math.ceil((count - bucket.tokens) / this.perSecond)), requests);
  }

  private limited(key: string, retryAfterSeconds: number, requests: number): MailboxError {
    return new MailboxError(
      'RATE_LIMITED',
      'Rate limited',
      `${key} exceeded ${this.perSecond} requests/s (burst ${this.burst})` +
        (requests > 1 ? `; this request counts as ${requests} (a JSON-RPC batch of ${requests} messages)` : '') +
        `; retry after ${retryAfterSeconds} s. The request was not applied.`,
      { retryAfterSeconds, limitPerSecond: this.perSecond, burst: this.burst, ...(requests > 1 ? { requests } : {}) },
    );
  }
}
