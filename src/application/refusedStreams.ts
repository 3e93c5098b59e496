/**
 * A stream a background writer (the seen marks, the delivery ledger's observed wakes) keeps writing to and the event
 * store refuses for what only an operator mends (EventStoreDB: the stream deleted under the mailbox). The writer keeps
 * what it could not write, tries again, and says it once in the log; /readyz names it (status "degraded") and the
 * heartbeat's /healthz raises an alarm for it, so an operator polling them sees it too.
 */
import { isMailboxError, needsOperator, type MailboxError } from '../errors';

/**
 * How often a writer tries a refused stream again: enough to see an operator's mend within seconds, not the writer's
 * flush interval (the delivery ledger's 100 ms, the seen marks' 200 ms: an append refused five to ten times a second for
 * as long as nobody acted). Both writers wait this long by the injected clock (their flush timers only look at it).
 */
export const REFUSED_RETRY_MS = 5_000;

export interface StreamRefusal {
  /** Which writer: 'seen marks' or 'delivery ledger'. */
  writer: 'seen marks' | 'delivery ledger';
  stream: string;
  /** When the store first refused it (the injected clock). */
  since: string;
  error: string;
  operatorAction: string;
  /** Items kept for it, waiting to be written. */
  waiting: number;
  /**
   * Items for it not recorded since (its bound was full). Both writers count from when the stream last took one: the
   * items dropped before a flush saw the refusal (the delivery ledger's observations; a recipient's seen marks, under the
   * bound all recipients share) were dropped while the stream took nothing as well.
   */
  dropped: number;
}

/** The refusal only an operator mends of `stream` itself (not of the whole store, e.g. its credentials), or null. */
export function refusalOf(error: unknown, stream: string): MailboxError | null {
  return isMailboxError(error) && needsOperator(error) && error.envelope.stream === stream ? error : null;
}

/** A writer's record of `stream` refused by `refusal` since `since` (nothing dropped yet), as /readyz lists it. */
export function refusedSince(
  writer: StreamRefusal['writer'],
  stream: string,
  refusal: MailboxError,
  since: string,
): Omit<StreamRefusal, 'waiting'> {
  return { writer, stream, since, error: refusal.message, operatorAction: String(refusal.envelope.operatorAction), dropped: 0 };
}
