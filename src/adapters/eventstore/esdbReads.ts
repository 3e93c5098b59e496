/** How the EventStoreDB adapter runs a read: a deadline on progress, and one more try after a connection reset. */
import { retry } from '../../support/retry';
import { DeadlineExceeded, isConnectionReset, isStreamNotFound, translateError } from './esdbErrors';

/**
 * Drains a read. The deadline is on progress, not on the whole read: the
 * timer is re-armed by every event, so a long catch-up is fine and a silent
 * server is not; on expiry `stop` cancels the call.
 */
export function drainWithProgressDeadline<E>(
  read: AsyncIterable<E>,
  deadlineMs: number,
  what: string,
  stop: () => Promise<void>,
): Promise<E[]> {
  const events: E[] = [];
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      stop().catch(() => undefined);
      reject(new DeadlineExceeded(what, deadlineMs));
    }, deadlineMs);
  });
  const drained = (async () => {
    for await (const event of read) {
      events.push(event);
      timer?.refresh();
    }
    return events;
  })();
  return Promise.race([drained, stalled]).finally(() => clearTimeout(timer));
}

/**
 * Runs a read, once more if the connection was reset under it: after a server
 * restart or failover the client's first call can fail on the dead channel
 * while the server is already back (reads are idempotent, so a second try is
 * safe). A server that is really down fails the second try at once; a silent
 * one has already used up the deadline and is not retried. Errors leave
 * translated (UNAVAILABLE), except StreamNotFound, which the caller turns into [].
 */
export async function readRetryingReset<T>(
  read: () => Promise<T>,
  translate: (error: unknown) => Error = translateError,
): Promise<T> {
  try {
    return await retry(read, {
      attempts: 2,
      backoff: AT_ONCE,
      retryable: (error) => !isStreamNotFound(error) && isConnectionReset(error),
    });
  } catch (error) {
    throw isStreamNotFound(error) ? error : translate(error);
  }
}

/** The server is already back when the reset shows: the second try needs no wait. */
const AT_ONCE = { initialDelayMs: 0, maxDelayMs: 0 };
