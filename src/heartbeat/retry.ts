/** Retry with exponential backoff; a PermanentFailure stops retrying at once (e.g. a webhook answering 404). */

export class PermanentFailure extends Error {
  override readonly name = 'PermanentFailure';
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface RetryHooks {
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry with the failure that caused it. */
  onRetry?: (attempt: number, error: unknown, delayMs: number) => void;
  /** A delay the failure asked for (e.g. Retry-After), overriding the backoff when larger. */
  requestedDelayMs?: (error: unknown) => number | null;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function backoffDelayMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

export async function withRetry<T>(work: (attempt: number) => Promise<T>, policy: RetryPolicy, hooks: RetryHooks = {}): Promise<T> {
  const sleep = hooks.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (error instanceof PermanentFailure || attempt >= policy.attempts) throw error;
      const requested = hooks.requestedDelayMs?.(error) ?? null;
      const delay = Math.min(policy.maxDelayMs, Math.max(backoffDelayMs(policy, attempt), requested ?? 0));
      hooks.onRetry?.(attempt, error, delay);
      await sleep(delay);
    }
  }
}
