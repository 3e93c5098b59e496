/**
 * Reads the delivery ledger of one generation of the SQLite views (tables:
 * sqliteViewsSchema.ts; written by sqliteLedgerWriter.ts), answering as
 * ledgerMemory.ts does: a page is a range of ledger_rows' key (recipients in
 * byte order), the unwoken and due lists walk their partial indexes in time
 * order (ties by message id), counts come from the ledgers row.
 */
import type Database from 'better-sqlite3';
import {
  deliveryRow,
  type DeliveryRow,
  lastNudgeOf,
  type LastNudge,
  type DueReply,
  type LedgerMarks,
  type LedgerPage,
  type LedgerQuery,
  type RepliesOwed,
  type UnwokenMessage,
  type UnwokenPage,
  type UnwokenQuery,
  type WholeLedger,
} from '../../../projections/readModel/ledger';

export class SqliteLedgerReader {
  private readonly s: ReturnType<typeof prepareLedgerReader>;

  constructor(db: Database.Database, g: string) {
    this.s = prepareLedgerReader(db, g);
  }

  page(messageId: string, query: LedgerQuery): LedgerPage | undefined {
    const ledger = this.s.ledger.get(messageId) as unknown[] | undefined;
    if (!ledger) return undefined;
    const rows = (
      query.after === null
        ? this.s.rows.all(messageId, query.limit + 1)
        : this.s.rowsAfter.all(messageId, query.after, query.limit + 1)
    ) as unknown[][];
    const more = rows.length > query.limit;
    const shown = more ? query.limit : rows.length;
    return { ...wholeLedgerOfRaw(ledger, rows, 0, shown), nextAfter: more ? (rows[shown - 1][1] as string) : null };
  }

  /**
   * Each message's whole ledger. The ledgers are keyed by the message's integer, given in send order: a batch of
   * messages in send order (audit verify reads them so) is one range of that key, read with two range scans after
   * two look-ups (its first and last id). Looked up id by id (the ids as one JSON array: two statements, a look-up
   * in the messages' id index per id and per statement), verify spent ~13 s more at 1,000,000 events. An id the
   * range does not hold (another order, a gap) is still looked up by id, so the answer is exact for any batch.
   */
  wholeLedgers(messageIds: readonly string[]): Map<string, WholeLedger> {
    const wanted = new Set(messageIds);
    const ledgers = new Map<string, WholeLedger>();
    const range = this.rangeOf(messageIds);
    if (range !== null)
      this.collect(
        this.s.ledgersBetween.all(range.lo, range.hi) as unknown[][],
        this.s.rowsBetween.all(range.lo, range.hi) as unknown[][],
        wanted,
        ledgers,
      );
    const left = messageIds.filter((id) => !ledgers.has(id));
    if (left.length > 0) {
      const ids = JSON.stringify(left);
      this.collect(this.s.ledgersIn.all(ids) as unknown[][], this.s.rowsIn.all(ids) as unknown[][], wanted, ledgers);
    }
    return ledgers;
  }

  /** The ledgers' ids in the order of their key (the message's integer); the cursor is the last integer read. */
  ledgerIds(after: string | null, limit: number): { messageIds: string[]; next: string | null } {
    const rows = this.s.idsAfter.all(after === null ? -1 : Number(after), limit) as Array<{ msg: number; message_id: string }>;
    return {
      messageIds: rows.map((row) => row.message_id),
      next: rows.length < limit ? null : String(rows[rows.length - 1].msg),
    };
  }

  /** The integers of the first and last id, when the range between them is about the batch's size (else null). */
  private rangeOf(messageIds: readonly string[]): { lo: number; hi: number } | null {
    if (messageIds.length < 2) return null;
    const first = this.s.msgOf.get(messageIds[0]) as { msg: number } | undefined;
    const last = this.s.msgOf.get(messageIds[messageIds.length - 1]) as { msg: number } | undefined;
    if (first === undefined || last === undefined) return null;
    const [lo, hi] = first.msg <= last.msg ? [first.msg, last.msg] : [last.msg, first.msg];
    return hi - lo < 2 * messageIds.length ? { lo, hi } : null; // a wider range would read ledgers nobody asked for
  }

  /**
   * The ledgers of `heads` (raw rows in LEDGER_COLUMNS order, ascending msg) with their recipients' rows (raw, in
   * MARKS_COLUMNS order, ascending msg then recipient), walked side by side: audit verify reads every ledger through
   * here, and rows as named objects grouped in a Map of arrays per message cost about a third of its ledger reads
   * (objects per row the garbage collector then clears).
   */
  private collect(heads: unknown[][], rows: unknown[][], wanted: ReadonlySet<string>, into: Map<string, WholeLedger>): void {
    let next = 0;
    for (const head of heads) {
      const msg = head[0] as number;
      while (next < rows.length && (rows[next][0] as number) < msg) next++;
      const first = next;
      while (next < rows.length && rows[next][0] === msg) next++;
      const messageId = head[1] as string;
      if (wanted.has(messageId)) into.set(messageId, wholeLedgerOfRaw(head, rows, first, next));
    }
  }

  unwoken(query: UnwokenQuery): UnwokenPage {
    const cutoff = Date.parse(query.sentBefore);
    const count = (query.pendingOnly ? this.s.pendingCount : this.s.unwokenCount).get(cutoff) as { count: number };
    if (query.limit === 0) return { count: count.count, messages: [] };
    const rows = (query.pendingOnly ? this.s.pending : this.s.unwoken).all(cutoff, query.limit) as Array<{
      message_id: string;
      sender: string;
      sent_at: string;
      recipient_count: number;
      escalated_at: string | null;
    }>;
    const messages = rows.map((row): UnwokenMessage => ({
      messageId: row.message_id,
      sender: row.sender,
      sentAt: row.sent_at,
      recipientCount: row.recipient_count,
      escalatedAt: row.escalated_at,
    }));
    return { count: count.count, messages };
  }

  dueReplies(dueBy: string, limit: number): DueReply[] {
    const rows = this.s.due.all(Date.parse(dueBy), limit) as Array<{
      message_id: string;
      sender: string;
      thread_id: string;
      reply_due_by: string;
    }>;
    return rows.map((row) => ({
      messageId: row.message_id,
      sender: row.sender,
      threadId: row.thread_id,
      dueBy: row.reply_due_by,
    }));
  }

  /** Each identity's newest delivered heartbeat nudge (one row per identity ever nudged). */
  lastNudges(): Map<string, LastNudge> {
    const rows = this.s.lastNudges.all() as Array<{ identity: string; mark: string }>;
    return new Map(rows.map((row) => [row.identity, lastNudgeOf(row.mark)]));
  }

  /** The identity's counter (moved by the rules) and the earliest due time among its open obligations. */
  repliesOwed(identity: string, repliesOwed: number): RepliesOwed {
    if (repliesOwed === 0) return { repliesOwed: 0, nextReplyDueBy: null };
    const next = this.s.nextDue.get(identity) as { due_ms: number | null } | undefined;
    return {
      repliesOwed,
      nextReplyDueBy: next?.due_ms === null || next === undefined ? null : new Date(next.due_ms).toISOString(),
    };
  }
}

/**
 * The columns every ledger read takes, as raw rows (no object per row: audit verify reads every ledger through here,
 * and named rows grouped per message were a third of its ledger reads): a ledgers row, and a recipient's row.
 */
const ledgerColumns = (table: string): string =>
  ['msg', 'message_id', 'position', 'sender', 'thread_id', 'sent_at', 'recipient_count', 'wake_expected', 'in_view', 'woken']
    .concat(['seen', 'read', 'replied', 'escalated_at', 'reply_due_by', 'reply_overdue_at'])
    .map((column) => table + column)
    .join(', ');
const MARKS_COLUMNS = 'msg, recipient, in_view, woken, seen, read, replied';

/** A ledger as callers see it, from a raw ledgers row (ledgerColumns) and its recipients' raw rows (MARKS_COLUMNS), rows[from] to rows[to - 1]. */
function wholeLedgerOfRaw(head: unknown[], rows: unknown[][], from: number, to: number): WholeLedger {
  const recipients: DeliveryRow[] = [];
  for (let i = from; i < to; i++) {
    const row = rows[i] as [msg: number, recipient: string, ...marks: Array<string | null>];
    const marks: LedgerMarks = {};
    for (let stage = 0; stage < RAW_STAGES.length; stage++) {
      const mark = row[2 + stage] as string | null;
      if (mark !== null) marks[RAW_STAGES[stage]] = mark;
    }
    recipients.push(deliveryRow(row[1], marks));
  }
  const text = (i: number) => head[i] as string;
  const count = (i: number) => head[i] as number;
  return {
    message: {
      messageId: text(1),
      position: text(2),
      sender: text(3),
      threadId: text(4),
      sentAt: text(5),
      wakeExpected: head[7] === 1,
      recipientCount: count(6),
    },
    counts: { inView: count(8), woken: count(9), seen: count(10), read: count(11), replied: count(12) },
    escalatedAt: head[13] as string | null,
    replyDueBy: head[14] as string | null,
    replyOverdueAt: head[15] as string | null,
    rows: recipients,
  };
}

/** The stages of MARKS_COLUMNS after msg and recipient, in their order. */
const RAW_STAGES = ['inView', 'woken', 'seen', 'read', 'replied'] as const;

function prepareLedgerReader(db: Database.Database, g: string) {
  const unwokenColumns = 'message_id, sender, sent_at, recipient_count, escalated_at';
  return {
    ledger: db
      .prepare(`SELECT ${ledgerColumns('')} FROM ${g}_ledgers WHERE msg = (SELECT msg FROM ${g}_messages WHERE message_id = ?)`)
      .raw(),
    rows: db
      .prepare(
        `SELECT ${MARKS_COLUMNS} FROM ${g}_ledger_rows WHERE msg = (SELECT msg FROM ${g}_messages WHERE message_id = ?) ORDER BY recipient LIMIT ?`,
      )
      .raw(),
    ledgersIn: db
      .prepare(
        `SELECT ${ledgerColumns('l.')} FROM ${g}_messages m JOIN ${g}_ledgers l ON l.msg = m.msg
         WHERE m.message_id IN (SELECT value FROM json_each(?)) ORDER BY l.msg`,
      )
      .raw(),
    msgOf: db.prepare(`SELECT msg FROM ${g}_messages WHERE message_id = ?`),
    idsAfter: db.prepare(`SELECT msg, message_id FROM ${g}_ledgers WHERE msg > ? ORDER BY msg LIMIT ?`),
    ledgersBetween: db.prepare(`SELECT ${ledgerColumns('')} FROM ${g}_ledgers WHERE msg BETWEEN ? AND ? ORDER BY msg`).raw(),
    rowsBetween: db
      .prepare(`SELECT ${MARKS_COLUMNS} FROM ${g}_ledger_rows WHERE msg BETWEEN ? AND ? ORDER BY msg, recipient`)
      .raw(),
    rowsIn: db
      .prepare(
        `SELECT ${MARKS_COLUMNS} FROM ${g}_ledger_rows
         WHERE msg IN (SELECT msg FROM ${g}_messages WHERE message_id IN (SELECT value FROM json_each(?))) ORDER BY msg, recipient`,
      )
      .raw(),
    rowsAfter: db
      .prepare(
        `SELECT ${MARKS_COLUMNS} FROM ${g}_ledger_rows WHERE msg = (SELECT msg FROM ${g}_messages WHERE message_id = ?) AND recipient > ?
       ORDER BY recipient LIMIT ?`,
      )
      .raw(),
    unwokenCount: db.prepare(
      `SELECT COUNT(*) AS count FROM ${g}_ledgers INDEXED BY ${g}_ledgers_unwoken WHERE unwoken_ms IS NOT NULL AND unwoken_ms < ?`,
    ),
    pendingCount: db.prepare(
      `SELECT COUNT(*) AS count FROM ${g}_ledgers INDEXED BY ${g}_ledgers_pending
       WHERE unwoken_ms IS NOT NULL AND pending_escalation = 1 AND unwoken_ms < ?`,
    ),
    unwoken: db.prepare(
      `SELECT ${unwokenColumns} FROM ${g}_ledgers INDEXED BY ${g}_ledgers_unwoken WHERE unwoken_ms IS NOT NULL AND unwoken_ms < ?
       ORDER BY unwoken_ms, message_id LIMIT ?`,
    ),
    pending: db.prepare(
      `SELECT ${unwokenColumns} FROM ${g}_ledgers INDEXED BY ${g}_ledgers_pending
       WHERE unwoken_ms IS NOT NULL AND pending_escalation = 1 AND unwoken_ms < ? ORDER BY unwoken_ms, message_id LIMIT ?`,
    ),
    due: db.prepare(
      `SELECT message_id, sender, thread_id, reply_due_by FROM ${g}_ledgers INDEXED BY ${g}_ledgers_due
       WHERE due_ms IS NOT NULL AND due_ms <= ? ORDER BY due_ms, message_id LIMIT ?`,
    ),
    lastNudges: db.prepare(`SELECT identity, mark FROM ${g}_last_nudge`),
    nextDue: db.prepare(`SELECT MIN(due_ms) AS due_ms FROM ${g}_owed WHERE identity = ?`),
  };
}
