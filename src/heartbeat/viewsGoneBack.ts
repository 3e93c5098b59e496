/**
 * Views that went back (Redis restarted empty or flushed, and the projector rebuilding them from the log) hold only
 * part of the log until they reach again the position they had: a message's wake, read or reply later in the log is
 * not in them yet. A tick read from them escalated messages that had woken their recipients ("ALARM message woke none
 * of its recipients", a WakeEscalated written for good, the recipients nudged) and nudged unread sets that were only
 * part of an inbox. The separate daemon reads the views directly (the server refuses its own reads meanwhile, but
 * only in its own process), so it tells this itself: from the checkpoints its ticks see, never less than the highest.
 */
import { MailboxError } from '../errors';

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
   * null when they hold at least as much as before. `checkpoint` is the one this tick read.
   */
  check(checkpoint: bigint | null): MailboxError | null {
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
