/** Reads `load` now and every `everyMs` while the panel is shown; keeps the last answer and the last error. */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from './api';

export function usePolling<T>(load: () => Promise<T>, everyMs: number, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const run = () =>
      load().then(
        (value) => live && (setData(value), setError(null)),
        (failure: unknown) => live && setError(errorText(failure)),
      );
    void run();
    const timer = setInterval(() => void run(), everyMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [...deps, tick]);
  return { data, error, refresh: () => setTick((n) => n + 1) };
}
