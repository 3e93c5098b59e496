/**
 * In-memory projection store (embedded default): rebuilt from the log at start, exact counts, wakes after commit.
 * Storage around the read model (src/projections/readModel): it answers the rules' lookups and writes their changes.
 */
import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../../tokens';
import type { ListQuery } from '../../projections/listQuery';
import type {
  AgentEntries,
  AgentView,
  ApplyOptions,
  HeartbeatCounts,
  ListedMessage,
  HistoryLinePage,
  LedgerIdPage,
  ProjectionStore,
  UnreadCount,
  ViewPage,
  ViewsBinding,
} from '../../projections/projectionStore';
import { applyEvents } from '../../projections/readModel/applyEvents';
import type { Priority, Role } from '../../events/types';
import type { ReadModelStorage } from '../../projections/readModel/view';
import type { InboxEntryFields, MessageSummary, ProjectedEvent, WakeEvent } from '../../projections/viewChanges';
import type { WakeBus } from '../../projections/wakeBus';
import { MemoryInbox, type InboxEntry } from './memoryInbox';
import { newestFirst } from './sortedPositions';
import type { TaskList, TaskView, WaitingSince } from '../../projections/readModel/taskView';
import { TaskViewsMemory, type TaskListQuery, type TaskViewPage } from '../../projections/readModel/taskViewsMemory';
import type {
  LedgerHeader,
  LedgerPage,
  LedgerQuery,
  LedgerStage,
  UnwokenPage,
  UnwokenQuery,
  DueReply,
  WholeLedger,
} from '../../projections/readModel/ledger';
import { lastNudgeOf, type LastNudge } from '../../projections/readModel/ledger';
import { LedgerMemory, type LedgerShelf, type MessageLedger } from '../../projections/readModel/ledgerMemory';
import { ShardedMap } from '../../support/shardedMap';

const matches = (entry: InboxEntry, query: ListQuery): boolean => {
  const f = entry.fields;
  if (query.box === 'inbox' && (entry.archivedAt !== null) !== (query.status === 'archived')) return false;
  if (query.status === 'read' && entry.readAt === null) return false;
  if (query.status === 'unread' && entry.readAt !== null) return false; // a read entry not yet compacted out of `unread`
  if (query.from !== undefined && f.from !== query.from) return false;
  if (query.to !== undefined && !(f.to === query.to || (typeof f.to !== 'string' && f.to.includes(query.to)))) return false;
  if (query.threadId !== undefined && f.threadId !== query.threadId) return false;
  if (query.priority !== undefined && f.priority !== query.priority) return false;
  if (query.tags !== undefined && !query.tags.every((tag) => f.tags.includes(tag))) return false;
  return true;
};

/**
 * One per message: its summary, and what most messages have exactly one of, kept here rather than in a map of
 * their own: the sender whose outbox holds it and the first recipient's inbox entry (a direct message's only one).
 * A million-event rebuild spent ~2.4 s on those maps (per message an insertion into each, and a look-up of each
 * that found nothing before the insertion), each too large to stay in cache; the record is at hand already, the
 * one just recorded. Any further recipient's entry (a broadcast's) is in that recipient's inbox map.
 */
interface MessageRecord {
  summary: MessageSummary | null;
  outboxSender: string | null;
  entryRecipient: string | null;
  entry: InboxEntry | null;
  /** Its delivery ledger (LedgerMemory keeps it here: see ledgerShelf). */
  ledger: MessageLedger | null;
}

@injectable()
export class MemoryProjectionStore implements ProjectionStore, ReadModelStorage {
  readonly backend = 'memory' as const;
  private agents = new Map<string, AgentView>();
  /** One per message for as long as the process runs: sharded (support/shardedMap.ts, why there). */
  private messages = new ShardedMap<MessageRecord>();
  private inboxes = new Map<string, MemoryInbox>();
  private identities = new Map<string, string>();
  private tasks = new TaskViewsMemory();
  /** LedgerMemory keeps each message's ledger on the message's record (MessageRecord), not in a map of its own. */
  private readonly ledgerShelf: LedgerShelf = {
    get: (messageId) => this.record(messageId)?.ledger ?? undefined,
    set: (messageId, ledger) => {
      this.recordOf(messageId).ledger = ledger;
    },
    partCount: () => this.messages.parts,
    idsOfPart: (part) =>
      this.messages
        .entriesOfPart(part)
        .filter(([, record]) => record.ledger !== null)
        .map(([messageId]) => messageId),
  };
  private ledger = new LedgerMemory(this.ledgerShelf);
  private lastPosition: bigint | null = null;
  private logIdentity: string | null = null;
  /**
   * The identity asked about last and its inbox (undefined: none yet). The rules ask about one identity
   * several times per fact (its views? its entry? then each change they write), always with the fact's
   * own string, so this turns most of those Map lookups into a pointer compare: a million-event rebuild
   * made some eleven lookups per message. Kept in step wherever an inbox is created or dropped.
   */
  private lastIdentity: string | null = null;
  private lastInbox: MemoryInbox | undefined = undefined;
  /** The message asked about last and its record (the rules ask about one message several times per event). */
  private lastMessageId: string | null = null;
  private lastRecord: MessageRecord | undefined = undefined;

  constructor(@inject(TOKENS.WakeBus) private readonly wakeBus: WakeBus) {}

  async applyBatch(batch: readonly ProjectedEvent[], options: ApplyOptions = {}): Promise<void> {
    const wakes: WakeEvent[] = [];
    this.lastPosition = applyEvents(this, batch, this.lastPosition, wakes);
    if (wakes.length > 0 && options.publishWakes !== false) await this.wakeBus.publish(wakes);
  }

  private inbox(identity: string): MemoryInbox {
    return this.find(identity) ?? this.createInbox(identity);
  }

  private find(identity: string): MemoryInbox | undefined {
    if (identity !== this.lastIdentity) {
      this.lastIdentity = identity;
      this.lastInbox = this.inboxes.get(identity);
    }
    return this.lastInbox;
  }

  private createInbox(identity: string): MemoryInbox {
    const inbox = new MemoryInbox();
    this.inboxes.set(identity, inbox);
    this.lastIdentity = identity;
    this.lastInbox = inbox;
    return inbox;
  }

  // The lookup the read model's rules read (ReadModelView).
  hasViews(identity: string): boolean {
    return this.find(identity) !== undefined;
  }

  entry(recipient: string, messageId: string): InboxEntry | undefined {
    const record = this.record(messageId);
    if (record === undefined) return undefined; // no entry anywhere without its record
    if (record.entryRecipient === recipient) return record.entry!;
    return record.entryRecipient === null ? undefined : this.find(recipient)?.entry(messageId);
  }

  hasOutboxEntry(sender: string, messageId: string): boolean {
    const record = this.record(messageId);
    if (record === undefined || record.outboxSender === null) return false;
    return record.outboxSender === sender || (this.find(sender)?.hasOutbox(messageId) ?? false);
  }

  private record(messageId: string): MessageRecord | undefined {
    if (messageId !== this.lastMessageId) {
      this.lastMessageId = messageId;
      this.lastRecord = this.messages.get(messageId);
    }
    return this.lastRecord;
  }

  /** The message's record, made for it if it has none (an entry of a message not recorded keeps the entry's fields). */
  private recordOf(messageId: string): MessageRecord {
    let record = this.record(messageId);
    if (record === undefined) {
      record = { summary: null, outboxSender: null, entryRecipient: null, entry: null, ledger: null };
      this.messages.set(messageId, record);
      this.lastRecord = record;
    }
    return record;
  }

  isRegistered(identity: string): boolean {
    return this.agents.has(identity);
  }

  isActiveAgent(identity: string): boolean {
    return this.agents.get(identity)?.retired === false;
  }

  lastActivityAt(identity: string): string | null {
    return this.find(identity)?.lastActivityAt ?? null;
  }

  unreadTotal(identity: string): number {
    return this.find(identity)?.unreadCount ?? 0;
  }

  task(taskId: string): TaskView | undefined {
    return this.tasks.task(taskId);
  }

  // The changes the read model decided (ChangeSink), written as they come; nothing is decided here.
  agentRegistered(identity: string, role: Role, registeredAt: string): void {
    this.agents.set(identity, { identity, role, registeredAt, retired: false, retiredAt: null });
  }

  agentRetired(identity: string, retiredAt: string): void {
    this.agents.set(identity, { ...this.agents.get(identity)!, retired: true, retiredAt });
  }

  messageRecorded(_position: bigint, summary: MessageSummary): void {
    this.recordOf(summary.messageId).summary = this.compact(summary);
  }

  identityHasViews(identity: string): void {
    this.createInbox(identity);
  }

  // The message's summary carries every entry field with the same values: the sender's outbox and each recipient's
  // inbox share it, one object per message instead of one per view (a 1,000-recipient broadcast: 1 instead of 1,001).
  outboxEntryAdded(sender: string, position: bigint, entry: InboxEntryFields): void {
    const record = this.recordOf(entry.messageId);
    const first = record.outboxSender === null;
    if (first) record.outboxSender = this.intern(sender);
    this.inbox(sender).addOutbox(Number(position), record.summary ?? entry, !first);
  }

  inboxEntryAdded(recipient: string, position: bigint, entry: InboxEntryFields, isBroadcast: boolean): void {
    const record = this.recordOf(entry.messageId);
    const first = record.entryRecipient === null;
    const added = this.inbox(recipient).add(Number(position), record.summary ?? entry, isBroadcast, !first);
    if (first) {
      record.entryRecipient = this.intern(recipient);
      record.entry = added;
    }
  }

  unreadMoved(identity: string, priority: Priority, by: 1 | -1): void {
    this.inbox(identity).moveUnread(priority, by);
  }

  entryRead(recipient: string, messageId: string, readAt: string): void {
    this.entry(recipient, messageId)!.readAt = readAt;
  }

  entryArchived(recipient: string, messageId: string, archivedAt: string): void {
    this.entry(recipient, messageId)!.archivedAt = archivedAt;
  }

  entryUnarchived(recipient: string, messageId: string): void {
    this.inbox(recipient).unarchive(this.entry(recipient, messageId)!);
  }

  entrySeen(recipient: string, messageId: string, seenAt: string): void {
    this.entry(recipient, messageId)!.seenAt = seenAt;
  }

  unseenMoved(identity: string, by: 1 | -1): void {
    this.inbox(identity).unseen += by;
  }

  lastActivityMoved(identity: string, at: string): void {
    this.inbox(identity).lastActivityAt = at;
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

  /**
   * Each event arrives freshly parsed, so the same identity is a new string in every message: keep one
   * copy per identity, and the message id's copy for a thread id that equals it (~100 bytes per message).
   */
  private compact(summary: MessageSummary): MessageSummary {
    summary.from = this.intern(summary.from);
    if (typeof summary.to === 'string') summary.to = this.intern(summary.to);
    if (summary.threadId === summary.messageId) summary.threadId = summary.messageId;
    return summary;
  }

  private intern(identity: string): string {
    const known = this.identities.get(identity);
    if (known !== undefined) return known;
    this.identities.set(identity, identity);
    return identity;
  }

  async checkpoint(): Promise<bigint | null> {
    return this.lastPosition;
  }

  async listMessages(identity: string, query: ListQuery): Promise<ViewPage> {
    const inbox = this.inboxes.get(identity);
    const unreadCount = inbox?.unreadCount ?? 0;
    if (!inbox) return { messages: [], nextBefore: null, unreadCount };
    const source = query.box === 'outbox' ? inbox.outbox : query.status === 'unread' ? inbox.unread : inbox.entries;
    const page: InboxEntry[] = [];
    let hasMore = false;
    const before = query.before;
    for (const entry of newestFirst(source, before === null ? null : Number(before))) {
      if (!matches(entry, query)) continue;
      if (page.length === query.limit) {
        hasMore = true;
        break;
      }
      page.push(entry);
    }
    return {
      messages: page.map((entry) => this.listed(entry, query.box, query.status === 'archived')),
      nextBefore: hasMore ? BigInt(page[page.length - 1].position) : null,
      unreadCount,
    };
  }

  private listed(entry: InboxEntry, box: ListQuery['box'], archived = false): ListedMessage {
    const summary = this.messages.get(entry.fields.messageId)?.summary;
    // Built field by field, not by rest/spread: one object shape for every entry made listing a million
    // entries (audit verify) about twice as fast. A new MessageSummary field must be added here too.
    const s = summary ?? { ...entry.fields, inReplyTo: null, task: null };
    const listed: ListedMessage = {
      messageId: s.messageId,
      from: s.from,
      to: s.to,
      subject: s.subject,
      priority: s.priority,
      threadId: s.threadId,
      inReplyTo: s.inReplyTo,
      tags: s.tags,
      sentAt: s.sentAt,
      readAt: box === 'inbox' ? entry.readAt : null,
      seenAt: box === 'inbox' ? entry.seenAt : null,
    };
    if (archived) listed.archivedAt = entry.archivedAt!;
    if (s.task) listed.task = s.task;
    return listed;
  }

  async unreadCount(identity: string): Promise<UnreadCount> {
    const inbox = this.inboxes.get(identity);
    return {
      unread: inbox?.unreadCount ?? 0,
      unseen: inbox?.unseen ?? 0,
      byPriority: { low: 0, normal: 0, high: 0, ...inbox?.byPriority },
    };
  }

  async heartbeat(identity: string): Promise<HeartbeatCounts> {
    const inbox = this.inboxes.get(identity);
    return {
      identity,
      ...(await this.unreadCount(identity)),
      oldestUnreadAt: inbox?.oldestUnreadAt ?? null,
      lastActivityAt: inbox?.lastActivityAt ?? null,
      tasksWaiting: this.tasks.tasksWaiting(identity),
      tasksWaitingSince: this.tasks.tasksWaitingSince(identity),
      ...this.ledger.repliesOwed(identity),
    };
  }

  async listTasks(identity: string, query: TaskListQuery): Promise<TaskViewPage> {
    return this.tasks.list(identity, query);
  }

  async getTask(taskId: string): Promise<TaskView | undefined> {
    return this.tasks.task(taskId);
  }

  async taskOfHistoryLine(eventId: string): Promise<string | null> {
    return this.tasks.taskOfHistoryLine(eventId);
  }

  async taskHistoryLines(after: string | null, limit: number): Promise<HistoryLinePage> {
    return this.tasks.historyLinePage(after, limit);
  }

  async dueTasks(now: string, limit: number, after?: string): Promise<TaskView[]> {
    return this.tasks.due(now, limit, after);
  }

  async dueReplies(dueBy: string, limit: number): Promise<DueReply[]> {
    return this.ledger.dueReplies(dueBy, limit);
  }

  async lastNudges(): Promise<Map<string, LastNudge>> {
    return new Map([...this.ledger.lastNudges()].map(([identity, mark]) => [identity, lastNudgeOf(mark)]));
  }

  async unwoken(query: UnwokenQuery): Promise<UnwokenPage> {
    return this.ledger.unwoken(query);
  }

  async deliveryLedger(messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined> {
    return this.ledger.page(messageId, query);
  }

  async deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage> {
    return this.ledger.ledgerIds(after, limit);
  }

  async deliveryLedgers(messageIds: readonly string[]): Promise<Map<string, WholeLedger>> {
    const ledgers = new Map<string, WholeLedger>();
    for (const messageId of messageIds) {
      const ledger = this.ledger.whole(messageId);
      if (ledger) ledgers.set(messageId, ledger);
    }
    return ledgers;
  }

  async allHeartbeats(): Promise<HeartbeatCounts[]> {
    const identities = new Set([...this.agents.keys(), ...this.inboxes.keys(), ...this.tasks.waitingIdentities()]);
    return Promise.all([...identities].sort().map((identity) => this.heartbeat(identity)));
  }

  async agentEntries(identity: string): Promise<AgentEntries> {
    const listed = this.agents.has(identity) || this.inboxes.has(identity) || this.tasks.isWaitedOn(identity);
    return { agent: this.agents.get(identity), heartbeat: listed ? await this.heartbeat(identity) : undefined };
  }

  async listAgents(): Promise<AgentView[]> {
    return [...this.agents.values()].sort((a, b) => a.identity.localeCompare(b.identity));
  }

  async reset(): Promise<void> {
    this.agents = new Map();
    this.messages = new ShardedMap();
    this.inboxes = new Map();
    this.identities = new Map();
    this.tasks = new TaskViewsMemory();
    this.ledger = new LedgerMemory(this.ledgerShelf);
    this.lastIdentity = null;
    this.lastInbox = undefined;
    this.lastMessageId = null;
    this.lastRecord = undefined;
    this.lastPosition = null;
  }

  /** In-process views are built from this process's log only: whoever claims them first owns them. */
  async binding(): Promise<ViewsBinding> {
    return {
      location: 'memory',
      logIdentity: this.logIdentity,
      checkpoint: this.lastPosition,
      generation: 'memory',
      liveWriter: null,
    };
  }

  async claim(logIdentity: string): Promise<ViewsBinding> {
    this.logIdentity ??= logIdentity;
    return this.binding();
  }

  async markLiveWriter(): Promise<void> {}

  async releaseLiveWriter(): Promise<void> {}

  async close(): Promise<void> {}
}
