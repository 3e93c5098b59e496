/**
 * Reads `load` now and every `everyMs` while the panel is shown; keeps the last answer, when it came, and the last
 * error. A panel must not show the last answer as current once a read has failed: `current` says whether it is.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from './api';

export interface Polled<T> {
  /** The last answer, or null before the first. */
  data: T | null;
  /** When the last answer came (ms since the epoch), or null before the first. */
  at: number | null;
  /** Why the newest read failed, or null when it succeeded (or none has ended yet). */
  error: string | null;
  /** True when `data` is the newest read's answer: there is one and no read has failed since. */
  current: boolean;
  refresh(): void;
}

export function usePolling<T>(load: () => Promise<T>, everyMs: number, deps: unknown[] = []): Polled<T> {
  const [answer, setAnswer] = useState<{ data: T; at: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const run = () =>
      load().then(
        (value) => live && (setAnswer({ data: value, at: Date.now() }), setError(null)),
        (failure: unknown) => live && setError(errorText(failure)),
      );
    void run();
    const timer = setInterval(() => void run(), everyMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [...deps, tick]);
  return {
    data: answer?.data ?? null,
    at: answer?.at ?? null,
    error,
    current: answer !== null && error === null,
    refresh: () => setTick((n) => n + 1),
  };
}
