/**
 * Limits shared by the API nodes, in Redis, each on the agent's hash tag (a Cluster keeps them on
 * one node) and timed by Redis's own clock, so that every node sees the same state:
 * - the request token bucket, `<ns>:rate:{@b}` (a hash; expires once full again);
 * - the open wake streams, `<ns>:streams:{@b}` (a sorted set of `<node>:<n>` scored by the expiry
 *   of each stream's lease; the node renews its leases while the streams are open, so the places
 *   of a node that died come free once their lease runs out).
 */
import { randomUUID } from 'node:crypto';
import type { Result } from 'ioredis';
import type { SharedLimits, WakeStreamHold } from '../../application/sharedLimits';
import { isMailboxError } from '../../errors';
import { sleep } from '../../support/retry';
import { closeRedis, redisCall, type RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

/**
 * KEYS[1]: the bucket (hash: tokens, at). ARGV: tokens per second, burst, the time in ms
 * ('' : Redis's clock, the one every node shares; a number: an injected clock, for tests), and how many
 * tokens to take (absent: one; all or none).
 * Returns 0 when they were taken, else the milliseconds until they will be there.
 */
const TAKE_SCRIPT = `
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
  at = now
end
local count = tonumber(ARGV[4]) or 1
local wait = 0
if tokens >= count then
  tokens = tokens - count
else
  wait = math.ceil((count - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
`;

/**
 * KEYS[1]: the agent's open streams. ARGV: this stream's member, the most places, the lease in ms.
 * Returns {1, open} when a place was taken (open counts it), else {0, open}.
 */
const HOLD_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local open = redis.call('ZCARD', KEYS[1])
if open >= tonumber(ARGV[2]) and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {0, open} end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, redis.call('ZCARD', KEYS[1])}
`;

/** A stream's lease; renewed every third of it while the stream is open. */
export const WAKE_STREAM_LEASE_MS = 30_000;

/**
 * While Redis does not answer, how often a ping (off every request's path) looks whether it is back: at most this often
 * (a Redis down refuses each at once), and at once after one that waited at least as long (a stalled Redis).
 */
const OUTAGE_PROBE_MS = 250;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    mailboxTakeToken(key: string, perSecond: string, burst: string, nowMs: string, count: string): Result<number, Context>;
    mailboxHoldStream(key: string, member: string, max: string, leaseMs: string): Result<[number, number], Context>;
  }
}

export class RedisSharedLimits implements SharedLimits {
  /** Names this node's streams in the shared sets. */
  private readonly node = randomUUID();
  private streams = 0;
  private readonly renewals = new Set<NodeJS.Timeout>();
  /**
   * The failure of the last call while Redis does not answer, until a ping answers again. Meanwhile every call fails
   * at once with it (the caller limits on its own): a stalled Redis (SIGSTOP, a frozen VM) would otherwise hold
   * each request for a whole MAILBOX_REDIS_TIMEOUT_MS here before its own Redis call waited as long again.
   */
  private outage: Error | null = null;
  private readonly closing = new AbortController();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
    private readonly leaseMs = WAKE_STREAM_LEASE_MS,
    /** Milliseconds for the token buckets; unset: Redis's own clock (tests inject one). */
    private readonly clock: (() => number) | null = null,
  ) {
    client.defineCommand('mailboxTakeToken', { lua: TAKE_SCRIPT, numberOfKeys: 1 });
    client.defineCommand('mailboxHoldStream', { lua: HOLD_SCRIPT, numberOfKeys: 1 });
  }

  async holdWakeStream(identity: string, max: number): Promise<WakeStreamHold> {
    const key = this.keys.wakeStreams(identity);
    const member = `${this.node}:${++this.streams}`;
    const hold = () =>
      redisCall('Redis wake stream places', () => this.client.mailboxHoldStream(key, member, String(max), String(this.leaseMs)));
    const [held, open] = await this.unlessOut(hold);
    if (held !== 1) return { held: false, open };
    // Renewed past the cap on purpose: a stream that is open stays counted (a renewal Redis missed is retried next time).
    const renewal = setInterval(() => void hold().catch(() => undefined), this.leaseMs / 3);
    renewal.unref();
    this.renewals.add(renewal);
    return {
      held: true,
      release: async () => {
        clearInterval(renewal);
        this.renewals.delete(renewal);
        await redisCall('Redis wake stream places', () => this.client.zrem(key, member));
      },
    };
  }

  /**
   * The outage while it is Redis not answering (a deadline passed, the connection lost), else null: a Redis that
   * answers with a refusal (OOM: full, writes refused) still answers reads.
   */
  get silence(): Error | null {
    const cause = (this.outage as { cause?: unknown } | null)?.cause;
    return this.outage !== null && (cause as Error | undefined)?.name !== 'ReplyError' ? this.outage : null;
  }

  take(key: string, perSecond: number, burst: number, count = 1): Promise<number> {
    return this.unlessOut(() =>
      redisCall('Redis rate limit', () =>
        this.client.mailboxTakeToken(
          this.keys.rateBucket(key),
          String(perSecond),
          String(burst),
          this.clock === null ? '' : String(this.clock()),
          String(count),
        ),
      ),
    );
  }

  /** Runs `call`, unless Redis is known not to answer; a call Redis does not answer starts such an outage. */
  private async unlessOut<T>(call: () => Promise<T>): Promise<T> {
    if (this.outage !== null) throw this.outage;
    const started = performance.now();
    try {
      return await call();
    } catch (error) {
      if (isMailboxError(error) && error.code === 'UNAVAILABLE' && this.outage === null) {
        this.outage = error;
        void this.probeUntilBack(performance.now() - started);
      }
      throw error;
    }
  }

  /**
   * Pings until Redis answers, then ends the outage. A call or ping that waited out its deadline (a stalled Redis:
   * SIGSTOP, a frozen VM) is followed by the next ping at once, so one is always waiting when Redis answers again and
   * the outage ends with that answer: a pause of 250 ms after each such ping kept every read refused for up to that long
   * after Redis answered. One refused sooner (Redis down, or answering with a refusal) waits the rest of OUTAGE_PROBE_MS.
   */
  private async probeUntilBack(waitedMs: number): Promise<void> {
    for (let waited = waitedMs; !this.closing.signal.aborted;) {
      if (waited < OUTAGE_PROBE_MS) await sleep(OUTAGE_PROBE_MS - waited, this.closing.signal);
      const started = performance.now();
      try {
        await redisCall('Redis ping', () => this.client.ping());
        break;
      } catch {
        waited = performance.now() - started; // still out: look again
      }
    }
    this.outage = null;
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const renewal of this.renewals) clearInterval(renewal);
    this.renewals.clear();
    await closeRedis(this.client);
  }
}
