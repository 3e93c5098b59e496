/**
 * Lean storage around the read model, for one sequential pass over a log:
 * `audit verify` rebuilds into it, and the rules' specs fold their `given`
 * into it. It decides nothing (applyEvents + evolve do); it keeps flags
 * instead of the live store's indexes, so rebuilding a million events stays
 * within seconds, and lists only what verify compares (all, unread, outbox, archived).
 */
import type { Priority } from '../../events/types';
import type { AgentView, HeartbeatCounts, ListedMessage } from '../projectionStore';
import type { InboxEntryFields, MessageSummary, ProjectedEvent, WakeEvent } from '../viewChanges';
import { applyEvents } from './applyEvents';
import type { Role } from '../../events/types';
import type { EntryState, ReadModelStorage } from './view';
import type { TaskList, TaskView, WaitingSince } from './taskView';
import { TaskViewsMemory } from './taskViewsMemory';
import type { LedgerHeader, LedgerPage, LedgerQuery, LedgerStage } from './ledger';
import { LedgerMemory } from './ledgerMemory';

export interface ScratchEntry extends EntryState {
  readonly fields: InboxEntryFields;
  readAt: string | null;
  archivedAt: string | null;
  seenAt: string | null;
}

export type ScratchListing = 'inbox' | 'unread' | 'outbox' | 'archived';

class ScratchAgent {
  readonly inbox: ScratchEntry[] = []; // ascending log position (the log is applied in order)
  readonly byId = new Map<string, ScratchEntry>();
  /**
   * The outbox, ascending log position: each entry's fields and position side by side, with no entry object of its
   * own (an outbox entry is never read, archived or seen), which were ~5% of the heap of a 200,000-event rebuild.
   */
  readonly outbox: InboxEntryFields[] = [];
  readonly outboxPositions: number[] = [];
  readonly outboxIds = new Set<string>();
  readonly byPriority: Record<Priority, number> = { low: 0, normal: 0, high: 0 };
  unread = 0;
  unseen = 0;
  lastActivityAt: string | null = null;
  /** Index of the oldest entry that may still be unread (only an unarchived entry becomes unread again: see unarchived). */
  private oldestCandidate = 0;

  /** An entry back in the inbox may be unread again: the oldest unread is looked for from it on. */
  unarchived(entry: ScratchEntry): void {
    let low = 0;
    let high = this.inbox.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.inbox[mid].position < entry.position) low = mid + 1;
      else high = mid;
    }
    this.oldestCandidate = Math.min(this.oldestCandidate, low);
  }

  oldestUnreadAt(): string | null {
    while (this.oldestCandidate < this.inbox.length) {
      const entry = this.inbox[this.oldestCandidate];
      if (entry.readAt === null && entry.archivedAt === null) return entry.fields.sentAt;
      this.oldestCandidate++;
    }
    return null;
  }
}

export class ScratchViews implements ReadModelStorage {
  private readonly agentViews = new Map<string, AgentView>();
  /**
   * The summary fields a listing shows beyond an entry's own, kept only where they are not the defaults
   * (every other listed field is in the entry): a million full summaries would double the heap.
   */
  private readonly extras = new Map<string, Pick<MessageSummary, 'inReplyTo' | 'task'>>();
  private readonly agents = new Map<string, ScratchAgent>();
  /** The task views (the same storage the memory store keeps them in). */
  readonly tasks = new TaskViewsMemory();
  /** The delivery ledger (the same storage the memory store keeps it in). */
  readonly ledger = new LedgerMemory();
  private lastPosition: bigint | null = null;
  /** The messages in send order and their audiences (ledgersInSendOrder). */
  private readonly sent: string[] = [];
  private readonly audiences: number[] = [];

  get checkpoint(): bigint | null {
    return this.lastPosition;
  }

  /** Applies the batch past the checkpoint; returns the wakes that were due. */
  applyBatch(batch: readonly ProjectedEvent[]): WakeEvent[] {
    const wakes: WakeEvent[] = [];
    this.lastPosition = applyEvents(this, batch, this.lastPosition, wakes);
    return wakes;
  }

  // The changes the read model decided (ChangeSink), written as they come.
  agentRegistered(identity: string, role: Role, registeredAt: string): void {
    this.agentViews.set(identity, { identity, role, registeredAt, retired: false, retiredAt: null });
  }

  agentRetired(identity: string, retiredAt: string): void {
    this.agentViews.set(identity, { ...this.agentViews.get(identity)!, retired: true, retiredAt });
  }

  messageRecorded(_position: bigint, { messageId, inReplyTo, task }: MessageSummary): void {
    if (inReplyTo !== null || task !== null) this.extras.set(messageId, { inReplyTo, task });
  }

  identityHasViews(identity: string): void {
    this.agents.set(identity, new ScratchAgent());
  }

  outboxEntryAdded(sender: string, position: bigint, entry: InboxEntryFields): void {
    const agent = this.agent(sender);
    agent.outbox.push(entry);
    agent.outboxPositions.push(Number(position));
    agent.outboxIds.add(entry.messageId);
  }

  inboxEntryAdded(recipient: string, position: bigint, fields: InboxEntryFields): void {
    const agent = this.agent(recipient);
    const entry: ScratchEntry = { position: Number(position), fields, readAt: null, archivedAt: null, seenAt: null };
    agent.byId.set(fields.messageId, entry);
    agent.inbox.push(entry);
  }

  unreadMoved(identity: string, priority: Priority, by: 1 | -1): void {
    const agent = this.agent(identity);
    agent.unread += by;
    agent.byPriority[priority] += by;
  }

  entryRead(recipient: string, messageId: string, readAt: string): void {
    this.agent(recipient).byId.get(messageId)!.readAt = readAt;
  }

  entryArchived(recipient: string, messageId: string, archivedAt: string): void {
    this.agent(recipient).byId.get(messageId)!.archivedAt = archivedAt;
  }

  entryUnarchived(recipient: string, messageId: string): void {
    const agent = this.agent(recipient);
    const entry = agent.byId.get(messageId)!;
    entry.archivedAt = null;
    agent.unarchived(entry);
  }

  entrySeen(recipient: string, messageId: string, seenAt: string): void {
    this.agent(recipient).byId.get(messageId)!.seenAt = seenAt;
  }

  unseenMoved(identity: string, by: 1 | -1): void {
    this.agent(identity).unseen += by;
  }

  lastActivityMoved(identity: string, at: string): void {
    this.agent(identity).lastActivityAt = at;
  }

  taskUpserted(task: TaskView): void {
    this.tasks.taskUpserted(task);
  }

  taskListed(list: TaskList, identity: string, taskId: string, position: number): void {
    this.tasks.taskListed(list, identity, taskId, position);
  }

  taskUnlisted(list: TaskList, identity: string, taskId: string): void {
    this.tasks.taskUnlisted(list, identity, taskId);
  }

  tasksWaitingMoved(identity: string, by: 1 | -1): void {
    this.tasks.tasksWaitingMoved(identity, by);
  }

  tasksWaitingBegan(identity: string, since: WaitingSince): void {
    this.tasks.tasksWaitingBegan(identity, since);
  }

  historyLineRecorded(eventId: string, taskId: string): void {
    this.tasks.historyLineRecorded(eventId, taskId);
  }

  task(taskId: string): TaskView | undefined {
    return this.tasks.task(taskId);
  }

  // The delivery ledger (ledgerMemory.ts): its lookup and its changes.
  ledgerOpen(messageId: string): boolean {
    return this.ledger.ledgerOpen(messageId);
  }

  ledgerRecipient(messageId: string, identity: string): boolean {
    return this.ledger.ledgerRecipient(messageId, identity);
  }

  ledgerMark(messageId: string, recipient: string, stage: LedgerStage): string | undefined {
    return this.ledger.ledgerMark(messageId, recipient, stage);
  }

  awaitingReply(threadId: string, recipient: string): readonly string[] {
    return this.ledger.awaitingReply(threadId, recipient);
  }

  ledgerOpened(header: LedgerHeader): void {
    this.ledger.ledgerOpened(header);
    this.sent.push(header.messageId);
    this.audiences.push(header.recipients.length);
  }

  /**
   * Every message with a ledger in send order, with its audience (how many recipients): audit verify reads the live
   * ledgers in this order, the stores' own (ledgerCompare.ts). Kept as it comes (a ledger opens once) rather than
   * sorted from the ledger's map at the end, which cost verify ~1.3 s at 1M events.
   */
  ledgersInSendOrder(): { messageIds: readonly string[]; audiences: readonly number[] } {
    return { messageIds: this.sent, audiences: this.audiences };
  }

  ledgerStageReached(messageId: string, recipient: string, stage: LedgerStage, mark: string): void {
    this.ledger.ledgerStageReached(messageId, recipient, stage, mark);
  }

  replyAwaited(threadId: string, recipient: string, messageId: string): void {
    this.ledger.replyAwaited(threadId, recipient, messageId);
  }

  repliesSettled(threadId: string, recipient: string): void {
    this.ledger.repliesSettled(threadId, recipient);
  }

  ledgerCount(messageId: string, stage: LedgerStage): number {
    return this.ledger.ledgerCount(messageId, stage);
  }

  ledgerAttended(messageId: string): number {
    return this.ledger.ledgerAttended(messageId);
  }

  ledgerWakeDue(messageId: string, recipient: string): boolean {
    return this.ledger.ledgerWakeDue(messageId, recipient);
  }

  ledgerWakeDueCount(messageId: string): number {
    return this.ledger.ledgerWakeDueCount(messageId);
  }

  ledgerEscalatedAt(messageId: string): string | null {
    return this.ledger.ledgerEscalatedAt(messageId);
  }

  unwokenListed(messageId: string, sentAt: string): void {
    this.ledger.unwokenListed(messageId, sentAt);
  }

  unwokenCleared(messageId: string): void {
    this.ledger.unwokenCleared(messageId);
  }

  wakeNotDue(messageId: string, recipient: string): void {
    this.ledger.wakeNotDue(messageId, recipient);
  }

  recipientAttended(messageId: string): void {
    this.ledger.recipientAttended(messageId);
  }

  lastNudge(identity: string): string | undefined {
    return this.ledger.lastNudge(identity);
  }

  nudgeObserved(identity: string, mark: string): void {
    this.ledger.nudgeObserved(identity, mark);
  }

  wakeEscalated(messageId: string, at: string): void {
    this.ledger.wakeEscalated(messageId, at);
  }

  ledgerRecipients(messageId: string): readonly string[] {
    return this.ledger.ledgerRecipients(messageId);
  }

  ledgerReplyDueBy(messageId: string): string | null {
    return this.ledger.ledgerReplyDueBy(messageId);
  }

  ledgerOverdueAt(messageId: string): string | null {
    return this.ledger.ledgerOverdueAt(messageId);
  }

  replyRequested(messageId: string, dueBy: string): void {
    this.ledger.replyRequested(messageId, dueBy);
  }

  replyOwed(recipient: string, messageId: string, dueBy: string): void {
    this.ledger.replyOwed(recipient, messageId, dueBy);
  }

  replyOwedCleared(recipient: string, messageId: string): void {
    this.ledger.replyOwedCleared(recipient, messageId);
  }

  repliesMet(messageId: string): void {
    this.ledger.repliesMet(messageId);
  }

  replyOverdueMarked(messageId: string, at: string): void {
    this.ledger.replyOverdueMarked(messageId, at);
  }

  deliveryLedger(messageId: string, query: LedgerQuery): LedgerPage | undefined {
    return this.ledger.page(messageId, query);
  }

  private agent(identity: string): ScratchAgent {
    let agent = this.agents.get(identity);
    if (!agent) this.agents.set(identity, (agent = new ScratchAgent()));
    return agent;
  }

  // The lookup the rules read (ReadModelView).
  hasViews(identity: string): boolean {
    return this.agents.has(identity);
  }

  entry(recipient: string, messageId: string): EntryState | undefined {
    return this.agents.get(recipient)?.byId.get(messageId);
  }

  hasOutboxEntry(sender: string, messageId: string): boolean {
    return this.agents.get(sender)?.outboxIds.has(messageId) ?? false;
  }

  isRegistered(identity: string): boolean {
    return this.agentViews.has(identity);
  }

  isActiveAgent(identity: string): boolean {
    return this.agentViews.get(identity)?.retired === false;
  }

  lastActivityAt(identity: string): string | null {
    return this.agents.get(identity)?.lastActivityAt ?? null;
  }

  unreadTotal(identity: string): number {
    return this.agents.get(identity)?.unread ?? 0;
  }

  // What verify compares.
  agentList(): AgentView[] {
    return [...this.agentViews.values()];
  }

  identities(): string[] {
    return [...new Set([...this.agentViews.keys(), ...this.agents.keys(), ...this.tasks.waitingIdentities()])];
  }

  /** One agent of agentList, or undefined; and whether `identity` is one of identities (without listing them). */
  agentEntry(identity: string): { agent: AgentView | undefined; known: boolean } {
    const agent = this.agentViews.get(identity);
    return { agent, known: agent !== undefined || this.agents.has(identity) || this.tasks.isWaitedOn(identity) };
  }

  heartbeat(identity: string): HeartbeatCounts {
    const agent = this.agents.get(identity);
    return {
      identity,
      unread: agent?.unread ?? 0,
      unseen: agent?.unseen ?? 0,
      byPriority: { low: 0, normal: 0, high: 0, ...agent?.byPriority },
      oldestUnreadAt: agent?.oldestUnreadAt() ?? null,
      lastActivityAt: agent?.lastActivityAt ?? null,
      tasksWaiting: this.tasks.tasksWaiting(identity),
      tasksWaitingSince: this.tasks.tasksWaitingSince(identity),
      ...this.ledger.repliesOwed(identity),
    };
  }

  /** A listing newest first, as entries (turned into ListedMessage only where needed: see `listed`). */
  listing(identity: string, view: ScratchListing): ScratchEntry[] {
    const agent = this.agents.get(identity);
    if (!agent) return [];
    const result: ScratchEntry[] = [];
    if (view === 'outbox') {
      for (let i = agent.outbox.length - 1; i >= 0; i--) {
        const position = agent.outboxPositions[i];
        result.push({ position, fields: agent.outbox[i], readAt: null, archivedAt: null, seenAt: null });
      }
      return result;
    }
    for (let i = agent.inbox.length - 1; i >= 0; i--) {
      const entry = agent.inbox[i];
      if (view === 'archived') {
        if (entry.archivedAt !== null) result.push(entry);
      } else if (entry.archivedAt === null && (view === 'inbox' || entry.readAt === null)) result.push(entry);
    }
    return result;
  }

  /** The fields a listing shows beyond the entry's own (null: the defaults). */
  extrasOf(messageId: string): Pick<MessageSummary, 'inReplyTo' | 'task'> | undefined {
    return this.extras.get(messageId);
  }

  /**
   * The listed form of an entry, exactly as the port returns it (readAt only in the inbox; archivedAt only in the
   * archived listing; task only when there is one).
   */
  listed(entry: ScratchEntry, view: ScratchListing): ListedMessage {
    const f = entry.fields;
    const extra = this.extras.get(f.messageId);
    const listed: ListedMessage = {
      messageId: f.messageId,
      from: f.from,
      to: f.to,
      subject: f.subject,
      priority: f.priority,
      threadId: f.threadId,
      inReplyTo: extra?.inReplyTo ?? null,
      tags: f.tags,
      sentAt: f.sentAt,
      readAt: view === 'outbox' ? null : entry.readAt,
      seenAt: view === 'outbox' ? null : entry.seenAt,
    };
    if (view === 'archived') listed.archivedAt = entry.archivedAt!;
    if (extra?.task) listed.task = extra.task;
    return listed;
  }
}
