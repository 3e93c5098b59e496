/**
 * The delivery ledger's rules (ledger.ts), pure like the inbox rules beside them (evolve.ts):
 *
 * - A send opens the message's ledger once (a redelivered send changes nothing). Before that, it answers
 *   the thread for its sender: every message of the thread awaiting the sender's reply is `replied` by it.
 *   Then each recipient owes the thread a reply to it.
 * - Each stage is marked once per recipient, the first time it happens, and only for a recipient of the message
 *   (a receipt or a wake for anyone else, or for no message, changes nothing):
 *   `inView` when the recipient's inbox entry is added, `woken` when a wake was observed, `seen` at its
 *   first seen mark, `read` at its first receipt. (The inbox rules decide the same firsts for the inbox, from the entry.)
 * - A later stage never needs an earlier one: a recipient that polls reads without being woken.
 * - Reply obligations: a send that expects replies by a time makes each recipient that has not answered owe
 *   one; an answer in the thread clears it (and once all answered, the message is no longer due); the
 *   heartbeat's finding that it fell due unmet is marked once (the sender's wake: wakes.ts, replyOverdueWakeFor).
 * - A wake is due (wakeExpected) when the sender did not suppress it and some recipient other than a broadcast's sender
 *   is a registered agent, not retired, at the send's point of the log. Mail to an identity nobody registered is accepted
 *   (permissive recipients, DESIGN section 2), but no agent holds its token: nothing can ever be woken for it, and an
 *   alarm about it could never clear. Decided once, at the send: an identity registered later gets the mail in its inbox
 *   (its wake stream's `sync` counts it) but the message was never due a wake; one retired later was due one.
 * - Unwoken: a message that expects a wake is listed from its send until its first wake is observed, or until every
 *   recipient due a wake saw or read it (an agent that polls needs no wake: what it has seen, nothing has to wake it
 *   for). The recipients due no wake (not registered or retired at the send, a broadcast's sender) are marked so at
 *   the send (wakeNotDue): none of them will ever be woken, and one registered later that reads it does not stand in
 *   for a recipient that has not. The count of the recipients due a wake that saw or read it moves at each one's first
 *   of the two. The heartbeat's escalation is marked once (it stays unwoken, no longer pending escalation).
 */
import type { LedgerFact, ViewChange } from '../viewChanges';
import type { AgentLookup, LedgerChangeSink, LedgerLookup, LedgerStage, NoWakeReason } from './ledger';

type SendWakes = Pick<Extract<LedgerFact, { kind: 'ledgerOpened' }>, 'recipients' | 'wakeSuppressed' | 'broadcastSender'>;

/** Whether the recipient of the send is due a wake: not a broadcast's sender, and a registered agent, not retired. */
const wakeDueTo = (agents: AgentLookup, send: SendWakes, recipient: string): boolean =>
  recipient !== send.broadcastSender && agents.isActiveAgent(recipient);

/** Whether the send is due a wake (the header's wakeExpected): see the rules above. */
export const wakeExpectedOf = (agents: AgentLookup, send: SendWakes): boolean =>
  !send.wakeSuppressed && send.recipients.some((recipient) => wakeDueTo(agents, send, recipient));

/** Why a send with wakeExpected false was due no wake (NoWakeReason), from the send alone: the registry is the remaining cause. */
export function noWakeReason(send: SendWakes): NoWakeReason {
  if (send.wakeSuppressed) return 'suppressed';
  if (send.recipients.every((recipient) => recipient === send.broadcastSender)) return 'noRecipient';
  return 'noRegisteredRecipient';
}

/** The ledger's part of one fact (called for every fact; most concern it). */
export function evolveLedger(
  view: LedgerLookup & AgentLookup,
  fact: ViewChange | LedgerFact,
  position: bigint,
  sink: LedgerChangeSink,
): void {
  switch (fact.kind) {
    case 'ledgerOpened': {
      const awaiting = view.awaitingReply(fact.threadId, fact.sender);
      for (const messageId of awaiting) {
        const replied = view.ledgerCount(messageId, 'replied');
        if (!reach(view, messageId, fact.sender, 'replied', `${fact.sentAt} ${fact.messageId}`, sink)) continue;
        if (view.ledgerReplyDueBy(messageId) === null) continue; // no obligation to close
        sink.replyOwedCleared(fact.sender, messageId);
        if (replied + 1 === view.ledgerRecipients(messageId).length) sink.repliesMet(messageId);
      }
      if (awaiting.length > 0) sink.repliesSettled(fact.threadId, fact.sender);
      if (view.ledgerOpen(fact.messageId)) return;
      // Field by field: an object made by rest/spread from the fact got a hidden class of its own in V8 (one per
      // message, ~0.5 KB each in the memory store, measured by heap snapshot for issue 10).
      const wakeExpected = wakeExpectedOf(view, fact);
      sink.ledgerOpened({
        messageId: fact.messageId,
        position: position.toString(),
        sender: fact.sender,
        threadId: fact.threadId,
        sentAt: fact.sentAt,
        recipients: fact.recipients,
        wakeExpected,
      });
      if (wakeExpected) {
        // Who will never be woken for it: their seeing or reading it does not count toward clearing it (attended). A
        // sole recipient of a message that expects a wake is due one (no set made for most messages).
        if (fact.recipients.length > 1)
          for (const recipient of new Set(fact.recipients))
            if (!wakeDueTo(view, fact, recipient)) sink.wakeNotDue(fact.messageId, recipient);
        sink.unwokenListed(fact.messageId, fact.sentAt);
      }
      for (const recipient of fact.recipients) sink.replyAwaited(fact.threadId, recipient, fact.messageId);
      return;
    }
    case 'inboxAdded':
      reach(view, fact.entry.messageId, fact.recipient, 'inView', position.toString(), sink);
      return;
    case 'wakeObserved': {
      // A heartbeat nudge (any way but a wake stream) is the identity's last nudge when newer, whether or not it was the message's first wake.
      if (fact.via !== 'stream') {
        const nudge = `${fact.at} ${fact.via}`;
        const last = view.lastNudge(fact.recipient);
        if (last === undefined || last < nudge) sink.nudgeObserved(fact.recipient, nudge);
      }
      const first = view.ledgerCount(fact.messageId, 'woken') === 0;
      if (!reach(view, fact.messageId, fact.recipient, 'woken', `${fact.at} ${fact.via}`, sink)) return;
      if (first) sink.unwokenCleared(fact.messageId);
      return;
    }
    case 'replyRequested': {
      if (!view.ledgerOpen(fact.messageId) || view.ledgerReplyDueBy(fact.messageId) !== null) return;
      sink.replyRequested(fact.messageId, fact.dueBy);
      let owed = 0;
      for (const recipient of view.ledgerRecipients(fact.messageId)) {
        if (view.ledgerMark(fact.messageId, recipient, 'replied') !== undefined) continue;
        sink.replyOwed(recipient, fact.messageId, fact.dueBy);
        owed += 1;
      }
      if (owed === 0) sink.repliesMet(fact.messageId);
      return;
    }
    case 'replyOverdue':
      if (view.ledgerOpen(fact.messageId) && view.ledgerOverdueAt(fact.messageId) === null)
        sink.replyOverdueMarked(fact.messageId, fact.at);
      return;
    case 'wakeEscalated':
      if (view.ledgerOpen(fact.messageId) && view.ledgerEscalatedAt(fact.messageId) === null)
        sink.wakeEscalated(fact.messageId, fact.at);
      return;
    case 'receiptRead':
      if (reach(view, fact.messageId, fact.recipient, 'read', fact.readAt, sink))
        attended(view, fact.messageId, fact.recipient, 'seen', sink);
      return;
    case 'entrySeen':
      if (reach(view, fact.messageId, fact.recipient, 'seen', fact.seenAt, sink))
        attended(view, fact.messageId, fact.recipient, 'read', sink);
      return;
    default:
      return; // no other fact moves the ledger
  }
}

/**
 * The recipient just saw or read the message: its first of the two (`other` not marked) counts it as attended, when it
 * was due a wake (a message that expected none counts nobody).
 */
function attended(view: LedgerLookup, messageId: string, recipient: string, other: LedgerStage, sink: LedgerChangeSink): void {
  if (view.ledgerMark(messageId, recipient, other) !== undefined) return; // counted when it reached the other
  if (!view.ledgerWakeDue(messageId, recipient)) return; // never to be woken: its reading stands in for nobody's
  const count = view.ledgerAttended(messageId) + 1;
  sink.recipientAttended(messageId);
  if (count === view.ledgerWakeDueCount(messageId)) sink.unwokenCleared(messageId); // every recipient due a wake has it
}

function reach(
  view: LedgerLookup,
  messageId: string,
  recipient: string,
  stage: LedgerStage,
  mark: string,
  sink: LedgerChangeSink,
): boolean {
  if (!view.ledgerRecipient(messageId, recipient) || view.ledgerMark(messageId, recipient, stage) !== undefined) return false;
  sink.ledgerStageReached(messageId, recipient, stage, mark);
  return true;
}
