/**
 * How a loop that retries on its own (the projector, the heartbeat's ticks, the task sweeper's passes) tells a store
 * that does not answer: a MailboxError UNAVAILABLE (Redis failing over, stopped, unreachable) is said once, at warn,
 * without a stack, the failures that follow at debug, and one info line when the loop gets an answer again. Each loop
 * logged its error object, stack and all, at every retry for as long as a failover lasted, as if each were a new bug.
 * Any other failure is not an outage: the caller logs it as before (its own line, with the stack, each time).
 *
 * A store that answered, with a refusal no retry mends (an operator must act: EventStoreDB refusing the mailbox's user a
 * right, views another log's), is no outage either, and is said in the loop's `refused` lines: the down line said "the
 * event store does not answer; ... once it does; an operator must act: <remedy>" of a store that had answered.
 */
import type { Logger } from 'pino';
import { causeOf, isMailboxError, needsOperator } from '../errors';

export interface OutageLines {
  /** The warn line when the store first fails to answer (with its `reason`). */
  down: string;
  /** The debug line of each failure after it. */
  stillDown: string;
  /** The info line when the loop gets an answer again (with `downMs` and the failures meanwhile). */
  back: string;
  /** The info line when the loop stops asking the store during an outage (its lease stepped down): stoppedAsking(). */
  stoppedAsking: string;
  /** The field of the back line that counts the failures meanwhile (`retries`, `failedTicks`, `failedPasses`). */
  failuresField: string;
  /**
   * The lines when the store answers with a refusal only an operator mends (the warn line then ends '; an operator must
   * act: <remedy>'; each refusal after it is said at debug in the same words). Absent: the lines above name what the
   * loop met, not a store that does not answer, and serve for both.
   */
  refused?: RefusedLines;
}

export interface RefusedLines {
  /** The warn line when the store first refuses (with its `reason` and `operatorAction`). */
  down: string;
  /** The info line when the store takes the loop's calls again (with `refusedForMs` and the refusals meanwhile). */
  back: string;
  /** The info line when the loop stops asking the store while it refuses (its lease stepped down). */
  stoppedAsking: string;
}

/**
 * What a line says of a store that does not answer (a MailboxError UNAVAILABLE): its `reason` and, when the store said
 * more, its `cause`, without a stack; null for any other failure, which keeps its error object (and its stack).
 */
export function outageFields(error: unknown): { reason: string; cause?: string } | null {
  if (!isMailboxError(error) || error.envelope.code !== 'UNAVAILABLE') return null;
  // The message is the client's ('... is unavailable; retry later'); what the store said is its cause, if any.
  const cause = causeOf(error);
  return cause === undefined ? { reason: error.message } : { reason: error.message, cause };
}

export class StoreOutage {
  /**
   * Since when the store has not answered, when it last failed to, and how many failures since (the first included);
   * null: it answers.
   */
  private down: { since: number; last: number; failures: number; refused: RefusedLines | null } | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly lines: OutageLines,
  ) {}

  /**
   * Tells `error` if it is the store not answering (then true: said, once at warn, after at debug with `fields`);
   * false for any other failure, which the caller logs itself.
   */
  failed(error: unknown, fields: Record<string, unknown> = {}): boolean {
    const reason = outageFields(error);
    if (reason === null || !isMailboxError(error)) return false;
    // An answer, a refusal only an operator mends: not said as a store that does not answer.
    const refused = (needsOperator(error) ? this.lines.refused : undefined) ?? null;
    if (this.down && this.down.refused === refused) {
      this.down.failures += 1;
      this.down.last = this.now();
      this.logger.debug({ ...reason, ...fields }, refused?.down ?? this.lines.stillDown);
      return true;
    }
    // First, or the other kind than before (a store back up, now refusing; or no longer answering): said at warn.
    this.down = { since: this.now(), last: this.now(), failures: 1, refused };
    // One no retry cures says its remedy in the line itself, not only in the reason's long sentence.
    if (needsOperator(error)) {
      const operatorAction = error.envelope.operatorAction as string;
      const line = refused?.down ?? this.lines.down;
      this.logger.warn({ ...reason, operatorAction }, `${line}; an operator must act: ${operatorAction}`);
      return true;
    }
    this.logger.warn(reason, this.lines.down);
    return true;
  }

  /** The loop got an answer: an outage said by failed() is over, and said so (nothing when there was none). */
  answered(): void {
    if (!this.down) return;
    const { since, failures, refused } = this.down;
    this.down = null;
    if (refused !== null) {
      this.logger.info({ refusedForMs: this.now() - since, [this.lines.failuresField]: failures }, refused.back);
      return;
    }
    this.logger.info({ downMs: this.now() - since, [this.lines.failuresField]: failures }, this.lines.back);
  }

  /**
   * The store answered, refusing one stream for what only an operator mends (the caller says that refusal in its own
   * lines): an outage said by failed() is over, and `line` says so at info with `downMs` up to this answer. The back
   * line of the next call the store took counted the refusal's time in downMs, as if the store had not answered then.
   */
  answeredRefusing(line: string): void {
    if (!this.down) return;
    const { since, failures } = this.down;
    this.down = null;
    this.logger.info({ downMs: this.now() - since, [this.lines.failuresField]: failures }, line);
  }

  /**
   * The loop stops asking the store (its lease stepped down: another node does the job, or none while the store is
   * down for all): an outage said by failed() ends here with its own line, saying only what this loop saw, `failingForMs`
   * from its first failure to its last and how many. It stayed open, and the back line of the next answer, maybe long
   * after this node led again, counted in downMs the time it did not ask, as if the store had not answered all along.
   */
  stoppedAsking(): void {
    if (!this.down) return;
    const { since, last, failures, refused } = this.down;
    this.down = null;
    const fields = { failingForMs: last - since, [this.lines.failuresField]: failures };
    this.logger.info(fields, refused?.stoppedAsking ?? this.lines.stoppedAsking);
  }
}
