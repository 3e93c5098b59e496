/**
 * The delivery ledger in process memory: the memory store's and the scratch
 * views' (audit verify, the rules' specs) storage of it. Storage only: what
 * changes is decided by ledgerRules.ts.
 *
 * Kept small, because the embedded default holds one ledger per message for as long as it runs (issue 10:
 * the major collections of a large heap were the sustained-load tail): the per-message maps are sharded
 * (support/shardedMap.ts), a message with one recipient keeps that recipient's marks inline rather than in
 * a Map of its own, and "pending escalation" is derived from the ledger (unwoken, not escalated) rather than
 * kept in a second set.
 */
import { ShardedMap } from '../../support/shardedMap';
import { Smallest } from '../../support/smallest';
import {
  LEDGER_STAGES,
  type AgentLookup,
  deliveryRow,
  emptyCounts,
  ledgerMessage,
  type LedgerChangeSink,
  type LedgerCounts,
  type LedgerHeader,
  type LedgerLookup,
  type LedgerMarks,
  type LedgerPage,
  type LedgerQuery,
  type LedgerStage,
  type WholeLedger,
  type DueReply,
  type RepliesOwed,
  type UnwokenMessage,
  type UnwokenPage,
  type UnwokenQuery,
} from './ledger';

/** A message's ledger as this storage keeps it (its fields are this file's business). */
export interface MessageLedger {
  header: LedgerHeader;
  /** The recipients as a set, for a message with several (one recipient is compared directly). */
  members: Set<string> | null;
  /** The recipients in identity order, sorted on the first page asked for (most ledgers are never read). */
  sorted: string[] | null;
  /** Each recipient's marks: the sole recipient's inline (most messages), a Map for a message with several. */
  marks: LedgerMarks | Map<string, LedgerMarks> | null;
  /** Per stage, how many recipients reached it; null for a message with one recipient (its marks say: 1 or 0). */
  counts: LedgerCounts | null;
  /** How many recipients due a wake saw or read it (either; each once). */
  attended: number;
  /** The recipients due no wake of a message that expects one (wakeNotDue); null: none (most messages). */
  notDue: Set<string> | null;
  escalatedAt: string | null;
  replyDueBy: string | null;
  replyOverdueAt: string | null;
  /** Its send time (ms) while it is unwoken (expects a wake, none observed yet); null otherwise. */
  unwokenMs: number | null;
  /** In `unwokenQueue` (until a compaction drops it once woken). */
  unwokenQueued: boolean;
  /**
   * The replies awaited in the thread this message roots (its id is the thread's id, as for every new thread):
   * the first recipient awaited and its message(s) inline, any further recipients in a Map.
   */
  awaitingRecipient: string | null;
  awaitingIds: string | string[] | null;
  awaitingOthers: Map<string, string | string[]> | null;
}

const NONE: readonly string[] = [];

/**
 * Where the ledgers are kept, by message id: a map of their own (the default), or a slot on a record its owner keeps
 * for every message anyway (the memory store: one look-up per message instead of one in each of two large maps).
 * `partCount` and `idsOfPart` walk the ids of the messages with a ledger in resumable steps (ledgerIds).
 */
export interface LedgerShelf {
  get(messageId: string): MessageLedger | undefined;
  set(messageId: string, ledger: MessageLedger): void;
  partCount(): number;
  idsOfPart(part: number): string[];
}

/** The default shelf: a map of the ledgers' own. */
class OwnShelf implements LedgerShelf {
  private readonly map = new ShardedMap<MessageLedger>();
  get(messageId: string): MessageLedger | undefined {
    return this.map.get(messageId);
  }
  set(messageId: string, ledger: MessageLedger): void {
    this.map.set(messageId, ledger);
  }
  partCount(): number {
    return this.map.parts;
  }
  idsOfPart(part: number): string[] {
    return this.map.keysOfPart(part);
  }
}

export class LedgerMemory implements LedgerLookup, AgentLookup, LedgerChangeSink {
  /**
   * `agents`: who is registered, for a pass over the ledger alone (the audit's replay). A store that keeps the
   * registry itself (the memory store, the scratch views) answers the rules' isActiveAgent and passes none.
   */
  constructor(
    private readonly ledgers: LedgerShelf = new OwnShelf(),
    private readonly agents: AgentLookup | null = null,
  ) {}

  /**
   * The replies awaited in a thread whose id is no message's (yet): (recipient, thread) -> the messages awaiting
   * its reply there, one id or several. A thread rooted by a message keeps them on that message's ledger
   * (awaitingRecipient...): a million-message rebuild spent ~2 s on this map's look-ups and insertions, a new key
   * string and three operations per message, in a map too large to stay in cache.
   */
  private readonly awaitingElsewhere = new ShardedMap<string | string[]>();
  /**
   * The messages listed unwoken, in the order listed: each one's ledger says whether it still is (unwokenMs),
   * and ledgers woken since are dropped in one pass once they are as many as those still unwoken (as the memory
   * inbox compacts its unread index). A set of ids cost a map insertion per message and a deletion per first wake.
   */
  private unwokenQueue: MessageLedger[] = [];
  private unwokenLive = 0;
  /** Messages whose reply obligation is open (not met, not found overdue) -> when it is due (ms). */
  private readonly due = new ShardedMap<number>();
  /** identity -> message -> when its reply is due (ms). */
  private readonly owed = new Map<string, Map<string, number>>();
  /** Each identity's newest delivered heartbeat nudge, `<at> <via>`. */
  private readonly nudges = new Map<string, string>();

  /** One copy of each identity, as a one-element list (a direct message's recipients) whose element is the copy. */
  private readonly identities = new Map<string, readonly [string]>();
  /**
   * The message asked about last and its ledger: the rules ask about one message several times per fact (is it
   * open? is this a recipient? its mark? then the change), each a look-up in a map of a million ledgers that is
   * rarely in cache. Ledgers are never replaced or removed, so only ledgerOpened has to keep this in step.
   */
  private lastId: string | null = null;
  private lastLedger: MessageLedger | undefined = undefined;

  private identity(identity: string): readonly [string] {
    let kept = this.identities.get(identity);
    if (kept === undefined) this.identities.set(identity, (kept = [identity]));
    return kept;
  }

  private find(messageId: string): MessageLedger | undefined {
    if (messageId !== this.lastId) {
      this.lastId = messageId;
      this.lastLedger = this.ledgers.get(messageId);
    }
    return this.lastLedger;
  }

  ledgerOpen(messageId: string): boolean {
    return this.find(messageId) !== undefined;
  }

  isActiveAgent(identity: string): boolean {
    if (this.agents === null) throw new Error('LedgerMemory was asked who is registered, but was given no registry (agents)');
    return this.agents.isActiveAgent(identity);
  }

  ledgerRecipient(messageId: string, identity: string): boolean {
    const ledger = this.find(messageId);
    if (!ledger) return false;
    return ledger.members === null ? ledger.header.recipients[0] === identity : ledger.members.has(identity);
  }

  ledgerMark(messageId: string, recipient: string, stage: LedgerStage): string | undefined {
    const ledger = this.find(messageId);
    return ledger === undefined ? undefined : marksOf(ledger, recipient)?.[stage];
  }

  awaitingReply(threadId: string, recipient: string): readonly string[] {
    const elsewhere =
      this.awaitingElsewhere.size === 0 ? undefined : this.awaitingElsewhere.get(awaitingKey(recipient, threadId));
    const root = this.find(threadId);
    const onRoot = root === undefined ? undefined : awaitedOnRoot(root, recipient);
    if (elsewhere === undefined) return idList(onRoot);
    // Awaited before the thread's id became a message's, then since: in the order awaited.
    return onRoot === undefined ? idList(elsewhere) : [...idList(elsewhere), ...idList(onRoot)];
  }

  ledgerCount(messageId: string, stage: LedgerStage): number {
    const ledger = this.find(messageId);
    return ledger === undefined ? 0 : countOf(ledger, stage);
  }

  /** The ids of the messages with a ledger, a few parts of the map at a time (`after`: the part to go on from). */
  ledgerIds(after: string | null, limit: number): { messageIds: string[]; next: string | null } {
    const messageIds: string[] = [];
    let part = after === null ? 0 : Number(after);
    const parts = this.ledgers.partCount();
    while (part < parts && (messageIds.length === 0 || messageIds.length < limit))
      messageIds.push(...this.ledgers.idsOfPart(part++));
    return { messageIds, next: part < parts ? String(part) : null };
  }

  lastNudge(identity: string): string | undefined {
    return this.nudges.get(identity);
  }

  /** Every identity's last nudge (`<at> <via>`). */
  lastNudges(): ReadonlyMap<string, string> {
    return this.nudges;
  }

  nudgeObserved(identity: string, mark: string): void {
    this.nudges.set(identity, mark);
  }

  ledgerEscalatedAt(messageId: string): string | null {
    return this.find(messageId)?.escalatedAt ?? null;
  }

  ledgerRecipients(messageId: string): readonly string[] {
    return this.find(messageId)?.header.recipients ?? NONE;
  }

  ledgerReplyDueBy(messageId: string): string | null {
    return this.find(messageId)?.replyDueBy ?? null;
  }

  ledgerOverdueAt(messageId: string): string | null {
    return this.find(messageId)?.replyOverdueAt ?? null;
  }

  ledgerOpened(opened: LedgerHeader): void {
    const members = opened.recipients.length > 1 ? new Set(opened.recipients) : null;
    // Kept field by field: each event arrives freshly parsed, so a direct message's recipient list and its sender
    // would be new objects per message; one copy of each identity (and of `[identity]`) serves every ledger.
    const header: LedgerHeader = {
      messageId: opened.messageId,
      position: opened.position,
      sender: this.identity(opened.sender)[0],
      threadId: opened.threadId === opened.messageId ? opened.messageId : opened.threadId,
      sentAt: opened.sentAt,
      recipients: members === null && opened.recipients.length === 1 ? this.identity(opened.recipients[0]) : opened.recipients,
      wakeExpected: opened.wakeExpected,
    };
    const ledger: MessageLedger = {
      header,
      members,
      sorted: null,
      marks: members === null ? null : new Map(),
      counts: members === null ? null : emptyCounts(),
      attended: 0,
      notDue: null,
      escalatedAt: null,
      replyDueBy: null,
      replyOverdueAt: null,
      unwokenMs: null,
      unwokenQueued: false,
      awaitingRecipient: null,
      awaitingIds: null,
      awaitingOthers: null,
    };
    this.ledgers.set(header.messageId, ledger);
    this.lastId = header.messageId;
    this.lastLedger = ledger;
  }

  ledgerStageReached(messageId: string, recipient: string, stage: LedgerStage, mark: string): void {
    const ledger = this.find(messageId)!;
    let marks = marksOf(ledger, recipient);
    if (!marks) {
      marks = {};
      if (ledger.marks instanceof Map) ledger.marks.set(recipient, marks);
      else ledger.marks = marks;
    }
    // A direct message's inView mark is its own position, already held by the header: one string, not two.
    marks[stage] = mark === ledger.header.position ? ledger.header.position : mark;
    if (ledger.counts !== null) ledger.counts[stage] += 1;
  }

  replyAwaited(threadId: string, recipient: string, messageId: string): void {
    const root = this.find(threadId);
    if (root === undefined) {
      const key = awaitingKey(recipient, threadId);
      this.awaitingElsewhere.set(key, withId(this.awaitingElsewhere.get(key), messageId));
    } else if (
      root.awaitingRecipient === recipient ||
      (root.awaitingRecipient === null && root.awaitingOthers?.has(recipient) !== true)
    ) {
      root.awaitingRecipient = recipient;
      root.awaitingIds = withId(root.awaitingIds ?? undefined, messageId);
    } else {
      root.awaitingOthers ??= new Map();
      root.awaitingOthers.set(recipient, withId(root.awaitingOthers.get(recipient), messageId));
    }
  }

  repliesSettled(threadId: string, recipient: string): void {
    if (this.awaitingElsewhere.size > 0) this.awaitingElsewhere.delete(awaitingKey(recipient, threadId));
    const root = this.find(threadId);
    if (root === undefined) return;
    if (root.awaitingRecipient === recipient) {
      root.awaitingRecipient = null;
      root.awaitingIds = null;
    } else root.awaitingOthers?.delete(recipient);
  }

  ledgerAttended(messageId: string): number {
    return this.find(messageId)?.attended ?? 0;
  }

  ledgerWakeDue(messageId: string, recipient: string): boolean {
    const ledger = this.find(messageId);
    if (ledger === undefined || !ledger.header.wakeExpected || ledger.notDue?.has(recipient) === true) return false;
    return this.ledgerRecipient(messageId, recipient);
  }

  ledgerWakeDueCount(messageId: string): number {
    const ledger = this.find(messageId);
    if (ledger === undefined || !ledger.header.wakeExpected) return 0;
    const recipients = ledger.members === null ? ledger.header.recipients.length : ledger.members.size;
    return recipients - (ledger.notDue?.size ?? 0);
  }

  wakeNotDue(messageId: string, recipient: string): void {
    const ledger = this.find(messageId)!;
    (ledger.notDue ??= new Set()).add(recipient);
  }

  recipientAttended(messageId: string): void {
    this.find(messageId)!.attended += 1;
  }

  unwokenListed(messageId: string, sentAt: string): void {
    const ledger = this.find(messageId)!;
    if (ledger.unwokenMs === null) this.unwokenLive += 1;
    ledger.unwokenMs = Date.parse(sentAt);
    if (!ledger.unwokenQueued) {
      ledger.unwokenQueued = true;
      this.unwokenQueue.push(ledger);
    }
  }

  unwokenCleared(messageId: string): void {
    const ledger = this.find(messageId);
    if (ledger === undefined || ledger.unwokenMs === null) return;
    ledger.unwokenMs = null;
    this.unwokenLive -= 1;
    const woken = this.unwokenQueue.length - this.unwokenLive;
    if (woken >= MIN_WOKEN_TO_COMPACT && woken >= this.unwokenLive) {
      let kept = 0;
      for (const queued of this.unwokenQueue) {
        if (queued.unwokenMs !== null) this.unwokenQueue[kept++] = queued;
        else queued.unwokenQueued = false;
      }
      this.unwokenQueue.length = kept;
    }
  }

  wakeEscalated(messageId: string, at: string): void {
    this.find(messageId)!.escalatedAt = at;
  }

  replyRequested(messageId: string, dueBy: string): void {
    this.find(messageId)!.replyDueBy = dueBy;
    this.due.set(messageId, Date.parse(dueBy));
  }

  replyOwed(recipient: string, messageId: string, dueBy: string): void {
    let owed = this.owed.get(recipient);
    if (!owed) this.owed.set(recipient, (owed = new Map()));
    owed.set(messageId, Date.parse(dueBy));
  }

  replyOwedCleared(recipient: string, messageId: string): void {
    const owed = this.owed.get(recipient);
    owed?.delete(messageId);
    if (owed?.size === 0) this.owed.delete(recipient);
  }

  repliesMet(messageId: string): void {
    this.due.delete(messageId);
  }

  replyOverdueMarked(messageId: string, at: string): void {
    this.find(messageId)!.replyOverdueAt = at;
    this.due.delete(messageId);
  }

  /** Open reply obligations due at or before `dueBy`, earliest first (ties by id), at most `limit`. */
  dueReplies(dueBy: string, limit: number): DueReply[] {
    const cutoff = Date.parse(dueBy);
    const matching = [...this.due].filter(([, dueMs]) => dueMs <= cutoff);
    matching.sort((a, b) => a[1] - b[1] || bytewise(a[0], b[0]));
    return matching.slice(0, limit).map(([messageId]) => {
      const ledger = this.ledgers.get(messageId)!;
      return { messageId, sender: ledger.header.sender, threadId: ledger.header.threadId, dueBy: ledger.replyDueBy! };
    });
  }

  /** What the identity owes: open obligations, and the earliest due time (ISO) among them. */
  repliesOwed(identity: string): RepliesOwed {
    const owed = this.owed.get(identity);
    if (!owed) return { repliesOwed: 0, nextReplyDueBy: null };
    let next = Infinity;
    for (const dueMs of owed.values()) if (dueMs < next) next = dueMs;
    return { repliesOwed: owed.size, nextReplyDueBy: new Date(next).toISOString() };
  }

  /** The unwoken messages sent before the cutoff, oldest first (ties by id, as Redis orders equal scores). */
  unwoken(query: UnwokenQuery): UnwokenPage {
    const cutoff = Date.parse(query.sentBefore);
    const oldest = new Smallest<MessageLedger>(
      query.limit,
      (a, b) => a.unwokenMs! - b.unwokenMs! || bytewise(a.header.messageId, b.header.messageId),
    );
    let count = 0;
    for (const ledger of this.unwokenQueue) {
      const sentMs = ledger.unwokenMs;
      if (sentMs === null || sentMs >= cutoff || (query.pendingOnly && ledger.escalatedAt !== null)) continue;
      count += 1;
      oldest.offer(ledger);
    }
    const messages = oldest.sorted().map((ledger): UnwokenMessage => {
      return {
        messageId: ledger.header.messageId,
        sender: ledger.header.sender,
        sentAt: ledger.header.sentAt,
        recipientCount: ledger.header.recipients.length,
        escalatedAt: ledger.escalatedAt,
      };
    });
    return { count, messages };
  }

  /**
   * The message's whole ledger (undefined: no such message). A recipient list is sorted here without keeping it:
   * audit verify asks this of every message of its scratch views once, and a cached list per message would stay.
   */
  whole(messageId: string): WholeLedger | undefined {
    const ledger = this.ledgers.get(messageId);
    if (!ledger) return undefined;
    const recipients = ledger.header.recipients;
    const sorted = ledger.sorted ?? (recipients.length === 1 ? recipients : [...new Set(recipients)].sort(bytewise));
    return ledgerWith(ledger, sorted);
  }

  /** One page of the message's ledger (undefined: no such message). */
  page(messageId: string, query: LedgerQuery): LedgerPage | undefined {
    const ledger = this.ledgers.get(messageId);
    if (!ledger) return undefined;
    ledger.sorted ??= [...new Set(ledger.header.recipients)].sort(bytewise);
    const sorted = ledger.sorted;
    let start = 0;
    if (query.after !== null) {
      const after = query.after;
      let high = sorted.length;
      while (start < high) {
        const middle = (start + high) >>> 1;
        if (bytewise(sorted[middle], after) <= 0) start = middle + 1;
        else high = middle;
      }
    }
    const recipients = sorted.slice(start, start + query.limit);
    const more = start + query.limit < sorted.length;
    return { ...ledgerWith(ledger, recipients), nextAfter: more ? recipients[recipients.length - 1] : null };
  }
}

/** The key of a recipient's awaited replies in a thread (identities hold no newline). */
const awaitingKey = (recipient: string, threadId: string): string => `${recipient}\n${threadId}`;

/** Woken ledgers may linger in the unwoken queue until they are this many and at least as many as the unwoken. */
const MIN_WOKEN_TO_COMPACT = 64;

/** The message(s) awaiting the recipient's reply in the thread this ledger's message roots. */
function awaitedOnRoot(root: MessageLedger, recipient: string): string | string[] | undefined {
  if (root.awaitingRecipient === recipient) return root.awaitingIds ?? undefined;
  return root.awaitingOthers?.get(recipient);
}

/** One id or several, with one more (an array once there are two). */
function withId(ids: string | string[] | undefined, messageId: string): string | string[] {
  if (ids === undefined) return messageId;
  if (typeof ids === 'string') return [ids, messageId];
  ids.push(messageId);
  return ids;
}

const idList = (ids: string | string[] | undefined): readonly string[] =>
  ids === undefined ? NONE : typeof ids === 'string' ? [ids] : ids;

/** The recipient's marks (undefined: it reached no stage yet, or it is not a recipient). */
function marksOf(ledger: MessageLedger, recipient: string): LedgerMarks | undefined {
  if (ledger.marks instanceof Map) return ledger.marks.get(recipient);
  return ledger.marks !== null && ledger.header.recipients[0] === recipient ? ledger.marks : undefined;
}

/** How many recipients reached the stage. */
function countOf(ledger: MessageLedger, stage: LedgerStage): number {
  if (ledger.counts !== null) return ledger.counts[stage];
  return ledger.marks !== null && !(ledger.marks instanceof Map) && ledger.marks[stage] !== undefined ? 1 : 0;
}

/** The message's ledger as read: its header, counts and marks, and the rows of these recipients (all, or a page). */
function ledgerWith(ledger: MessageLedger, recipients: readonly string[]): WholeLedger {
  const counts = emptyCounts();
  for (const stage of LEDGER_STAGES) counts[stage] = countOf(ledger, stage);
  return {
    message: ledgerMessage(ledger.header),
    counts,
    escalatedAt: ledger.escalatedAt,
    replyDueBy: ledger.replyDueBy,
    replyOverdueAt: ledger.replyOverdueAt,
    rows: recipients.map((recipient) => deliveryRow(recipient, marksOf(ledger, recipient) ?? {})),
  };
}

/** Redis orders members bytewise; identities are ASCII, so code-unit order is the same. */
const bytewise = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
