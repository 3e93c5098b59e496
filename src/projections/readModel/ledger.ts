/**
 * The delivery ledger (issue 13): per message and recipient, how far delivery
 * got. accepted (the send's log position) -> inView (the recipient's inbox holds
 * it) -> woken (a wake reached the recipient) -> seen -> read -> replied (the
 * recipient sent a message in the thread). Each stage is recorded once, the
 * first time it happens, as a short text mark (below), so that every store
 * keeps the same strings and a rebuild gives the same ledger. The rules are in
 * ledgerRules.ts; the stores keep the marks and a count per stage.
 */

export const LEDGER_STAGES = ['inView', 'woken', 'seen', 'read', 'replied'] as const;
export type LedgerStage = (typeof LEDGER_STAGES)[number];

/** What the ledger knows of the message itself, from its MessageSent. */
export interface LedgerHeader {
  messageId: string;
  /** The send's log position (decimal): the `accepted` stage. */
  position: string;
  sender: string;
  threadId: string;
  sentAt: string;
  /** Every recipient (a broadcast: the audience snapshot), each once. */
  recipients: readonly string[];
  /**
   * Whether a wake was due to at least one recipient: not suppressed, and some recipient other than a broadcast's
   * sender was a registered agent, not retired, when it was sent (ledgerRules.ts). Only such a message can be unwoken.
   */
  wakeExpected: boolean;
}

/**
 * Why no wake was due (wakeExpected false): the sender suppressed its wakes; no recipient but its sender (a broadcast
 * with no peers); or none of its recipients was a registered agent, not retired, when it was sent (an identity nobody
 * registered: no agent holds its token, so nothing could ever be woken for it).
 */
export const NO_WAKE_REASONS = ['suppressed', 'noRecipient', 'noRegisteredRecipient'] as const;
export type NoWakeReason = (typeof NO_WAKE_REASONS)[number];

/** Why no wake was due, in the words the delivery summaries say it (`mailbox delivery`, `mailbox audit message`). */
export const NO_WAKE_REASON_TEXT: Record<NoWakeReason, string> = {
  suppressed: 'sent with wakeSuppressed',
  noRecipient: 'no recipient but its sender',
  noRegisteredRecipient: 'no recipient was a registered agent when it was sent',
};

/** What the ledger rules ask of the registry: whether the identity is a registered agent, not retired (at this point of the log). */
export interface AgentLookup {
  isActiveAgent(identity: string): boolean;
}

/** Per stage, how many recipients reached it. */
export type LedgerCounts = Record<LedgerStage, number>;

/**
 * A stage's mark, as every store keeps it:
 * inView `<position>` (of the event that put it in the inbox), woken `<observedAt> <via>`,
 * seen `<seenAt>`, read `<readAt>`, replied `<sentAt> <messageId of the reply>`.
 */
export type LedgerMarks = Partial<Record<LedgerStage, string>>;

/** The part of the views the ledger rules look at. */
export interface LedgerLookup {
  /** Whether the message has a ledger (its MessageSent was applied). */
  ledgerOpen(messageId: string): boolean;
  /** Whether the identity is one of the message's recipients (false: no ledger, or not addressed to it). */
  ledgerRecipient(messageId: string, identity: string): boolean;
  /** The recipient's mark of the stage, if reached. */
  ledgerMark(messageId: string, recipient: string, stage: LedgerStage): string | undefined;
  /** Messages of the thread sent to the recipient that it has not answered yet, oldest first. */
  awaitingReply(threadId: string, recipient: string): readonly string[];
  /** How many recipients reached the stage (0: none, or no ledger). */
  ledgerCount(messageId: string, stage: LedgerStage): number;
  /** How many recipients due a wake saw or read it (either; each once): a recipient that has needs no wake. */
  ledgerAttended(messageId: string): number;
  /**
   * Whether the recipient was due a wake at the send: the message expected one (wakeExpected) and the recipient is not
   * marked wakeNotDue (false: no ledger, or not a recipient).
   */
  ledgerWakeDue(messageId: string, recipient: string): boolean;
  /** How many recipients were due a wake at the send, each once (0: none, or no ledger). */
  ledgerWakeDueCount(messageId: string): number;
  /** When the heartbeat escalated the unwoken message (null: never). */
  ledgerEscalatedAt(messageId: string): string | null;
  /** The message's recipients (none: no ledger). */
  ledgerRecipients(messageId: string): readonly string[];
  /** When every recipient's reply is due (null: no reply expected, or no ledger). */
  ledgerReplyDueBy(messageId: string): string | null;
  /** When the heartbeat found the reply obligation overdue (null: never). */
  ledgerOverdueAt(messageId: string): string | null;
  /** The identity's newest delivered heartbeat nudge as `<at> <via>` (a WakeObserved not via a stream), if any. */
  lastNudge(identity: string): string | undefined;
}

/** The ledger's changes: each a plain write, decided by the rules (a store decides nothing). */
export interface LedgerChangeSink {
  /** The message's ledger starts: its header, every recipient at `accepted`, all counts zero. */
  ledgerOpened(header: LedgerHeader): void;
  /** The recipient reached `stage` for the first time: keep its mark, and the stage's count moves up by one. */
  ledgerStageReached(messageId: string, recipient: string, stage: LedgerStage, mark: string): void;
  /** The recipient owes the thread an answer to the message (appended to its list for the thread). */
  replyAwaited(threadId: string, recipient: string, messageId: string): void;
  /** The recipient answered in the thread: its list for the thread is empty again. */
  repliesSettled(threadId: string, recipient: string): void;
  /**
   * The message expects a wake, but not to this recipient (not a registered agent, or retired, at the send; a
   * broadcast's sender): it does not count among the recipients that must see or read it (once, right after the open).
   */
  wakeNotDue(messageId: string, recipient: string): void;
  /**
   * A recipient due a wake saw or read the message for the first time (whichever came first): the attended count moves
   * up by one.
   */
  recipientAttended(messageId: string): void;
  /** The message expects a wake and none was observed yet: listed as unwoken (and pending escalation) by its send time. */
  unwokenListed(messageId: string, sentAt: string): void;
  /**
   * A first wake was observed, or every recipient saw or read it: the message leaves the unwoken lists (nothing when it
   * was not in them).
   */
  unwokenCleared(messageId: string): void;
  /** The heartbeat escalated the unwoken message once: it is no longer pending escalation (still unwoken). */
  wakeEscalated(messageId: string, at: string): void;
  /** The sender expects every recipient's reply by `dueBy`: kept with the message, which is listed as due by then. */
  replyRequested(messageId: string, dueBy: string): void;
  /** The recipient owes a reply to the message by `dueBy` (its heartbeat counts show it). */
  replyOwed(recipient: string, messageId: string, dueBy: string): void;
  /** The recipient answered: it owes that message nothing any more. */
  replyOwedCleared(recipient: string, messageId: string): void;
  /** Every recipient answered: the message leaves the due list. */
  repliesMet(messageId: string): void;
  /** The obligation fell due unmet and the heartbeat said so, once: the message leaves the due list. */
  replyOverdueMarked(messageId: string, at: string): void;
  /** A heartbeat nudge newer than the identity's last was delivered (`mark` is `<at> <via>`). */
  nudgeObserved(identity: string, mark: string): void;
}

export type LedgerChange =
  | { kind: 'ledgerOpened'; header: LedgerHeader }
  | { kind: 'ledgerStageReached'; messageId: string; recipient: string; stage: LedgerStage; mark: string }
  | { kind: 'replyAwaited'; threadId: string; recipient: string; messageId: string }
  | { kind: 'repliesSettled'; threadId: string; recipient: string }
  | { kind: 'wakeNotDue'; messageId: string; recipient: string }
  | { kind: 'recipientAttended'; messageId: string }
  | { kind: 'unwokenListed'; messageId: string; sentAt: string }
  | { kind: 'unwokenCleared'; messageId: string }
  | { kind: 'wakeEscalated'; messageId: string; at: string }
  | { kind: 'replyRequested'; messageId: string; dueBy: string }
  | { kind: 'replyOwed'; recipient: string; messageId: string; dueBy: string }
  | { kind: 'replyOwedCleared'; recipient: string; messageId: string }
  | { kind: 'repliesMet'; messageId: string }
  | { kind: 'replyOverdueMarked'; messageId: string; at: string }
  | { kind: 'nudgeObserved'; identity: string; mark: string };

export function collectLedgerChanges(into: { push(change: LedgerChange): unknown }): LedgerChangeSink {
  return {
    ledgerOpened: (header) => into.push({ kind: 'ledgerOpened', header }),
    ledgerStageReached: (messageId, recipient, stage, mark) =>
      into.push({ kind: 'ledgerStageReached', messageId, recipient, stage, mark }),
    replyAwaited: (threadId, recipient, messageId) => into.push({ kind: 'replyAwaited', threadId, recipient, messageId }),
    repliesSettled: (threadId, recipient) => into.push({ kind: 'repliesSettled', threadId, recipient }),
    wakeNotDue: (messageId, recipient) => into.push({ kind: 'wakeNotDue', messageId, recipient }),
    recipientAttended: (messageId) => into.push({ kind: 'recipientAttended', messageId }),
    unwokenListed: (messageId, sentAt) => into.push({ kind: 'unwokenListed', messageId, sentAt }),
    unwokenCleared: (messageId) => into.push({ kind: 'unwokenCleared', messageId }),
    wakeEscalated: (messageId, at) => into.push({ kind: 'wakeEscalated', messageId, at }),
    replyRequested: (messageId, dueBy) => into.push({ kind: 'replyRequested', messageId, dueBy }),
    replyOwed: (recipient, messageId, dueBy) => into.push({ kind: 'replyOwed', recipient, messageId, dueBy }),
    replyOwedCleared: (recipient, messageId) => into.push({ kind: 'replyOwedCleared', recipient, messageId }),
    repliesMet: (messageId) => into.push({ kind: 'repliesMet', messageId }),
    replyOverdueMarked: (messageId, at) => into.push({ kind: 'replyOverdueMarked', messageId, at }),
    nudgeObserved: (identity, mark) => into.push({ kind: 'nudgeObserved', identity, mark }),
  };
}

export function replayLedgerChange(change: LedgerChange, sink: LedgerChangeSink): void {
  switch (change.kind) {
    case 'ledgerOpened':
      return sink.ledgerOpened(change.header);
    case 'ledgerStageReached':
      return sink.ledgerStageReached(change.messageId, change.recipient, change.stage, change.mark);
    case 'replyAwaited':
      return sink.replyAwaited(change.threadId, change.recipient, change.messageId);
    case 'repliesSettled':
      return sink.repliesSettled(change.threadId, change.recipient);
    case 'wakeNotDue':
      return sink.wakeNotDue(change.messageId, change.recipient);
    case 'recipientAttended':
      return sink.recipientAttended(change.messageId);
    case 'unwokenListed':
      return sink.unwokenListed(change.messageId, change.sentAt);
    case 'unwokenCleared':
      return sink.unwokenCleared(change.messageId);
    case 'wakeEscalated':
      return sink.wakeEscalated(change.messageId, change.at);
    case 'replyRequested':
      return sink.replyRequested(change.messageId, change.dueBy);
    case 'replyOwed':
      return sink.replyOwed(change.recipient, change.messageId, change.dueBy);
    case 'replyOwedCleared':
      return sink.replyOwedCleared(change.recipient, change.messageId);
    case 'repliesMet':
      return sink.repliesMet(change.messageId);
    case 'replyOverdueMarked':
      return sink.replyOverdueMarked(change.messageId, change.at);
    case 'nudgeObserved':
      return sink.nudgeObserved(change.identity, change.mark);
    default: {
      const unexpected: never = change;
      throw new Error(`Unknown ledger change ${(unexpected as { kind: string }).kind}`);
    }
  }
}

export const emptyCounts = (): LedgerCounts => ({ inView: 0, woken: 0, seen: 0, read: 0, replied: 0 });

/** One recipient's row as callers see it (decoded marks; null: not reached). */
export interface DeliveryRow {
  recipient: string;
  inView: { position: string } | null;
  woken: { at: string; via: string } | null;
  seen: { at: string } | null;
  read: { at: string } | null;
  replied: { at: string; messageId: string } | null;
}

const split = (mark: string): [string, string] => {
  const space = mark.indexOf(' ');
  return [mark.slice(0, space), mark.slice(space + 1)];
};

export function deliveryRow(recipient: string, marks: LedgerMarks): DeliveryRow {
  const woken = marks.woken === undefined ? null : split(marks.woken);
  const replied = marks.replied === undefined ? null : split(marks.replied);
  return {
    recipient,
    inView: marks.inView === undefined ? null : { position: marks.inView },
    woken: woken && { at: woken[0], via: woken[1] },
    seen: marks.seen === undefined ? null : { at: marks.seen },
    read: marks.read === undefined ? null : { at: marks.read },
    replied: replied && { at: replied[0], messageId: replied[1] },
  };
}

/** The header as the ledger keeps it: the recipients are its rows (paged), here only counted. */
export interface LedgerMessage extends Omit<LedgerHeader, 'recipients'> {
  recipientCount: number;
}

export const ledgerMessage = ({ recipients, ...rest }: LedgerHeader): LedgerMessage => ({
  ...rest,
  recipientCount: recipients.length,
});

/** One page of a message's ledger, recipients in identity order (bytewise: identities are ASCII). */
export interface LedgerPage {
  message: LedgerMessage;
  counts: LedgerCounts;
  /** When the heartbeat escalated the message for want of a wake (null: never). */
  escalatedAt: string | null;
  /** When every recipient's reply is due (null: none expected), and when the heartbeat found it overdue. */
  replyDueBy: string | null;
  replyOverdueAt: string | null;
  rows: DeliveryRow[];
  /** The last recipient of this page when more follow (the next page's `after`); else null. */
  nextAfter: string | null;
}

/** A message's whole ledger: the header and counts of a page, and every recipient's row (identity order). */
export type WholeLedger = Omit<LedgerPage, 'nextAfter'>;

export interface LedgerQuery {
  /** Recipients after this identity (null: from the first). */
  after: string | null;
  limit: number;
}

/** A message that expected a wake and has none yet (the unwoken alarm). */
export interface UnwokenMessage {
  messageId: string;
  sender: string;
  sentAt: string;
  recipientCount: number;
  escalatedAt: string | null;
}

export interface UnwokenQuery {
  /** Only messages sent strictly before this time (now minus the wake SLA). */
  sentBefore: string;
  /** At most this many, oldest first (0: only the count). */
  limit: number;
  /** Only those the heartbeat has not escalated yet. */
  pendingOnly: boolean;
}

export interface UnwokenPage {
  /** How many messages match, in all. */
  count: number;
  messages: UnwokenMessage[];
}

/** A message whose reply obligation is due, with recipients yet to answer (the heartbeat's look). */
export interface DueReply {
  messageId: string;
  sender: string;
  threadId: string;
  dueBy: string;
}

/** What one identity owes (heartbeat counts): open reply obligations and the earliest due time among them. */
export interface RepliesOwed {
  repliesOwed: number;
  nextReplyDueBy: string | null;
}

/** An identity's newest delivered heartbeat nudge (the console's "last nudge"). */
export interface LastNudge {
  at: string;
  via: string;
}

export const lastNudgeOf = (mark: string): LastNudge => {
  const [at, via] = split(mark);
  return { at, via };
};
