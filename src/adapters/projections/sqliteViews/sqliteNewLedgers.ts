/**
 * Ledgers opened in the current batch, kept in memory until the batch is
 * written (sqliteLedgerWriter.ts flushes them, one INSERT per ledger and one
 * per recipient, with every count and mark the batch gave them).
 *
 * Why: a send's ledger is opened and then changed by the same batch (the
 * recipient's entry puts it in view, an expected wake lists it unwoken), and
 * each of those was a statement of its own plus the look-ups before them:
 * about eight statements per recipient, ~60 us of a direct send's ~200 us in
 * the views (bench core/sqliteViews with a statement trace). Kept here, they
 * are decided on the same values and written once. Nothing else reads the
 * ledger tables inside the writer's transaction, and a rollback forgets them.
 */
import { LEDGER_STAGES, type LedgerHeader, type LedgerStage } from '../../../projections/readModel/ledger';

export type StageMarks = Record<LedgerStage, string | null>;

export interface NewLedger {
  readonly msg: number;
  readonly header: LedgerHeader;
  readonly counts: Record<LedgerStage, number>;
  /** Each recipient once, in the header's order (the first ordinal of a repeated one, as INSERT OR IGNORE kept). */
  readonly rows: Map<string, StageMarks>;
  /** How many recipients due a wake saw or read it (either; each once). */
  attended: number;
  /** The recipients due no wake of a message that expects one (wakeNotDue). */
  readonly noWake: Set<string>;
  escalatedAt: string | null;
  replyDueBy: string | null;
  overdueAt: string | null;
  unwokenMs: number | null;
  pendingEscalation: boolean;
  dueMs: number | null;
}

const noMarks = (): StageMarks => ({ inView: null, woken: null, seen: null, read: null, replied: null });

export function newLedger(msg: number, header: LedgerHeader): NewLedger {
  const rows = new Map<string, StageMarks>();
  for (const recipient of header.recipients) if (!rows.has(recipient)) rows.set(recipient, noMarks());
  return {
    msg,
    header,
    counts: { inView: 0, woken: 0, seen: 0, read: 0, replied: 0 },
    rows,
    attended: 0,
    noWake: new Set(),
    escalatedAt: null,
    replyDueBy: null,
    overdueAt: null,
    unwokenMs: null,
    pendingEscalation: false,
    dueMs: null,
  };
}

/** The ledgers row's values in column order (ledgersInsertSql). */
export function ledgerValues(ledger: NewLedger): unknown[] {
  const { header, counts } = ledger;
  return [
    ledger.msg,
    header.messageId,
    header.position,
    header.sender,
    header.threadId,
    header.sentAt,
    header.recipients.length,
    header.wakeExpected ? 1 : 0,
    ...LEDGER_STAGES.map((stage) => counts[stage]),
    ledger.attended,
    ledger.noWake.size,
    ledger.escalatedAt,
    ledger.replyDueBy,
    ledger.overdueAt,
    ledger.unwokenMs,
    ledger.pendingEscalation ? 1 : 0,
    ledger.dueMs,
  ];
}
