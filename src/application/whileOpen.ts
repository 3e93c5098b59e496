/**
 * The library's calls once its mailbox is closed. close() shuts the stores, and a
 * call after it met whatever the store said (a driver's "The database connection
 * is not open"), or an answer from a cache that outlives the store, where the
 * library promises a MailboxError envelope. Every call of a client (and `as`) goes
 * through here: refused before it touches anything, so it writes nothing.
 */
import { isMailboxError, MailboxError } from '../errors';

/** UNAVAILABLE (503): like a store that cannot be reached, nothing was applied; unlike one, retrying here never helps. */
export function mailboxClosed(cause?: unknown): MailboxError {
  const error = new MailboxError(
    'UNAVAILABLE',
    'Mailbox closed',
    'This mailbox was closed (mailbox.close()) and takes no more calls; createMailbox opens it again ' +
      '(the call was not applied).',
  );
  if (cause !== undefined) (error as Error).cause = cause;
  return error;
}

/**
 * `run`, refused once `closed` is aborted. A call already under way when close() began and failing
 * without an envelope (its store shut under it) is refused the same way, its failure kept as the cause.
 */
export function whileOpen<A extends unknown[], R>(closed: AbortSignal, run: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    if (closed.aborted) throw mailboxClosed();
    try {
      return await run(...args);
    } catch (error) {
      if (closed.aborted && !isMailboxError(error)) throw mailboxClosed(error);
      throw error;
    }
  };
}

/** A client whose every method answers with a promise (a synchronous one could not be refused by rejecting). */
type AsyncMethods<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? (...args: never[]) => Promise<unknown> : T[K];
};

/** Every method of `client` through whileOpen, so a method added later is covered without a line of its own. */
export function everyCallWhileOpen<T extends AsyncMethods<T>>(closed: AbortSignal, client: T): T {
  return Object.fromEntries(
    Object.entries(client).map(([name, value]) => [
      name,
      typeof value === 'function' ? whileOpen(closed, value as (...args: unknown[]) => Promise<unknown>) : value,
    ]),
  ) as T;
}
