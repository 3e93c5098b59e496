/**
 * The pure decision of whom a tick's escalations nudge, and about what: one nudge per recipient per tick, carrying
 * every message escalated to it (oldest first). A nudge per message and recipient was a wake flood: agents not
 * listening for wakes, a thousand unwoken messages made some 1,500 nudges, one HTTP call each to one webhook. Each
 * message is still claimed once in the log; only the nudges are gathered. No I/O: the escalation passes what it
 * claimed.
 */

/** One message this tick escalated, and the recipients it may nudge about it (whoIsTold's `nudged`). */
export interface EscalatedMessage {
  messageId: string;
  nudged: readonly string[];
}

/** One recipient's nudge: the messages it is about, in the order they were escalated (never empty). */
export interface RecipientEscalation {
  identity: string;
  messageIds: string[];
}

/** One per recipient named by any of `escalated`, in identity order; each message id once per recipient. */
export function nudgesPerRecipient(escalated: readonly EscalatedMessage[]): RecipientEscalation[] {
  const byRecipient = new Map<string, string[]>();
  for (const { messageId, nudged } of escalated) {
    for (const identity of nudged) {
      const messageIds = byRecipient.get(identity) ?? [];
      if (!messageIds.includes(messageId)) messageIds.push(messageId);
      byRecipient.set(identity, messageIds);
    }
  }
  return [...byRecipient.keys()].sort().map((identity) => ({ identity, messageIds: byRecipient.get(identity)! }));
}
