/**
 * The rejection record in Redis: one capped stream (XADD MAXLEN ~) shared by
 * every API node of a namespace, so the console shows rejections met by any node.
 * A write that fails (Redis away) is logged, never thrown into the rejected request: once when the writes start
 * failing, once when one lands again (with how many were not recorded meanwhile). It was a warning with a stack for
 * each one: an outage met by every request (each answered 503, itself a rejection) flooded the log as long as it lasted.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RejectionLog, RejectionRecord } from '../../application/rejectionLog';
import { unavailable } from '../../errors';
import { outageFields } from '../../support/storeOutage';

export class RedisRejectionLog implements RejectionLog {
  readonly backend = 'redis' as const;
  private readonly key: string;
  /** Since when writes fail (ms of `now`) and how many were not recorded; null while they land. */
  private failing: { since: number; unrecorded: number } | null = null;

  constructor(
    private readonly redis: Redis | Cluster,
    namespace: string,
    readonly capacity: number,
    private readonly logger: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.key = `${namespace}:rejections`;
  }

  record(rejection: RejectionRecord): void {
    this.redis.xadd(this.key, 'MAXLEN', '~', String(this.capacity), '*', 'r', JSON.stringify(rejection)).then(
      () => this.recorded(),
      (error: unknown) => this.notRecorded(error, rejection),
    );
  }

  private notRecorded(error: unknown, rejection: RejectionRecord): void {
    if (this.failing !== null) {
      this.failing.unrecorded += 1;
      return;
    }
    this.failing = { since: this.now(), unrecorded: 1 };
    // Redis not answering (no connection, no answer in time: never a reply) is said by its reason, without a stack;
    // a reply of any kind keeps its error.
    const notAnswered = error instanceof Error && error.name !== 'ReplyError';
    this.logger.warn(
      {
        ...((notAnswered ? outageFields(unavailable('Redis (the rejections record)', error)) : null) ?? { err: error }),
        code: rejection.code,
        agent: rejection.agent,
      },
      'rejections: could not record in Redis; until it answers again the rejections met are not recorded there ' +
        '(GET /v1/audit/rejections and the console miss them): logged once, with a line when they are recorded again',
    );
  }

  private recorded(): void {
    const failing = this.failing;
    if (failing === null) return;
    this.failing = null;
    const seconds = Math.round((this.now() - failing.since) / 100) / 10;
    this.logger.info(
      { unavailableSeconds: seconds, unrecorded: failing.unrecorded },
      `rejections: recorded in Redis again, after ${seconds} s in which ${failing.unrecorded} were not recorded`,
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
