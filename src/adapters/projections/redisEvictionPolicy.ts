/**
 * Whether the Redis the views live in may evict keys. With a memory limit and any policy but `noeviction`, Redis
 * drops keys when it is full: an inbox entry, a counter, a checkpoint, a lease. The mailbox cannot tell a key
 * evicted from one never written, so it would serve what is left as whole views (counts short, messages missing) and
 * a lease evicted would let two nodes project at once. With `noeviction` a full Redis refuses writes instead, which
 * the mailbox reports (503 UNAVAILABLE, /readyz) and recovers from once there is room. Redis's own default is
 * `noeviction`; managed services often set `volatile-lru` or `allkeys-lru`. (The same check BullMQ and Sidekiq make.)
 */
import type { RedisClient } from './redisConnection';

export interface EvictionRisk {
  policy: string;
  maxmemoryBytes: number;
}

/**
 * The policy and the limit when Redis may evict keys, else null (noeviction, or no memory limit). Null too when INFO
 * is not allowed (an ACL without it): the check is advice, never a reason not to start.
 */
export async function evictionRisk(client: RedisClient): Promise<EvictionRisk | null> {
  let info: string;
  try {
    info = await client.info('memory');
  } catch {
    return null;
  }
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim() ?? null;
  const policy = field('maxmemory_policy');
  const maxmemoryBytes = Number(field('maxmemory') ?? '0');
  if (policy === null || policy === 'noeviction' || !(maxmemoryBytes > 0)) return null;
  return { policy, maxmemoryBytes };
}

/** The warning's words: what may happen, and the setting that prevents it. */
export function evictionWarning({ policy, maxmemoryBytes }: EvictionRisk): string {
  const mb = Math.round(maxmemoryBytes / (1024 * 1024));
  return (
    `Redis may evict the mailbox's keys: maxmemory-policy is ${policy} with maxmemory ${mb} MB, so when Redis is full ` +
    'it drops keys (inbox entries, counts, checkpoints, leases) and the mailbox would serve what is left as if whole. ' +
    'Set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction; on a managed Redis, its ' +
    'parameter group): a full Redis then refuses writes, which the mailbox reports as unavailable until there is room'
  );
}
