/**
 * The one retry helper on a fake clock: time only moves when the test moves it,
 * so delays are asserted exactly and no test waits for real.
 */
import { backoffDelay, retry, sleep, type Sleep } from '../../src/support/retry';

/** A clock whose sleeps end only when the test advances it past their deadline. */
function fakeClock() {
  let now = 0;
  const sleepers: Array<{ until: number; resolve: () => void }> = [];
  const slept: number[] = [];
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve) => {
      slept.push(ms);
      const sleeper = { until: now + ms, resolve };
      sleepers.push(sleeper);
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  return {
    sleep,
    slept,
    get now() {
      return now;
    },
    get waiting() {
      return sleepers.length;
    },
    /** Moves time on and wakes every sleeper due by then. */
    advance(ms: number) {
      now += ms;
      for (const sleeper of sleepers.filter((s) => s.until <= now)) {
        sleepers.splice(sleepers.indexOf(sleeper), 1);
        sleeper.resolve();
      }
    },
  };
}

/** Resolves once the fake clock has a sleeper (the retry is waiting): the positive signal before time moves. */
async function untilWaiting(clock: ReturnType<typeof fakeClock>, count = 1): Promise<void> {
  while (clock.waiting < count) await new Promise((resolve) => setImmediate(resolve));
}

/** A piece of work that fails `failures` times, then answers. */
function flaky(failures: number, error: (n: number) => Error = (n) => new Error(`failure ${n}`)) {
  const calls: number[] = [];
  return {
    calls,
    work: async (attempt: number) => {
      calls.push(attempt);
      if (calls.length <= failures) throw error(calls.length);
      return `ok after ${calls.length}`;
    },
  };
}

describe('backoffDelay', () => {
  test('doubles from the initial delay and never passes the cap', () => {
    const backoff = { initialDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(backoff, attempt))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  test('full jitter spreads a delay over (0, backoff]; no jitter is exact', () => {
    const backoff = { initialDelayMs: 100, maxDelayMs: 1000, jitter: 1 };
    expect(backoffDelay(backoff, 3, () => 0)).toBe(400);
    expect(backoffDelay(backoff, 3, () => 0.75)).toBe(100);
    expect(backoffDelay({ ...backoff, jitter: 0.5 }, 3, () => 0.5)).toBe(300);
    expect(backoffDelay({ ...backoff, jitter: 0 }, 3, () => 0.99)).toBe(400);
  });
});

describe('retry', () => {
  test('retries after each failure with the backoff on the clock, then returns the answer', async () => {
    const clock = fakeClock();
    const { calls, work } = flaky(3);
    const retries: Array<[number, string, number]> = [];
    const result = retry(work, {
      attempts: 5,
      backoff: { initialDelayMs: 50, maxDelayMs: 150 },
      sleep: clock.sleep,
      onRetry: (attempt, error, delayMs) => retries.push([attempt, (error as Error).message, delayMs]),
    });
    for (const delay of [50, 100, 150]) {
      await untilWaiting(clock);
      clock.advance(delay - 1);
      expect(clock.waiting).toBe(1); // not a millisecond early
      clock.advance(1);
    }
    await expect(result).resolves.toBe('ok after 4');
    expect(calls).toEqual([1, 2, 3, 4]);
    expect(clock.slept).toEqual([50, 100, 150]);
    expect(retries).toEqual([
      [1, 'failure 1', 50],
      [2, 'failure 2', 100],
      [3, 'failure 3', 150],
    ]);
  });

  test('throws the last failure once the attempts are used up', async () => {
    const clock = fakeClock();
    const { calls, work } = flaky(10);
    const result = retry(work, { attempts: 3, backoff: { initialDelayMs: 10, maxDelayMs: 10 }, sleep: clock.sleep });
    const settled = result.catch((error: Error) => error);
    for (let i = 0; i < 2; i++) {
      await untilWaiting(clock);
      clock.advance(10);
    }
    expect(((await settled) as Error).message).toBe('failure 3');
    expect(calls).toEqual([1, 2, 3]);
  });

  test('a failure that is not retryable is thrown at once, without waiting', async () => {
    const clock = fakeClock();
    const { calls, work } = flaky(1, () => Object.assign(new Error('404'), { permanent: true }));
    await expect(
      retry(work, {
        attempts: 5,
        backoff: { initialDelayMs: 10, maxDelayMs: 10 },
        sleep: clock.sleep,
        retryable: (error) => !(error as { permanent?: boolean }).permanent,
      }),
    ).rejects.toThrow('404');
    expect(calls).toEqual([1]);
    expect(clock.slept).toEqual([]);
  });

  test('a delay the failure asks for (Retry-After) is waited when longer than the backoff, but never past the cap', async () => {
    const clock = fakeClock();
    const asks = [300, 5000];
    const { work } = flaky(2, (n) => Object.assign(new Error('busy'), { retryAfterMs: asks[n - 1] }));
    const result = retry(work, {
      attempts: 3,
      backoff: { initialDelayMs: 100, maxDelayMs: 1000 },
      sleep: clock.sleep,
      requestedDelayMs: (error) => (error as { retryAfterMs?: number }).retryAfterMs ?? null,
    });
    await untilWaiting(clock);
    clock.advance(300);
    await untilWaiting(clock);
    clock.advance(1000);
    await expect(result).resolves.toBe('ok after 3');
    expect(clock.slept).toEqual([300, 1000]);
  });

  test('jitter comes from the injected randomness', async () => {
    const clock = fakeClock();
    const { work } = flaky(2);
    const result = retry(work, {
      attempts: 3,
      backoff: { initialDelayMs: 100, maxDelayMs: 1000, jitter: 1 },
      sleep: clock.sleep,
      random: () => 0.5,
    });
    await untilWaiting(clock);
    clock.advance(50);
    await untilWaiting(clock);
    clock.advance(100);
    await expect(result).resolves.toBe('ok after 3');
    expect(clock.slept).toEqual([50, 100]);
  });

  test('aborting ends the pending wait and rejects with the reason; the work is not called again', async () => {
    const clock = fakeClock();
    const { calls, work } = flaky(10);
    const abort = new AbortController();
    const result = retry(work, {
      attempts: Infinity,
      backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
      sleep: clock.sleep,
      signal: abort.signal,
    });
    await untilWaiting(clock);
    abort.abort(new Error('shutting down'));
    await expect(result).rejects.toThrow('shutting down');
    expect(calls).toEqual([1]);
    expect(clock.now).toBe(0);
  });

  test('an already aborted signal calls nothing', async () => {
    const { calls, work } = flaky(0);
    const abort = new AbortController();
    abort.abort(new Error('gone'));
    await expect(
      retry(work, { attempts: 3, backoff: { initialDelayMs: 1, maxDelayMs: 1 }, signal: abort.signal }),
    ).rejects.toThrow('gone');
    expect(calls).toEqual([]);
  });
});

describe('sleep', () => {
  test('ends at once when its signal aborts (a shutdown is never held up by a backoff)', async () => {
    const abort = new AbortController();
    let ended = false;
    const pending = sleep(60_000, abort.signal).then(() => {
      ended = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    abort.abort();
    await pending;
    expect(ended).toBe(true);
  });
});
