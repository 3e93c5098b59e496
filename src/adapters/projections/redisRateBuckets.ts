/**
 * The per-agent token buckets in Redis: one small script per request, on the agent's hash tag
 * (so a Cluster keeps each bucket on one node), timed by Redis's own clock so that every API
 * node refills the same bucket at the same pace. Key: `<ns>:rate:{@b}` (expires once full again).
 */
import type { Result } from 'ioredis';
import type { RateBuckets } from '../../application/rateBuckets';
import { redisCall, type RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

/**
 * KEYS[1]: the bucket (hash: tokens, at). ARGV: tokens per second, burst.
 * Returns 0 when a token was taken, else the milliseconds until one will be there.
 */
const TAKE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or burst
local at = tonumber(stored[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
  at = now
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    mailboxTakeToken(key: string, perSecond: string, burst: string): Result<number, Context>;
  }
}

export class RedisRateBuckets implements RateBuckets {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    client.defineCommand('mailboxTakeToken', { lua: TAKE_SCRIPT, numberOfKeys: 1 });
  }

  take(key: string, perSecond: number, burst: number): Promise<number> {
    return redisCall('Redis rate limit', () =>
      this.client.mailboxTakeToken(this.keys.rateBucket(key), String(perSecond), String(burst)),
    );
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
