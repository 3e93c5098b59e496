/**
 * The log of this node's fallback from the limits shared by the API nodes (Redis) to its own: one warning when the
 * shared limits stop answering, saying what this node limits how meanwhile, and one line when they answer again;
 * never one per request (a stalled Redis met by every request would flood the log for as long as it lasts).
 */
import type { Logger } from 'pino';
import type { SharedLimitsObserver } from '../../application/sharedLimits';
import { outageFields } from '../../support/storeOutage';

export interface FallbackLimits {
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  maxWakeStreamsPerAgent: number;
}

export class SharedLimitsFallback implements SharedLimitsObserver {
  /** When the fallback started (ms of `now`), or null while the shared limits answer. */
  private since: number | null = null;
  /** Requests and stream opens limited by this node alone since then. */
  private local = 0;

  constructor(
    private readonly logger: Logger,
    private readonly limits: FallbackLimits,
    private readonly now: () => number = () => performance.now(),
  ) {}

  unavailable(error: unknown): void {
    this.local += 1;
    if (this.since !== null) return;
    this.since = this.now();
    this.local = 1;
    const { rateLimitPerSecond: perSecond, rateLimitBurst: burst, maxWakeStreamsPerAgent: streams } = this.limits;
    const rate = perSecond > 0 ? `${perSecond} requests/s (burst ${burst})` : 'no request rate (the rate limit is off)';
    this.logger.warn(
      // Redis not answering is said by its reason, without a stack (as every loop says a store outage); anything else
      // keeps its error.
      { ...(outageFields(error) ?? { err: error }), limitPerSecond: perSecond, burst, maxWakeStreamsPerAgent: streams },
      `shared limits unavailable (Redis did not answer them): until they answer again, this node limits each agent ` +
        `on its own, ${rate} and ${streams} open wake streams on this node alone, so each API node allows that much; ` +
        `logged once, with a line when they are back`,
    );
  }

  answered(): void {
    if (this.since === null) return;
    const seconds = Math.round((this.now() - this.since) / 100) / 10;
    this.logger.info(
      { unavailableSeconds: seconds, limitedLocally: this.local },
      `shared limits back: the rate limit and the wake stream count are shared by the API nodes again, after ` +
        `${seconds} s in which this node limited ${this.local} requests and stream opens on its own`,
    );
    this.since = null;
    this.local = 0;
  }
}
