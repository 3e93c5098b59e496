/**
 * The one retry helper: exponential backoff with a cap and jitter, abortable,
 * with the sleep and the randomness injectable so that tests run on a fake
 * clock (no real waiting). Every layer but events may use it; loops that are
 * not "call until it works" (a resubscribing stream, a reconnecting watcher)
 * use its parts, backoffDelay and sleep.
 */

export interface Backoff {
  /** Delay before the first retry (attempt 1), in ms; doubles for each further attempt. */
  initialDelayMs: number;
  /** No delay is ever longer than this. */
  maxDelayMs: number;
  /**
   * How much of each delay is random, 0..1: 0 waits exactly the backoff; 1 waits anywhere in (0, backoff]
   * ("full jitter", which spreads out callers that failed together). Default 0.
   */
  jitter?: number;
}

/** Waits `ms`; resolves early (never rejects) when `signal` aborts, so a caller shutting down is not held up. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** The delay before retry number `attempt` (1 = after the first failure). `random` returns [0, 1). */
export function backoffDelay(backoff: Backoff, attempt: number, random: () => number = Math.random): number {
  const exponential = Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  const jitter = Math.min(1, Math.max(0, backoff.jitter ?? 0));
  return exponential * (1 - jitter * random());
}

export interface RetryOptions {
  /** Most calls in all, the first included (Infinity: until it works or the signal aborts). */
  attempts: number;
  backoff: Backoff;
  /** Whether a failure is worth another call; false throws it at once. Default: every failure. */
  retryable?: (error: unknown, attempt: number) => boolean;
  /** A delay the failure asked for (e.g. Retry-After): waited when longer than the backoff, still capped. */
  requestedDelayMs?: (error: unknown) => number | null;
  /** Told before each wait, with the failure that caused it. */
  onRetry?: (attempt: number, error: unknown, delayMs: number) => void;
  /** Aborting stops retrying: the pending wait ends and the call rejects with the signal's reason. */
  signal?: AbortSignal;
  sleep?: Sleep;
  random?: () => number;
}

/** Calls `work` until it succeeds, a failure is not retryable, the attempts are used up (last failure thrown) or the signal aborts. */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const wait = options.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await work(attempt);
    } catch (error) {
      if (attempt >= options.attempts || !(options.retryable?.(error, attempt) ?? true)) throw error;
      const requested = options.requestedDelayMs?.(error) ?? 0;
      const delay = Math.min(
        options.backoff.maxDelayMs,
        Math.max(backoffDelay(options.backoff, attempt, options.random), requested),
      );
      options.onRetry?.(attempt, error, delay);
      await wait(delay, options.signal);
    }
  }
}
