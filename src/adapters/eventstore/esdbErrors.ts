/**
 * EventStoreDB errors translated where they are met: a wrong expected version
 * is the domain's ConcurrencyConflict; a missing stream is handled by the
 * reader (an empty stream); everything else (server down, deadline passed,
 * connection reset, not leader, access denied, ...) is UNAVAILABLE, 503, and
 * never swallowed. Errors are recognised by the client's `type` tag, which
 * both client generations share, not by class identity.
 */
import { ConcurrencyConflict, MailboxError, unavailable } from '../../errors';
import { describeExpected, type ExpectedRevision } from '../../events/eventStore';

const WHAT = 'The event store (EventStoreDB)';

interface TaggedError {
  type?: string;
  actualVersion?: bigint | string;
  message?: string;
}

export const isStreamNotFound = (error: unknown): boolean => (error as TaggedError | null)?.type === 'stream-not-found';

/** The connection failed or was cancelled under the call (not a deadline: that one already took its time). */
export function isConnectionReset(error: unknown): boolean {
  const { type, code } = (error ?? {}) as TaggedError & { code?: unknown };
  // The client tags most transport errors; some arrive as raw gRPC errors (14 UNAVAILABLE, 1 CANCELLED).
  return type === 'unavailable' || type === 'cancelled' || (type === undefined && (code === 14 || code === 1));
}

export function translateAppendError(error: unknown, streamName: string, expected: ExpectedRevision): Error {
  const tagged = error as TaggedError | null;
  if (tagged?.type === 'wrong-expected-version') {
    // actualVersion is the string 'no_stream' when the stream does not exist: never BigInt() it blindly.
    const actual =
      typeof tagged.actualVersion === 'bigint' ? tagged.actualVersion.toString() : String(tagged.actualVersion ?? 'unknown');
    return new ConcurrencyConflict(streamName, describeExpected(expected), actual);
  }
  return translateError(error);
}

export function translateError(error: unknown): Error {
  if (error instanceof MailboxError || error instanceof ConcurrencyConflict) return error;
  const tagged = error as TaggedError | null;
  const detail = tagged?.type ? `${tagged.type}: ${tagged.message ?? ''}` : (error as Error)?.message;
  return unavailable(WHAT, new Error(detail || String(error)));
}

export class DeadlineExceeded extends Error {
  constructor(what: string, ms: number) {
    super(`${what} got no answer within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * Rejects with DeadlineExceeded if `work` has not settled within `ms`. The
 * client's own deadline does not cover everything (BatchAppend and reads run
 * without one), so the adapter enforces its own; `onTimeout` releases the call.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new DeadlineExceeded(what, ms));
    }, ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
