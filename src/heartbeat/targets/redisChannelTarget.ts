/** Publishes nudges on the Redis channel `mailbox:heartbeat:<identity>` (ioredis). */
import Redis from 'ioredis';
import type { Nudge } from '../nudgeDecider';
import type { DeliveryStatus, NudgeTarget } from '../nudgeTarget';

export const heartbeatChannel = (identity: string): string => `mailbox:heartbeat:${identity}`;

export class RedisChannelTarget implements NudgeTarget {
  readonly name = 'redis';
  private readonly redis: Redis;

  constructor(url: string) {
    // While Redis is down a publish fails after one reconnect attempt instead of queueing nudges without bound.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000 });
    this.redis.on('error', () => {
      // Connection errors surface as rejected publishes, which the dispatcher logs per nudge.
    });
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
    if (this.redis.status === 'end') return;
    await this.redis.quit().catch(() => undefined);
    this.redis.disconnect(); // through Sentinel, QUIT alone leaves the sentinel subscriptions open
  }
}
