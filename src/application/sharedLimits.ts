/**
 * Limits shared by every API node (Redis when it is configured), so that three nodes allow an
 * agent the configured request rate and number of wake streams, not three times them. Without
 * them each process keeps its own.
 */
export interface SharedLimits {
  /**
   * Takes `count` tokens (default one) from `key`'s bucket, all or none: resolves to 0 when taken, else the
   * milliseconds until they are available.
   */
  take(key: string, perSecond: number, burst: number, count?: number): Promise<number>;
  /**
   * Holds one of `identity`'s wake-stream places (at most `max` across the nodes) until released;
   * a node that dies without releasing loses its places once their lease runs out.
   */
  holdWakeStream(identity: string, max: number): Promise<WakeStreamHold>;
  close(): Promise<void>;
}

export type WakeStreamHold = { held: true; release(): Promise<void> } | { held: false; open: number };

/**
 * Told by the users of the shared limits how each call went: `unavailable` when one failed (the caller limited on
 * its own instead), `answered` when one was answered. One outage reaches it once per request; it decides what to say.
 */
export interface SharedLimitsObserver {
  unavailable(error: unknown): void;
  answered(): void;
}

export const IGNORE_SHARED_LIMITS: SharedLimitsObserver = { unavailable: () => {}, answered: () => {} };
