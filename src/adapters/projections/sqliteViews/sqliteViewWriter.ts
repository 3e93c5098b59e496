/**
 * One generation of the SQLite views as the read model's storage: the lookup
 * the rules read (ReadModelView) and the sink that writes what they decide
 * (ChangeSink, one method per change, each a statement or a counter move).
 * Nothing is decided here; applyEvents + evolve do that.
 *
 * It is used only inside a write transaction (sqliteProjectionStore.ts).
 * The rules ask several questions per fact (has the identity views? its entry?
 * its last activity? its unread total for the wake?), which would be a query
 * each. A per-batch cache answers them instead:
 * - identities: the counter row of each identity the batch touches, read once,
 *   moved in memory, written back once at the end of the batch (flush);
 * - entries, outbox entries, agents, tasks and message ids the batch asked
 *   about or wrote (a miss is remembered too);
 * - messages first recorded in this batch: nobody can have an entry for them
 *   yet except the ones this batch added, so their lookups need no query.
 * It is emptied after every batch (commit or rollback), so it holds at most
 * what one batch touched (the runner's batches are at most 1,000 events): it
 * never grows with the store.
 *
 * Except the identities' counter rows, which a committed batch leaves behind for the next one (at most
 * KEPT_IDENTITIES of them: one per agent, not per message): every batch touches its senders' and recipients' rows, and
 * reading each again was one query per identity per batch. They are trusted only while nothing else can have changed
 * them: the transaction that begins a batch compares the file's stamp (data_version: another connection committed;
 * schema_version: a table was created or dropped, e.g. a generation dropped and made again under the same name) with
 * the one they were kept under, and the store drops them when a transaction fails (dropKept: its changes were rolled
 * back).
 */
import type Database from 'better-sqlite3';
import type { Priority, Role } from '../../../events/types';
import type { ReadModelStorage, EntryState } from '../../../projections/readModel/view';
import type { TaskList, TaskView, WaitingSince } from '../../../projections/readModel/taskView';
import type { InboxEntryFields, MessageSummary } from '../../../projections/viewChanges';
import { dueAt, waitingSinceMark } from '../../../projections/readModel/taskView';
import type { LedgerHeader, LedgerStage } from '../../../projections/readModel/ledger';
import type { Addressee } from '../../../events/addressing';
import { SqliteLedgerWriter } from './sqliteLedgerWriter';

interface IdentityRow {
  hasViews: boolean;
  low: number;
  normal: number;
  high: number;
  lastActivityAt: string | null;
  tasksWaiting: number;
  /** waitingSinceMark of its tasksWaitingSince (null while no task waits on it). */
  tasksWaitingSince: string | null;
  unseen: number;
  repliesOwed: number;
  dirty: boolean;
}

interface CachedEntry extends EntryState {
  readonly position: number;
  readonly fields: { readonly priority: Priority };
  readonly msg: number;
  readAt: string | null;
  archivedAt: string | null;
  seenAt: string | null;
}

type StoredIdentity = {
  has_views: number;
  unread_low: number;
  unread_normal: number;
  unread_high: number;
  last_activity_at: string | null;
  tasks_waiting: number;
  tasks_waiting_since: string | null;
  unseen: number;
  replies_owed: number;
};

/** Identity rows kept from one batch to the next at most (one per agent: a swarm larger than this reads them again). */
const KEPT_IDENTITIES = 10_000;

const INBOX = 0;
const OUTBOX = 1;
/** Archived inbox entries: moved out of the inbox's range, so that listing the inbox never walks them. */
const ARCHIVE = 2;
const boxOf = (entry: CachedEntry): number => (entry.archivedAt === null ? INBOX : ARCHIVE);

export class SqliteViewWriter implements ReadModelStorage {
  private readonly s: ReturnType<typeof prepareWriter>;
  private readonly ledger: SqliteLedgerWriter;
  private identities = new Map<string, IdentityRow>();
  private entries = new Map<string, CachedEntry | null>();
  private outbox = new Map<string, boolean>();
  private msgIds = new Map<string, number | null>();
  private newMessages = new Set<string>();
  private agents = new Map<string, boolean>();
  /** Whether each identity looked up is a registered agent, not retired (the ledger rules ask at every send). */
  private activeAgents = new Map<string, boolean>();
  private tasks = new Map<string, TaskView | null>();
  /** The file's stamp when `identities` was last known true (null: nothing kept). */
  private keptUnder: string | null = null;

  constructor(
    db: Database.Database,
    readonly generation: string,
  ) {
    this.s = prepareWriter(db, generation);
    this.ledger = new SqliteLedgerWriter(
      db,
      generation,
      (identity, by) => {
        const row = this.identity(identity);
        row.repliesOwed += by;
        row.dirty = true;
      },
      (messageId) => this.msgOf(messageId),
      (header) => this.messageOfLedger(header),
      (messageId) => this.newMessages.has(messageId),
    );
  }

  /** The generation's stored checkpoint and log (read inside the write transaction). */
  state(): { checkpoint: bigint | null; logIdentity: string | null } {
    const row = this.s.state.get() as { checkpoint: bigint | null; log_identity: string | null };
    return { checkpoint: row.checkpoint, logIdentity: row.log_identity };
  }

  setCheckpoint(checkpoint: bigint | null): void {
    this.s.setCheckpoint.run(checkpoint);
  }

  setLogIdentity(logIdentity: string): void {
    this.s.setLogIdentity.run(logIdentity);
  }

  /**
   * Called first in a batch's transaction: keeps the identity rows of the batches before only if the file's stamp is
   * the one they were kept under (nobody else changed the file since, nor its tables).
   */
  beginBatch(): void {
    const data = this.s.dataVersion.get() as { data_version: number };
    const schema = this.s.schemaVersion.get() as { schema_version: number };
    const stamp = `${data.data_version}:${schema.schema_version}`;
    if (stamp !== this.keptUnder || this.identities.size > KEPT_IDENTITIES) this.identities = new Map();
    this.keptUnder = stamp;
  }

  /** Forgets the kept identity rows (the transaction failed: what the batch moved in them was rolled back). */
  dropKept(): void {
    this.identities = new Map();
    this.keptUnder = null;
  }

  /** Writes the counter rows and the ledgers the batch moved, then forgets the batch (identity rows stay, clean). */
  flush(): void {
    this.ledger.flush();
    for (const [identity, row] of this.identities) {
      if (!row.dirty) continue;
      row.dirty = false;
      this.s.upsertIdentity.run(
        identity,
        row.hasViews ? 1 : 0,
        row.low,
        row.normal,
        row.high,
        row.lastActivityAt,
        row.tasksWaiting,
        row.tasksWaitingSince,
        row.unseen,
        row.repliesOwed,
      );
    }
    this.forget();
  }

  /** Empties the per-batch cache, all but the identity rows (dropKept forgets those when the transaction fails). */
  forget(): void {
    this.ledger.forget();
    this.entries = new Map();
    this.outbox = new Map();
    this.msgIds = new Map();
    this.newMessages = new Set();
    this.agents = new Map();
    this.activeAgents = new Map();
    this.tasks = new Map();
  }

  private identity(identity: string): IdentityRow {
    let row = this.identities.get(identity);
    if (row === undefined) {
      const stored = this.s.identity.get(identity) as StoredIdentity | undefined;
      row = stored
        ? {
            hasViews: stored.has_views === 1,
            low: stored.unread_low,
            normal: stored.unread_normal,
            high: stored.unread_high,
            lastActivityAt: stored.last_activity_at,
            tasksWaiting: stored.tasks_waiting,
            tasksWaitingSince: stored.tasks_waiting_since,
            unseen: stored.unseen,
            repliesOwed: stored.replies_owed,
            dirty: false,
          }
        : {
            hasViews: false,
            low: 0,
            normal: 0,
            high: 0,
            lastActivityAt: null,
            tasksWaiting: 0,
            tasksWaitingSince: null,
            unseen: 0,
            repliesOwed: 0,
            dirty: false,
          };
      this.identities.set(identity, row);
    }
    return row;
  }

  private msgOf(messageId: string): number | null {
    let msg = this.msgIds.get(messageId);
    if (msg === undefined) {
      const row = this.s.msgOf.get(messageId) as { msg: number } | undefined;
      msg = row?.msg ?? null;
      this.msgIds.set(messageId, msg);
    }
    return msg;
  }

  // The lookup the read model's rules read (ReadModelView).
  hasViews(identity: string): boolean {
    return this.identity(identity).hasViews;
  }

  entry(recipient: string, messageId: string): CachedEntry | undefined {
    const key = `${recipient}\u0000${messageId}`;
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = null;
      const msg = this.newMessages.has(messageId) ? null : this.msgOf(messageId);
      if (msg !== null) {
        const row = this.s.inboxEntry.get(msg, recipient) as
          | { position: number; priority: Priority; read_at: string | null; archived_at: string | null; seen_at: string | null }
          | undefined;
        if (row)
          entry = {
            position: row.position,
            fields: { priority: row.priority },
            msg,
            readAt: row.read_at,
            archivedAt: row.archived_at,
            seenAt: row.seen_at,
          };
      }
      this.entries.set(key, entry);
    }
    return entry ?? undefined;
  }

  hasOutboxEntry(sender: string, messageId: string): boolean {
    const key = `${sender}\u0000${messageId}`;
    let has = this.outbox.get(key);
    if (has === undefined) {
      const msg = this.newMessages.has(messageId) ? null : this.msgOf(messageId);
      has = msg !== null && this.s.entry.get(msg, sender, OUTBOX) !== undefined;
      this.outbox.set(key, has);
    }
    return has;
  }

  isRegistered(identity: string): boolean {
    let registered = this.agents.get(identity);
    if (registered === undefined) {
      registered = this.s.agentExists.get(identity) !== undefined;
      this.agents.set(identity, registered);
    }
    return registered;
  }

  isActiveAgent(identity: string): boolean {
    let active = this.activeAgents.get(identity);
    if (active === undefined) {
      active = this.s.agentActive.get(identity) !== undefined;
      this.activeAgents.set(identity, active);
    }
    return active;
  }

  lastActivityAt(identity: string): string | null {
    return this.identity(identity).lastActivityAt;
  }

  unreadTotal(identity: string): number {
    const row = this.identity(identity);
    return row.low + row.normal + row.high;
  }

  task(taskId: string): TaskView | undefined {
    let task = this.tasks.get(taskId);
    if (task === undefined) {
      const row = this.s.task.get(taskId) as { record: string } | undefined;
      task = row ? (JSON.parse(row.record) as TaskView) : null;
      this.tasks.set(taskId, task);
    }
    return task ?? undefined;
  }

  // The changes the read model decided (ChangeSink), one method per change: written as they come.
  agentRegistered(identity: string, role: Role, registeredAt: string): void {
    this.s.registerAgent.run(identity, role, registeredAt);
    this.agents.set(identity, true);
    this.activeAgents.set(identity, true);
  }

  agentRetired(identity: string, retiredAt: string): void {
    this.s.retireAgent.run(retiredAt, identity);
    this.activeAgents.set(identity, false);
  }

  messageRecorded(_position: bigint, summary: MessageSummary): void {
    const values = [
      summary.messageId,
      summary.from,
      storedAddressee(summary.to),
      summary.subject,
      summary.priority,
      summary.threadId,
      summary.inReplyTo,
      JSON.stringify(summary.tags),
      summary.sentAt,
      summary.task === null ? null : JSON.stringify(summary.task),
      summary.recipientCount,
      isList(summary.to),
    ];
    const inserted = this.s.insertMessage.run(...values);
    if (inserted.changes === 1) {
      this.msgIds.set(summary.messageId, Number(inserted.lastInsertRowid));
      this.newMessages.add(summary.messageId);
    } else {
      this.s.replaceMessage.run(...values.slice(1), summary.messageId); // recorded again: the latest summary, as in memory
    }
  }

  /** The message's row for an entry; an entry of a message never recorded shows its own fields (as the memory store does). */
  private ensureMessage(entry: InboxEntryFields): number {
    const known = this.msgOf(entry.messageId);
    if (known !== null) return known;
    const inserted = this.s.insertMessage.run(
      entry.messageId,
      entry.from,
      storedAddressee(entry.to),
      entry.subject,
      entry.priority,
      entry.threadId,
      null,
      JSON.stringify(entry.tags),
      entry.sentAt,
      null,
      0,
      isList(entry.to),
    );
    const msg = Number(inserted.lastInsertRowid);
    this.msgIds.set(entry.messageId, msg);
    return msg;
  }

  /** The message a ledger belongs to; a bare one (its header's fields) if it was never recorded. */
  private messageOfLedger(header: LedgerHeader): number {
    const known = this.msgOf(header.messageId);
    if (known !== null) return known;
    const inserted = this.s.insertMessage.run(
      header.messageId,
      header.sender,
      '',
      '',
      'normal',
      header.threadId,
      null,
      '[]',
      header.sentAt,
      null,
      header.recipients.length,
      0,
    );
    const msg = Number(inserted.lastInsertRowid);
    this.msgIds.set(header.messageId, msg);
    return msg;
  }

  identityHasViews(identity: string): void {
    const row = this.identity(identity);
    row.hasViews = true;
    row.dirty = true;
  }

  outboxEntryAdded(sender: string, position: bigint, entry: InboxEntryFields): void {
    this.addEntry(sender, OUTBOX, position, entry, typeof entry.to === 'string' && entry.to.startsWith('AGENT:'));
    this.outbox.set(`${sender}\u0000${entry.messageId}`, true);
  }

  inboxEntryAdded(recipient: string, position: bigint, entry: InboxEntryFields, isBroadcast: boolean): void {
    const msg = this.addEntry(recipient, INBOX, position, entry, isBroadcast);
    this.entries.set(`${recipient}\u0000${entry.messageId}`, {
      position: Number(position),
      fields: { priority: entry.priority },
      msg,
      readAt: null,
      archivedAt: null,
      seenAt: null,
    });
  }

  private addEntry(owner: string, box: number, position: bigint, entry: InboxEntryFields, isBroadcast: boolean): number {
    const msg = this.ensureMessage(entry);
    const to = storedAddressee(entry.to);
    const tags = entry.tags.length === 0 ? null : JSON.stringify(entry.tags); // in the row: no B-tree per tag
    this.s.insertEntry.run(owner, box, position, msg, entry.from, to, entry.threadId, entry.priority, isBroadcast ? 1 : 0, tags);
    if (typeof entry.to !== 'string') this.addListedRecipients(owner, box, position, entry.to);
    return msg;
  }

  unreadMoved(identity: string, priority: Priority, by: 1 | -1): void {
    const row = this.identity(identity);
    row[priority] += by;
    row.dirty = true;
  }

  entryRead(recipient: string, messageId: string, readAt: string): void {
    const entry = this.entry(recipient, messageId)!;
    entry.readAt = readAt;
    this.s.markRead.run(readAt, recipient, boxOf(entry), entry.position);
  }

  entryArchived(recipient: string, messageId: string, archivedAt: string): void {
    const entry = this.entry(recipient, messageId)!;
    entry.archivedAt = archivedAt;
    this.s.moveEntry.run(ARCHIVE, archivedAt, recipient, INBOX, entry.position);
    this.s.deleteEntry.run(recipient, INBOX, entry.position);
  }

  // Issue 13's entry changes: unarchive, seen marks, the unseen counter, a list of recipients.
  entryUnarchived(recipient: string, messageId: string): void {
    const entry = this.entry(recipient, messageId)!;
    entry.archivedAt = null;
    this.s.moveEntry.run(INBOX, null, recipient, ARCHIVE, entry.position);
    this.s.deleteEntry.run(recipient, ARCHIVE, entry.position);
  }

  entrySeen(recipient: string, messageId: string, seenAt: string): void {
    const entry = this.entry(recipient, messageId)!;
    entry.seenAt = seenAt;
    this.s.markSeen.run(seenAt, recipient, boxOf(entry), entry.position);
  }

  unseenMoved(identity: string, by: 1 | -1): void {
    const row = this.identity(identity);
    row.unseen += by;
    row.dirty = true;
  }

  /** A message to a list is found by each listed recipient (the `to` filter), one row each. */
  private addListedRecipients(owner: string, box: number, position: bigint, to: readonly string[]): void {
    for (const recipient of to) this.s.insertRecipient.run(owner, box, recipient, position);
  }

  lastActivityMoved(identity: string, at: string): void {
    const row = this.identity(identity);
    row.lastActivityAt = at;
    row.dirty = true;
  }

  taskUpserted(task: TaskView): void {
    this.s.upsertTask.run(task.taskId, JSON.stringify(task), task.state, dueAt(task));
    this.tasks.set(task.taskId, task);
  }

  taskListed(list: TaskList, identity: string, taskId: string, position: number): void {
    this.s.listTask.run(list, identity, position, taskId);
  }

  taskUnlisted(list: TaskList, identity: string, taskId: string): void {
    const position = this.task(taskId)?.position;
    if (position !== undefined) this.s.unlistTask.run(list, identity, position, taskId);
  }

  tasksWaitingMoved(identity: string, by: 1 | -1): void {
    const row = this.identity(identity);
    row.tasksWaiting += by;
    if (row.tasksWaiting === 0) row.tasksWaitingSince = null;
    row.dirty = true;
  }

  historyLineRecorded(eventId: string, taskId: string): void {
    this.s.recordLine.run(eventId, taskId);
  }

  tasksWaitingBegan(identity: string, since: WaitingSince): void {
    const row = this.identity(identity);
    row.tasksWaitingSince = waitingSinceMark(since);
    row.dirty = true;
  }

  // The delivery ledger (sqliteLedgerWriter.ts): its lookup and its changes.
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

  lastNudge(identity: string): string | undefined {
    return this.ledger.lastNudge(identity);
  }

  ledgerEscalatedAt(messageId: string): string | null {
    return this.ledger.ledgerEscalatedAt(messageId);
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

  nudgeObserved(identity: string, mark: string): void {
    this.ledger.nudgeObserved(identity, mark);
  }

  wakeEscalated(messageId: string, at: string): void {
    this.ledger.wakeEscalated(messageId, at);
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
}

/**
 * Runs a batch's write transaction (`run`); when it fails (its changes rolled back, the COMMIT's included), none of
 * `writers` keeps identity rows the batch may have moved.
 */
export function dropKeptOnFailure<T>(writers: Iterable<SqliteViewWriter>, run: () => T): T {
  try {
    return run();
  } catch (error) {
    for (const writer of writers) writer.dropKept();
    throw error;
  }
}

/** A list of recipients is stored as its JSON (recipient_list = 1): it equals no identity, so the `to` index skips it. */
export const storedAddressee = (to: Addressee): string => (typeof to === 'string' ? to : JSON.stringify(to));
const isList = (to: Addressee): number => (typeof to === 'string' ? 0 : 1);

function prepareWriter(db: Database.Database, g: string) {
  return {
    state: db.prepare(`SELECT checkpoint, log_identity FROM ${g}_state WHERE id = 1`).safeIntegers(true),
    dataVersion: db.prepare('PRAGMA data_version'),
    schemaVersion: db.prepare('PRAGMA schema_version'),
    setCheckpoint: db.prepare(`UPDATE ${g}_state SET checkpoint = ? WHERE id = 1`),
    setLogIdentity: db.prepare(`UPDATE ${g}_state SET log_identity = ? WHERE id = 1`),
    identity: db.prepare(
      `SELECT has_views, unread_low, unread_normal, unread_high, last_activity_at, tasks_waiting, tasks_waiting_since,
         unseen, replies_owed
       FROM ${g}_identities WHERE identity = ?`,
    ),
    upsertIdentity: db.prepare(
      `INSERT INTO ${g}_identities
         (identity, has_views, unread_low, unread_normal, unread_high, last_activity_at, tasks_waiting, tasks_waiting_since,
          unseen, replies_owed)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (identity) DO UPDATE SET has_views = excluded.has_views, unread_low = excluded.unread_low,
         unread_normal = excluded.unread_normal, unread_high = excluded.unread_high,
         last_activity_at = excluded.last_activity_at, tasks_waiting = excluded.tasks_waiting,
         tasks_waiting_since = excluded.tasks_waiting_since,
         unseen = excluded.unseen, replies_owed = excluded.replies_owed`,
    ),
    msgOf: db.prepare(`SELECT msg FROM ${g}_messages WHERE message_id = ?`),
    entry: db.prepare(`SELECT position FROM ${g}_entries WHERE msg = ? AND owner = ? AND box = ?`),
    inboxEntry: db.prepare(
      `SELECT position, priority, read_at, archived_at, seen_at FROM ${g}_entries
       WHERE msg = ? AND owner = ? AND box IN (${INBOX}, ${ARCHIVE})`,
    ),
    agentExists: db.prepare(`SELECT 1 FROM ${g}_agents WHERE identity = ?`),
    agentActive: db.prepare(`SELECT 1 FROM ${g}_agents WHERE identity = ? AND retired = 0`),
    task: db.prepare(`SELECT record FROM ${g}_tasks WHERE task_id = ?`),
    registerAgent: db.prepare(
      `INSERT INTO ${g}_agents (identity, role, registered_at, retired, retired_at) VALUES (?, ?, ?, 0, NULL)
       ON CONFLICT (identity) DO UPDATE SET role = excluded.role, registered_at = excluded.registered_at, retired = 0, retired_at = NULL`,
    ),
    retireAgent: db.prepare(`UPDATE ${g}_agents SET retired = 1, retired_at = ? WHERE identity = ?`),
    insertMessage: db.prepare(
      `INSERT OR IGNORE INTO ${g}_messages
       (message_id, sender, recipient, subject, priority, thread_id, in_reply_to, tags, sent_at, task, recipient_count, recipient_list)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    replaceMessage: db.prepare(
      `UPDATE ${g}_messages SET sender = ?, recipient = ?, subject = ?, priority = ?, thread_id = ?, in_reply_to = ?, tags = ?,
       sent_at = ?, task = ?, recipient_count = ?, recipient_list = ? WHERE message_id = ?`,
    ),
    insertEntry: db.prepare(
      `INSERT INTO ${g}_entries (owner, box, position, msg, sender, recipient, thread_id, priority, read_at, archived_at, is_broadcast, tags)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
    ),
    // An entry's changes go by its primary key (the rules found its position first): no index walk.
    markRead: db.prepare(`UPDATE ${g}_entries SET read_at = ? WHERE owner = ? AND box = ? AND position = ?`),
    // Archiving and unarchiving move the row between the inbox's and the archive's range (insert, then delete).
    moveEntry: db.prepare(
      `INSERT INTO ${g}_entries (owner, box, position, msg, sender, recipient, thread_id, priority, read_at, archived_at, is_broadcast, seen_at, tags)
       SELECT owner, ?, position, msg, sender, recipient, thread_id, priority, read_at, ?, is_broadcast, seen_at, tags
       FROM ${g}_entries WHERE owner = ? AND box = ? AND position = ?`,
    ),
    deleteEntry: db.prepare(`DELETE FROM ${g}_entries WHERE owner = ? AND box = ? AND position = ?`),
    upsertTask: db.prepare(
      `INSERT INTO ${g}_tasks (task_id, record, state, due_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (task_id) DO UPDATE SET record = excluded.record, state = excluded.state, due_at = excluded.due_at`,
    ),
    recordLine: db.prepare(`INSERT OR IGNORE INTO ${g}_task_lines (event_id, task_id) VALUES (?, ?)`),
    listTask: db.prepare(`INSERT OR IGNORE INTO ${g}_task_lists (list, identity, position, task_id) VALUES (?, ?, ?, ?)`),
    markSeen: db.prepare(`UPDATE ${g}_entries SET seen_at = ? WHERE owner = ? AND box = ? AND position = ?`),
    insertRecipient: db.prepare(
      `INSERT OR IGNORE INTO ${g}_entry_recipients (owner, box, recipient, position) VALUES (?, ?, ?, ?)`,
    ),
    unlistTask: db.prepare(`DELETE FROM ${g}_task_lists WHERE list = ? AND identity = ? AND position = ? AND task_id = ?`),
  };
}
