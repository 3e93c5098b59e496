/**
 * Views that went back (Redis restarted empty or flushed, and the projector rebuilding them from the log) hold only
 * part of the log until they reach again the position they had: a message's wake, read or reply later in the log is
 * not in them yet. A tick read from them escalated messages that had woken their recipients ("ALARM message woke none
 * of its recipients", a WakeEscalated written for good, the recipients nudged) and nudged unread sets that were only
 * part of an inbox. The separate daemon reads the views directly (the server refuses its own reads meanwhile, but
 * only in its own process), so it tells this itself: from the checkpoints its ticks see, never less than the highest.
 */
import { MailboxError, operatorNeeded } from '../errors';
import type { ViewsBinding } from '../projections/projectionStore';
import { describeForeignViews, foreignViewsAction, judgeViews } from '../projections/viewsOwnership';

export class ViewsGoneBack {
  /** The highest checkpoint a tick saw: the views held at least this much of the log. */
  private heldThrough: bigint | null = null;
  private readonly refusals = new WeakSet<object>();

  /** Whether `error` is a refusal of this check (views behind), not a store that failed. */
  refused(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.refusals.has(error);
  }

  /**
   * The refusal of a tick whose views stand below what they held (an UNAVAILABLE: no agent is nudged from them), or
   * null when they hold at least as much as before. `checkpoint` is the one this tick read, `head` the log's head read
   * before it.
   */
  check(checkpoint: bigint | null, head: bigint | null): MailboxError | null {
    // A log that went back below what the views held (restored from an older backup, then the views rebuilt from it:
    // `mailbox projections rebuild --take-over`) can never bring them back there: the views of this log hold at most
    // its head. Waiting for the old position skipped every tick, saying 'until the projector has rebuilt them to N',
    // until new events pushed the head past N, which could be never. (The head only grows on a log that was not
    // replaced, so on one it never lowers what the views held.)
    if (this.heldThrough !== null && (head ?? 0n) < this.heldThrough) this.heldThrough = head;
    const held = this.heldThrough;
    if (held !== null && (checkpoint === null || checkpoint < held)) {
      const refusal = new MailboxError(
        'UNAVAILABLE',
        'Service unavailable',
        `The views went back from position ${held} to ${checkpoint ?? 'none'}: they lost what they held (e.g. Redis ` +
          `restarted empty) and hold only part of the log until the projector has rebuilt them to ${held}.`,
        { heldThrough: held.toString(), checkpoint: checkpoint?.toString() ?? null },
      );
      this.refusals.add(refusal);
      return refusal;
    }
    if (checkpoint !== null) this.heldThrough = checkpoint;
    return null;
  }
}

/**
 * Views that are not this log's: another log's, or standing ahead of its head (the log replaced by an older copy, a
 * backup restored). DESIGN: they are never served; the server refuses them (projectionRunner's displacement), and so
 * must the separate daemon, which reads them directly: nudges and escalations from them speak of mail the log does not
 * hold. Judged as the server judges them (viewsOwnership.ts), with the server's words and remedy. Coherent again (the
 * views rebuilt from this log: a take-over), ticks resume.
 */
export class ViewsOfThisLog {
  private readonly refusals = new WeakSet<object>();

  /** Whether `error` is a refusal of this check. */
  refused(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.refusals.has(error);
  }

  /** The refusal (UNAVAILABLE, operator action needed) of views not this log's, or null. `head` must be read after `binding` (judgeViews). */
  check(logIdentity: string, binding: ViewsBinding, head: bigint | null): MailboxError | null {
    const verdict = judgeViews(logIdentity, head, binding);
    if (verdict.kind !== 'foreign' && verdict.kind !== 'ahead') return null;
    // No tick mends them: 'Operator action needed', the remedy in operatorAction (the --once envelope, the warn line).
    const refusal = operatorNeeded(describeForeignViews(binding, logIdentity, verdict), foreignViewsAction(binding, verdict), {
      checkpoint: binding.checkpoint?.toString() ?? null,
      head: head?.toString() ?? null,
      viewsOf: binding.logIdentity,
      logIdentity,
    });
    this.refusals.add(refusal);
    return refusal;
  }
}
