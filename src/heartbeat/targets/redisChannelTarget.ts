/** Publishes nudges on the Redis channel `mailbox:heartbeat:<identity>` (ioredis). */
import type * as IORedis from 'ioredis';
import type { Nudge } from '../nudgeDecider';
import type { DeliveryStatus, NudgeTarget } from '../nudgeTarget';

export const heartbeatChannel = (identity: string): string => `mailbox:heartbeat:${identity}`;

/** Publishes on a Redis the caller connected (the mailbox's own, from its configuration: any topology, credentials). */
export interface NudgePublisher {
  /** How many subscribers received it. */
  publish(channel: string, message: string): Promise<number>;
  close(): Promise<void>;
}

export class RedisChannelTarget implements NudgeTarget {
  readonly name = 'redis';
  private readonly redis: NudgePublisher;

  /** A redis:// URL (--redis-url / MAILBOX_HEARTBEAT_REDIS_URL), or a publisher on the mailbox's Redis. */
  constructor(source: string | NudgePublisher) {
    this.redis = typeof source === 'string' ? connectUrl(source) : source;
  }

  appliesTo(): boolean {
    return true;
  }

  async deliver(nudge: Nudge): Promise<DeliveryStatus> {
    let receivers: number;
    try {
      receivers = await this.redis.publish(heartbeatChannel(nudge.identity), JSON.stringify(nudge));
    } catch (error) {
      throw new Error(`Redis publish to ${heartbeatChannel(nudge.identity)} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return receivers > 0 ? 'delivered' : 'unheard';
  }

  async close(): Promise<void> {
    await this.redis.close();
  }
}

function connectUrl(url: string): NudgePublisher {
  // While Redis is down a publish fails after one reconnect attempt instead of queueing nudges without bound.
  // ioredis loaded here, at the connection: a heartbeat without --redis-url never loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis } = require('ioredis') as typeof IORedis;
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000 });
  redis.on('error', () => {
    // Connection errors surface as rejected publishes, which the dispatcher logs per nudge.
  });
  return {
    publish: (channel, message) => redis.publish(channel, message),
    close: async () => {
      if (redis.status === 'end') return;
      await redis.quit().catch(() => undefined);
      redis.disconnect(); // through Sentinel, QUIT alone leaves the sentinel subscriptions open
    },
  };
}
