/**
 * The delivery ledger (issue 13) in one generation of the SQLite views: the
 * lookup the ledger rules read and the sink that writes what they decide, as
 * ledgerMemory.ts keeps it in memory (same marks, same counts, same orders).
 * Nothing is decided here (ledgerRules.ts does that). Used inside the
 * writer's transaction only (sqliteViewWriter.ts delegates to it); every
 * lookup is one primary-key read. Ledgers opened by the current batch are kept in
 * memory until the batch is written (sqliteNewLedgers.ts says why). Its rows are
 * keyed by the message's integer (messages.msg), which the view writer resolves
 * from the message id through its per-batch cache (a message this batch recorded
 * costs no query); a message never recorded has no ledger.
 */
import type Database from 'better-sqlite3';
import {
  LEDGER_STAGES,
  type LedgerChangeSink,
  type LedgerHeader,
  type LedgerLookup,
  type LedgerStage,
} from '../../../projections/readModel/ledger';
import { ledgerValues, newLedger, type NewLedger } from './sqliteNewLedgers';

/** A stage's column, in ledgers (its count) and in ledger_rows (its mark). */
export const STAGE_COLUMN: Record<LedgerStage, string> = {
  inView: 'in_view',
  woken: 'woken',
  seen: 'seen',
  read: 'read',
  replied: 'replied',
};

const NONE: readonly string[] = [];

export class SqliteLedgerWriter implements LedgerLookup, LedgerChangeSink {
  private readonly s: ReturnType<typeof prepareLedger>;
  /** Ledgers this batch opened, by the message's integer: changed in memory, inserted at flush. */
  private opened = new Map<number, NewLedger>();

  /**
   * `moveRepliesOwed` moves the identity's counter row (kept by the view writer, flushed with the batch);
   * `msgOf` is the message's integer (null: never recorded), `messageFor` the same, recording a bare message
   * first if there is none (a ledger is opened by the event that records its message, so only in a log the
   * projector never wrote).
   */
  constructor(
    db: Database.Database,
    g: string,
    private readonly moveRepliesOwed: (identity: string, by: 1 | -1) => void,
    private readonly msgOf: (messageId: string) => number | null,
    private readonly messageFor: (header: LedgerHeader) => number,
    private readonly recordedThisBatch: (messageId: string) => boolean,
  ) {
    this.s = prepareLedger(db, g);
  }

  /** Writes the ledgers this batch opened, with what the batch did to them (inside the writer's transaction). */
  flush(): void {
    for (const ledger of this.opened.values()) {
      this.s.insertLedger.run(...ledgerValues(ledger));
      let ordinal = 0;
      for (const [recipient, marks] of ledger.rows)
        this.s.insertRow.run(
          ledger.msg,
          recipient,
          ordinal++,
          marks.inView,
          marks.woken,
          marks.seen,
          marks.read,
          marks.replied,
          ledger.noWake.has(recipient) ? 1 : 0,
        );
    }
    this.opened = new Map();
  }

  /** Forgets the batch's ledgers (after a rollback, they were never written). */
  forget(): void {
    this.opened = new Map();
  }

  /** The ledger of a message opened by this batch, if it is one. */
  private openedLedger(messageId: string): { msg: number | null; ledger: NewLedger | undefined } {
    const msg = this.msgOf(messageId);
    return { msg, ledger: msg === null ? undefined : this.opened.get(msg) };
  }

  ledgerOpen(messageId: string): boolean {
    const { msg, ledger } = this.openedLedger(messageId);
    if (msg === null) return false;
    if (ledger !== undefined) return true;
    // A ledger is opened by the event that records its message: one recorded in this batch has none stored.
    if (this.recordedThisBatch(messageId)) return false;
    return this.s.ledgerExists.get(msg) !== undefined;
  }

  ledgerRecipient(messageId: string, identity: string): boolean {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.rows.has(identity);
    return msg !== null && this.s.rowExists.get(msg, identity) !== undefined;
  }

  ledgerMark(messageId: string, recipient: string, stage: LedgerStage): string | undefined {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.rows.get(recipient)?.[stage] ?? undefined;
    if (msg === null) return undefined;
    const row = this.s.mark[stage].get(msg, recipient) as { mark: string | null } | undefined;
    return row?.mark ?? undefined;
  }

  awaitingReply(threadId: string, recipient: string): readonly string[] {
    // Most sends answer nothing: one keyed look (get) before building the list (all costs about twice as much).
    if (this.s.anyAwaiting.get(threadId, recipient) === undefined) return NONE;
    const rows = this.s.awaiting.all(threadId, recipient) as Array<{ message_id: string }>;
    return rows.map((row) => row.message_id);
  }

  ledgerCount(messageId: string, stage: LedgerStage): number {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.counts[stage];
    return msg === null ? 0 : ((this.s.count[stage].get(msg) as { count: number } | undefined)?.count ?? 0);
  }

  ledgerAttended(messageId: string): number {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.attended;
    return msg === null ? 0 : ((this.s.attended.get(msg) as { count: number } | undefined)?.count ?? 0);
  }

  ledgerWakeDue(messageId: string, recipient: string): boolean {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.header.wakeExpected && ledger.rows.has(recipient) && !ledger.noWake.has(recipient);
    return msg !== null && this.s.wakeDue.get(msg, recipient) !== undefined;
  }

  ledgerWakeDueCount(messageId: string): number {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.header.wakeExpected ? ledger.rows.size - ledger.noWake.size : 0;
    return msg === null ? 0 : ((this.s.wakeDueCount.get(msg) as { count: number } | undefined)?.count ?? 0);
  }

  lastNudge(identity: string): string | undefined {
    return (this.s.lastNudge.get(identity) as { mark: string } | undefined)?.mark;
  }

  ledgerEscalatedAt(messageId: string): string | null {
    const { ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.escalatedAt;
    return this.marks(messageId)?.escalated_at ?? null;
  }

  ledgerRecipients(messageId: string): readonly string[] {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return [...ledger.rows.keys()];
    if (msg === null) return NONE;
    const rows = this.s.recipients.all(msg) as Array<{ recipient: string }>;
    return rows.length === 0 ? NONE : rows.map((row) => row.recipient);
  }

  ledgerReplyDueBy(messageId: string): string | null {
    const { ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.replyDueBy;
    return this.marks(messageId)?.reply_due_by ?? null;
  }

  ledgerOverdueAt(messageId: string): string | null {
    const { ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) return ledger.overdueAt;
    return this.marks(messageId)?.reply_overdue_at ?? null;
  }

  private marks(messageId: string): LedgerMarksRow | undefined {
    const msg = this.msgOf(messageId);
    return msg === null ? undefined : (this.s.marks.get(msg) as LedgerMarksRow | undefined);
  }

  /**
   * Runs a change of the message's ledger: on the batch's copy when this batch opened it (`inMemory`), else as
   * statements (`stored`); a message never recorded has no ledger, so it changes nothing.
   */
  private change(messageId: string, inMemory: (ledger: NewLedger) => void, stored: (msg: number) => void): void {
    const { msg, ledger } = this.openedLedger(messageId);
    if (ledger !== undefined) inMemory(ledger);
    else if (msg !== null) stored(msg);
  }

  ledgerOpened(header: LedgerHeader): void {
    const msg = this.messageFor(header);
    // Each recipient once (as the memory store's page dedupes them), in the header's order (ledgerRecipients).
    this.opened.set(msg, newLedger(msg, header));
  }

  ledgerStageReached(messageId: string, recipient: string, stage: LedgerStage, mark: string): void {
    this.change(
      messageId,
      (ledger) => {
        const row = ledger.rows.get(recipient);
        if (row !== undefined) row[stage] = mark;
        ledger.counts[stage] += 1; // as the statements do: the count moves even for a row that is not there
      },
      (msg) => {
        this.s.setMark[stage].run(mark, msg, recipient);
        this.s.countUp[stage].run(msg);
      },
    );
  }

  replyAwaited(threadId: string, recipient: string, messageId: string): void {
    this.s.await.run(threadId, recipient, threadId, recipient, messageId);
  }

  repliesSettled(threadId: string, recipient: string): void {
    this.s.settle.run(threadId, recipient);
  }

  wakeNotDue(messageId: string, recipient: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.noWake.add(recipient);
      },
      (msg) => {
        if (this.s.noWake.run(msg, recipient).changes === 1) this.s.noWakeUp.run(msg);
      },
    );
  }

  recipientAttended(messageId: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.attended += 1;
      },
      (msg) => this.s.attendedUp.run(msg),
    );
  }

  unwokenListed(messageId: string, sentAt: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.unwokenMs = Date.parse(sentAt);
        ledger.pendingEscalation = true;
      },
      (msg) => this.s.listUnwoken.run(Date.parse(sentAt), msg),
    );
  }

  unwokenCleared(messageId: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.unwokenMs = null;
        ledger.pendingEscalation = false;
      },
      (msg) => this.s.clearUnwoken.run(msg),
    );
  }

  wakeEscalated(messageId: string, at: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.escalatedAt = at;
        ledger.pendingEscalation = false;
      },
      (msg) => this.s.escalate.run(at, msg),
    );
  }

  nudgeObserved(identity: string, mark: string): void {
    this.s.setLastNudge.run(identity, mark);
  }

  replyRequested(messageId: string, dueBy: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.replyDueBy = dueBy;
        ledger.dueMs = Date.parse(dueBy);
      },
      (msg) => this.s.requestReply.run(dueBy, Date.parse(dueBy), msg),
    );
  }

  replyOwed(recipient: string, messageId: string, dueBy: string): void {
    // Kept once per (identity, message), its due time the latest written (the memory store's Map.set).
    if (this.s.owe.run(recipient, messageId, Date.parse(dueBy)).changes === 1) this.moveRepliesOwed(recipient, 1);
    else this.s.reOwe.run(Date.parse(dueBy), recipient, messageId);
  }

  replyOwedCleared(recipient: string, messageId: string): void {
    if (this.s.clearOwed.run(recipient, messageId).changes === 1) this.moveRepliesOwed(recipient, -1);
  }

  repliesMet(messageId: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.dueMs = null;
      },
      (msg) => this.s.undue.run(msg),
    );
  }

  replyOverdueMarked(messageId: string, at: string): void {
    this.change(
      messageId,
      (ledger) => {
        ledger.overdueAt = at;
        ledger.dueMs = null;
      },
      (msg) => this.s.markOverdue.run(at, msg),
    );
  }
}

interface LedgerMarksRow {
  escalated_at: string | null;
  reply_due_by: string | null;
  reply_overdue_at: string | null;
}

const perStage = <T>(make: (column: string) => T): Record<LedgerStage, T> =>
  Object.fromEntries(LEDGER_STAGES.map((stage) => [stage, make(STAGE_COLUMN[stage])])) as Record<LedgerStage, T>;

function prepareLedger(db: Database.Database, g: string) {
  return {
    ledgerExists: db.prepare(`SELECT 1 FROM ${g}_ledgers WHERE msg = ?`),
    rowExists: db.prepare(`SELECT 1 FROM ${g}_ledger_rows WHERE msg = ? AND recipient = ?`),
    mark: perStage((column) => db.prepare(`SELECT ${column} AS mark FROM ${g}_ledger_rows WHERE msg = ? AND recipient = ?`)),
    count: perStage((column) => db.prepare(`SELECT ${column} AS count FROM ${g}_ledgers WHERE msg = ?`)),
    attended: db.prepare(`SELECT attended AS count FROM ${g}_ledgers WHERE msg = ?`),
    wakeDue: db.prepare(
      `SELECT 1 FROM ${g}_ledger_rows r JOIN ${g}_ledgers l ON l.msg = r.msg
       WHERE r.msg = ? AND r.recipient = ? AND r.no_wake = 0 AND l.wake_expected = 1`,
    ),
    // recipient_count: each once (the header's)
    wakeDueCount: db.prepare(
      `SELECT CASE WHEN wake_expected = 1 THEN recipient_count - no_wake ELSE 0 END AS count FROM ${g}_ledgers WHERE msg = ?`,
    ),
    noWake: db.prepare(`UPDATE ${g}_ledger_rows SET no_wake = 1 WHERE msg = ? AND recipient = ? AND no_wake = 0`),
    noWakeUp: db.prepare(`UPDATE ${g}_ledgers SET no_wake = no_wake + 1 WHERE msg = ?`),
    attendedUp: db.prepare(`UPDATE ${g}_ledgers SET attended = attended + 1 WHERE msg = ?`),
    marks: db.prepare(`SELECT escalated_at, reply_due_by, reply_overdue_at FROM ${g}_ledgers WHERE msg = ?`),
    recipients: db.prepare(`SELECT recipient FROM ${g}_ledger_rows WHERE msg = ? ORDER BY ordinal`),
    anyAwaiting: db.prepare(`SELECT 1 FROM ${g}_awaiting WHERE thread_id = ? AND recipient = ? LIMIT 1`),
    awaiting: db.prepare(`SELECT message_id FROM ${g}_awaiting WHERE thread_id = ? AND recipient = ? ORDER BY seq`),
    insertLedger: db.prepare(
      `INSERT INTO ${g}_ledgers (msg, message_id, position, sender, thread_id, sent_at, recipient_count, wake_expected,
         ${LEDGER_STAGES.map((stage) => STAGE_COLUMN[stage]).join(', ')},
         attended, no_wake, escalated_at, reply_due_by, reply_overdue_at, unwoken_ms, pending_escalation, due_ms)
       VALUES (${new Array(21).fill('?').join(', ')})`,
    ),
    insertRow: db.prepare(
      `INSERT INTO ${g}_ledger_rows (msg, recipient, ordinal, ${LEDGER_STAGES.map((stage) => STAGE_COLUMN[stage]).join(', ')},
         no_wake)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    setMark: perStage((column) => db.prepare(`UPDATE ${g}_ledger_rows SET ${column} = ? WHERE msg = ? AND recipient = ?`)),
    countUp: perStage((column) => db.prepare(`UPDATE ${g}_ledgers SET ${column} = ${column} + 1 WHERE msg = ?`)),
    await: db.prepare(
      `INSERT INTO ${g}_awaiting (thread_id, recipient, seq, message_id)
       VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM ${g}_awaiting WHERE thread_id = ? AND recipient = ?), ?)`,
    ),
    settle: db.prepare(`DELETE FROM ${g}_awaiting WHERE thread_id = ? AND recipient = ?`),
    listUnwoken: db.prepare(`UPDATE ${g}_ledgers SET unwoken_ms = ?, pending_escalation = 1 WHERE msg = ?`),
    clearUnwoken: db.prepare(`UPDATE ${g}_ledgers SET unwoken_ms = NULL, pending_escalation = 0 WHERE msg = ?`),
    escalate: db.prepare(`UPDATE ${g}_ledgers SET escalated_at = ?, pending_escalation = 0 WHERE msg = ?`),
    requestReply: db.prepare(`UPDATE ${g}_ledgers SET reply_due_by = ?, due_ms = ? WHERE msg = ?`),
    owe: db.prepare(`INSERT OR IGNORE INTO ${g}_owed (identity, message_id, due_ms) VALUES (?, ?, ?)`),
    reOwe: db.prepare(`UPDATE ${g}_owed SET due_ms = ? WHERE identity = ? AND message_id = ?`),
    clearOwed: db.prepare(`DELETE FROM ${g}_owed WHERE identity = ? AND message_id = ?`),
    undue: db.prepare(`UPDATE ${g}_ledgers SET due_ms = NULL WHERE msg = ?`),
    lastNudge: db.prepare(`SELECT mark FROM ${g}_last_nudge WHERE identity = ?`),
    setLastNudge: db.prepare(`INSERT OR REPLACE INTO ${g}_last_nudge (identity, mark) VALUES (?, ?)`),
    markOverdue: db.prepare(`UPDATE ${g}_ledgers SET reply_overdue_at = ?, due_ms = NULL WHERE msg = ?`),
  };
}
