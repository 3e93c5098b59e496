/**
 * EventStoreDB errors translated where they are met: a wrong expected version
 * is the domain's ConcurrencyConflict; a missing stream is handled by the
 * reader (an empty stream); everything else (server down, deadline passed,
 * connection reset, not leader, ...) is UNAVAILABLE, 503, and never swallowed;
 * access denied and a tombstoned stream are too, as operator action needed
 * (no Retry-After: no retry mends them). Errors are recognised by the client's `type` tag, which
 * both client generations share, not by class identity.
 */
import { ConcurrencyConflict, MailboxError, operatorNeeded, unavailable } from '../../errors';
import { describeExpected, type ExpectedRevision } from '../../events/eventStore';

const WHAT = 'The event store (EventStoreDB)';

interface TaggedError {
  type?: string;
  actualVersion?: bigint | string;
  message?: string;
}

export const isStreamNotFound = (error: unknown): boolean => (error as TaggedError | null)?.type === 'stream-not-found';

/** The node's answer for a deleted stream: tombstoned, or (to a write expecting it to exist) soft-deleted. */
export const isStreamDeleted = (error: unknown): boolean => (error as TaggedError | null)?.type === 'stream-deleted';

/** The connection failed or was cancelled under the call (not a deadline: that one already took its time). */
export function isConnectionReset(error: unknown): boolean {
  const { type, code } = (error ?? {}) as TaggedError & { code?: unknown };
  // The client tags most transport errors; some arrive as raw gRPC errors (14 UNAVAILABLE, 1 CANCELLED).
  return type === 'unavailable' || type === 'cancelled' || (type === undefined && (code === 14 || code === 1));
}

export function translateAppendError(error: unknown, streamName: string, expected: ExpectedRevision | 'stream_exists'): Error {
  const tagged = error as TaggedError | null;
  if (tagged?.type === 'wrong-expected-version') {
    // actualVersion is the string 'no_stream' when the stream does not exist: never BigInt() it blindly.
    const actual =
      typeof tagged.actualVersion === 'bigint' ? tagged.actualVersion.toString() : String(tagged.actualVersion ?? 'unknown');
    return new ConcurrencyConflict(streamName, expected === 'stream_exists' ? expected : describeExpected(expected), actual);
  }
  return translateError(error);
}

export function translateError(error: unknown): Error {
  if (error instanceof MailboxError || error instanceof ConcurrencyConflict) return error;
  const tagged = error as TaggedError | null;
  const detail = tagged?.type ? `${tagged.type}: ${tagged.message ?? ''}` : (error as Error)?.message;
  // No retry mends these two: said as 503 "retry later" with Retry-After, a client and a model retried forever.
  if (tagged?.type === 'access-denied')
    return operatorNeeded(
      `${WHAT} refused the mailbox access (${oneLine(detail)}); the request was not applied.`,
      'Check the user and password in MAILBOX_EVENTSTORE_URL, and that this user may read and write the mailbox ' +
        "streams and read $all (the node's access lists); then restart the mailbox.",
    );
  if (tagged?.type === 'stream-deleted')
    return operatorNeeded(
      `${WHAT} holds a mailbox stream that was deleted for good (tombstoned) under the mailbox ` +
        `(${oneLine(detail)}); the request was not applied.`,
      'A stream of the mailbox was deleted in EventStoreDB: restore the event log from a backup. Nothing the mailbox ' +
        'writes can bring a tombstoned stream back.',
    );
  return unavailable(WHAT, new Error(detail || String(error)));
}

/** Revisions from this one up are EventStoreDB's "every event" (a soft delete's truncation: long.MaxValue). */
const EVERY_EVENT = 1n << 62n;

/**
 * Events of a mailbox stream deleted under the mailbox (EventStoreDB's soft delete: the stream reads as not found, or,
 * once written to again, from that write's revision on): messages, receipts or registrations that were acknowledged
 * and are no longer in their stream. Answered 404 or decided on as if they had never been, they were lost in silence;
 * nothing is written to such a stream (a write would hide the earlier events for good), and only an operator mends it.
 * `readableFrom`: the first revision still readable (or every event hidden); `askedFrom`: the revision the read
 * started at (null: a read that found no stream at all).
 */
export function streamEventsGone(streamName: string, readableFrom: bigint, askedFrom: bigint | null): MailboxError {
  const what =
    readableFrom >= EVERY_EVENT
      ? `holds mailbox stream ${streamName} deleted under the mailbox (a soft delete: its stream metadata $$${streamName} ` +
        'hides every event of it)'
      : `holds mailbox stream ${streamName} with its events before revision ${readableFrom} deleted under the mailbox ` +
        `(a soft delete, then a write to it: its stream metadata $$${streamName} hides them; a read from revision ` +
        `${askedFrom ?? 0} found revision ${readableFrom} first)`;
  return operatorNeeded(
    `${WHAT} ${what}: what the mailbox acknowledged there is no longer readable; the request was not applied.`,
    'A stream of the mailbox was deleted in EventStoreDB (soft delete): restore the event log from a backup (a scavenge ' +
      'removes the deleted events for good). Until then requests on that stream are refused; nothing is written to it.',
    { stream: streamName },
  );
}

/**
 * A write the node took on a mailbox stream that had been soft-deleted under the mailbox (found only from the write's
 * own result, a race with the delete: the look before it found nothing deleted): the write undeleted the stream from
 * `fromRevision`, and its events before that stay hidden for good. Said as what it is, never passed as a success.
 */
export function streamUndeletedByWrite(streamName: string, fromRevision: bigint): MailboxError {
  return operatorNeeded(
    `${WHAT} held mailbox stream ${streamName} deleted under the mailbox (a soft delete) when this write reached it: ` +
      `the node took the write and made the stream readable again from revision ${fromRevision} on, its stream ` +
      `metadata $$${streamName} hiding the events before it, which the mailbox had acknowledged. The write's own events ` +
      'are stored; what came before them is no longer readable.',
    'A stream of the mailbox was deleted in EventStoreDB (soft delete): restore the event log from a backup (a scavenge ' +
      'removes the deleted events for good). Until then requests on that stream are refused.',
    { stream: streamName },
  );
}

/** gRPC's code for a call whose credentials were refused (a wrong user or password); a right refused is PERMISSION_DENIED. */
const GRPC_UNAUTHENTICATED = 16;

/**
 * A read of $all (a one-shot read or the projector's subscription) that failed. A refusal of the user's rights there
 * (its credentials were taken: it may read and write the mailbox streams) is said as what it is, naming the permission
 * and how to give it: EventStoreDB lets only $admins read $all by default, so a user made for the mailbox's streams
 * passed every check on them and was refused only here, where the views, /readyz and the audit read.
 */
export function translateReadOfAllError(error: unknown): Error {
  const tagged = error as (TaggedError & { code?: unknown }) | null;
  if (tagged?.type !== 'access-denied' || tagged.code === GRPC_UNAUTHENTICATED) return translateError(error);
  return operatorNeeded(
    `${WHAT} refused the mailbox's user the right to read $all (${oneLine(`${tagged.type}: ${tagged.message ?? ''}`)}), ` +
      'the ordered log every view, /readyz and the audit are built from: the mailbox streams are not enough; ' +
      'the request was not applied.',
    "Give the user in MAILBOX_EVENTSTORE_URL read access to $all (by default only $admins may read it: name the user in the $r of $all's " +
      'access list, the stream metadata $$$all, or use a user in $admins); then restart the mailbox.',
    { missingPermission: 'read $all' },
  );
}

const oneLine = (text: string | undefined): string => (text ?? '').replace(/\s+/g, ' ').trim();

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
