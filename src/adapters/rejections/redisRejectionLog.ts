/**
 * The rejection record in Redis: one capped stream (XADD MAXLEN ~) shared by
 * every API node of a namespace, so the console shows rejections met by any node.
 * A write that fails (Redis away) is logged, never thrown into the rejected request.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RejectionLog, RejectionRecord } from '../../application/rejectionLog';
import { unavailable } from '../../errors';

export class RedisRejectionLog implements RejectionLog {
  readonly backend = 'redis' as const;
  private readonly key: string;

  constructor(
    private readonly redis: Redis | Cluster,
    namespace: string,
    readonly capacity: number,
    private readonly logger: Logger,
  ) {
    this.key = `${namespace}:rejections`;
  }

  record(rejection: RejectionRecord): void {
    this.redis
      .xadd(this.key, 'MAXLEN', '~', String(this.capacity), '*', 'r', JSON.stringify(rejection))
      .catch((error: unknown) =>
        this.logger.warn({ err: error, code: rejection.code, agent: rejection.agent }, 'rejections: could not record in Redis'),
      );
  }

  async recent(limit: number): Promise<RejectionRecord[]> {
    // MAXLEN ~ trims in whole macro-nodes, so the stream may hold a few more than capacity: never show more.
    // Redis away: 503 UNAVAILABLE, "retry later", as every other read says it (it was a 500 "report it", with a stack).
    const entries = await this.redis
      .xrevrange(this.key, '+', '-', 'COUNT', Math.min(limit, this.capacity))
      .catch((error: unknown) => {
        throw unavailable('Redis (the rejections record)', error);
      });
    return entries.map(([, fields]) => JSON.parse(fields[fields.indexOf('r') + 1]) as RejectionRecord);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
