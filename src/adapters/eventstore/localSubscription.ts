/** Catch-up + live subscription for stores in this process (memory, SQLite): page through the log, then wait for appends. */
import type { EventSubscription } from '../../events/eventStore';
import type { StoredEvent } from '../../events/types';
import type { AppendSignal } from './appendSignal';

const PAGE_SIZE = 1000;

export function localSubscription(
  readAll: (after: bigint | null, limit: number) => Promise<StoredEvent[]>,
  signal: AppendSignal,
  after: bigint | null,
  /** Also re-read this often: another process may append to the same file (SQLite). */
  pollMs?: number,
): EventSubscription {
  let closed = false;
  let checkpoint = after;
  async function* iterate(): AsyncGenerator<StoredEvent> {
    while (!closed) {
      const seen = signal.current;
      const page = await readAll(checkpoint, PAGE_SIZE);
      for (const event of page) {
        if (closed) return;
        checkpoint = event.position;
        yield event;
      }
      if (page.length === 0) await waitForAppend(signal, seen, pollMs);
    }
  }
  return {
    [Symbol.asyncIterator]: iterate,
    close: async () => {
      closed = true;
      signal.releaseAll();
    },
  };
}

function waitForAppend(signal: AppendSignal, seen: number, pollMs: number | undefined): Promise<void> {
  if (pollMs === undefined) return signal.waitForChange(seen);
  let timer: NodeJS.Timeout | undefined;
  const poll = new Promise<void>((resolve) => (timer = setTimeout(resolve, pollMs)));
  return Promise.race([signal.waitForChange(seen), poll]).finally(() => clearTimeout(timer));
}
