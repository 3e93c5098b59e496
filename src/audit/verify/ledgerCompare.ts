/**
 * `audit verify`, the delivery views (issue 13): every message's ledger (header, counts, escalation and reply
 * marks, each recipient's stages), the unwoken list and each identity's last nudge, rebuilt from the log
 * (ScratchViews' LedgerMemory) against the live ones through the ProjectionStore port, and every ledger the live
 * views keep looked up in the log's. Without it, a ledger or a row deleted or forged in the live views
 * (get_delivery, `mailbox delivery`, the console) verified as OK.
 */
import { mapBounded } from '../../heartbeat/boundedQueue';
import {
  LEDGER_STAGES,
  lastNudgeOf,
  type DeliveryRow,
  type UnwokenMessage,
  type WholeLedger,
} from '../../projections/readModel/ledger';
import type { ProjectionStore } from '../../projections/projectionStore';
import type { ScratchViews } from '../../projections/readModel/scratchViews';
import { fieldDiffs, sameValue, type Difference } from './viewDiff';
import { compareDue } from './dueCompare';

/**
 * Ledgers per read of the live views, and about how many recipient rows at most (a larger ledger is read alone).
 * Read one message at a time (two queries and a turn of the event loop each), the ledgers more than doubled the
 * time of a whole verify; in batches the store answers a few hundred in one read (SQLite: one synchronous call;
 * Redis: one round trip).
 */
const LEDGERS_PER_READ = 256;
const ROWS_PER_READ = 4096;
/** How many of the oldest unwoken messages are compared one by one (their counts are compared in full). */
export const UNWOKEN_COMPARED = 1000;
/** Later than any send: the unwoken list as a whole, whatever the wake SLA. */
const EVERY_SEND = '9999-12-31T23:59:59.999Z';

/**
 * The messages in send order, in batches for one read each: at most LEDGERS_PER_READ, and about ROWS_PER_READ
 * recipients. Send order, because the stores keep ledgers in it (the SQLite views key them by the message's
 * integer, given as the log is applied): read in the scratch views' own order (by id, i.e. at random), each
 * ledger was a cache miss in the views file, and the reads cost five times as much. `only`: just these messages.
 */
function batches(expected: ScratchViews, only: ReadonlySet<string> | null): string[][] {
  const { messageIds, audiences } = expected.ledgersInSendOrder();
  const all: string[][] = [];
  let batch: string[] = [];
  let rows = 0;
  for (let i = 0; i < messageIds.length; i++) {
    const messageId = messageIds[i];
    if (only !== null && !only.has(messageId)) continue;
    if (batch.length > 0 && (batch.length === LEDGERS_PER_READ || rows + audiences[i] > ROWS_PER_READ)) {
      all.push(batch);
      batch = [];
      rows = 0;
    }
    batch.push(messageId);
    rows += audiences[i];
  }
  if (batch.length > 0) all.push(batch);
  return all;
}

/** A batch of messages: their ledgers from the log against the live ones, read in one go. */
async function compareBatch(expected: ScratchViews, live: ProjectionStore, messageIds: readonly string[]): Promise<Difference[]> {
  const got = await live.deliveryLedgers(messageIds);
  const diffs: Difference[] = [];
  for (const messageId of messageIds)
    diffs.push(...compareLedger(expected.ledger.whole(messageId)!, got.get(messageId), messageId));
  return diffs;
}

/** One message's ledger, expected against live; differences name the sender (header) or the recipient (a row). */
function compareLedger(want: WholeLedger, got: WholeLedger | undefined, messageId: string): Difference[] {
  if (got !== undefined && sameLedger(want, got)) return []; // nearly always
  const sender = want.message.sender;
  if (!got)
    return [{ view: 'delivery', identity: sender, messageId, field: 'presence', expected: 'a ledger', actual: 'missing' }];
  const { rows: wantRows, ...wantHead } = want;
  const { rows: gotRows, ...gotHead } = got;
  const diffs = fieldDiffs('delivery', sender, wantHead, gotHead, messageId);
  if (sameRows(wantRows, gotRows)) return diffs; // nearly always: both in identity order, row for row
  const liveRows = new Map(gotRows.map((row) => [row.recipient, row]));
  for (const row of wantRows) {
    const other = liveRows.get(row.recipient);
    liveRows.delete(row.recipient);
    if (!other) {
      diffs.push({
        view: 'delivery',
        identity: row.recipient,
        messageId,
        field: 'presence',
        expected: 'a row',
        actual: 'missing',
      });
    } else {
      const { recipient: _e, ...stagesE } = row;
      const { recipient: _a, ...stagesA } = other;
      diffs.push(...fieldDiffs('delivery', row.recipient, stagesE, stagesA, messageId));
    }
  }
  for (const extra of liveRows.keys())
    diffs.push({ view: 'delivery', identity: extra, messageId, field: 'presence', expected: 'absent', actual: 'a row' });
  return diffs;
}

const sameRows = (want: readonly DeliveryRow[], got: readonly DeliveryRow[]): boolean =>
  want.length === got.length && want.every((row, i) => sameValue(row, got[i]));

/**
 * Whether the live ledger is exactly the expected one, when compareLedger's generic comparison would find nothing:
 * every field of WholeLedger by name, and no field besides them (a store answering one more fails here, and the
 * generic comparison names it). It runs once per message of the log: the generic walk (sameValue over rest-spread
 * copies of both ledgers) was about a third of the comparing of ledgers, and most of its garbage.
 */
function sameLedger(want: WholeLedger, got: WholeLedger): boolean {
  const [a, b] = [want.message, got.message];
  return (
    sameFields(want, got, 6) &&
    sameFields(a, b, 7) &&
    a.messageId === b.messageId &&
    a.position === b.position &&
    a.sender === b.sender &&
    a.threadId === b.threadId &&
    a.sentAt === b.sentAt &&
    a.wakeExpected === b.wakeExpected &&
    a.recipientCount === b.recipientCount &&
    sameFields(want.counts, got.counts, LEDGER_STAGES.length) &&
    LEDGER_STAGES.every((stage) => want.counts[stage] === got.counts[stage]) &&
    want.escalatedAt === got.escalatedAt &&
    want.replyDueBy === got.replyDueBy &&
    want.replyOverdueAt === got.replyOverdueAt &&
    want.rows.length === got.rows.length &&
    want.rows.every((row, i) => sameRow(row, got.rows[i]))
  );
}

/** One recipient's row, as sameLedger: each stage's mark by its fields, and nothing besides. */
function sameRow(want: DeliveryRow, got: DeliveryRow): boolean {
  return (
    sameFields(want, got, 6) &&
    want.recipient === got.recipient &&
    sameMark(want.inView, got.inView, 'position', null) &&
    sameMark(want.woken, got.woken, 'at', 'via') &&
    sameMark(want.seen, got.seen, 'at', null) &&
    sameMark(want.read, got.read, 'at', null) &&
    sameMark(want.replied, got.replied, 'at', 'messageId')
  );
}

/** A stage's mark: both unreached (null), or both reached with the same one or two fields and no other. */
function sameMark<T extends object>(want: T | null, got: T | null, first: keyof T, second: keyof T | null): boolean {
  if (want === null || typeof got !== 'object' || got === null) return want === got;
  return (
    sameFields(want, got, second === null ? 1 : 2) &&
    want[first] === got[first] &&
    (second === null || want[second] === got[second])
  );
}

/**
 * Both hold exactly `count` fields, the ones compared by name: a field added to the type on one side only (the
 * expected ledger's, a store's answer) is then left to the generic comparison, which names it, never passed over.
 */
const sameFields = (want: object, got: object, count: number): boolean =>
  Object.keys(want).length === count && Object.keys(got).length === count;

/** Ledger ids per page of the live store's walk (unexplainedLedgers). */
const IDS_PER_READ = 10_000;

/**
 * Ledgers the live views keep that the log does not explain (forged, or left from another log): every id the store
 * walks, looked up in the scratch views. Compared message by message from the log's side only, such a ledger was
 * never looked at, and verify said OK over it. `among`: only these ids (a re-check).
 */
async function unexplainedLedgers(
  expected: ScratchViews,
  live: ProjectionStore,
  among: ReadonlySet<string> | null,
): Promise<Difference[]> {
  const unexplained = new Set<string>();
  for (let after: string | null = null; ;) {
    const page = await live.deliveryLedgerIds(after, IDS_PER_READ);
    for (const messageId of page.messageIds)
      if (!expected.ledger.ledgerOpen(messageId) && (among === null || among.has(messageId))) unexplained.add(messageId);
    if (page.next === null) break;
    after = page.next;
  }
  const ids = [...unexplained];
  const diffs: Difference[] = [];
  for (let i = 0; i < ids.length; i += LEDGERS_PER_READ) {
    const batch = ids.slice(i, i + LEDGERS_PER_READ);
    const got = await live.deliveryLedgers(batch); // to name the sender, when the store can read the ledger whole
    for (const messageId of batch) {
      const identity = got.get(messageId)?.message.sender ?? null;
      diffs.push({ view: 'delivery', identity, messageId, field: 'presence', expected: 'absent', actual: 'a ledger' });
    }
  }
  return diffs;
}

/**
 * The unwoken list: how many (all, and pending escalation), then the oldest ones entry by entry, then how many the
 * alarm counts now (sent before `alarmCutoff`: now minus the wake SLA, as /metrics, GET /v1/audit/unwoken and the
 * heartbeat ask). Past the oldest UNWOKEN_COMPARED, the whole counts alone missed an entry moved later in the live
 * list (out of the alarm, which then counted one message fewer than `mailbox audit unwoken`), and verify said OK.
 */
async function compareUnwoken(expected: ScratchViews, live: ProjectionStore, alarmCutoff: string): Promise<Difference[]> {
  const diffs: Difference[] = [];
  for (const pendingOnly of [false, true]) {
    const query = { sentBefore: EVERY_SEND, limit: pendingOnly ? 0 : UNWOKEN_COMPARED, pendingOnly };
    const want = expected.ledger.unwoken(query);
    const got = await live.unwoken(query);
    const field = pendingOnly ? 'count pending escalation' : 'count';
    if (want.count !== got.count) diffs.push({ view: 'unwoken', identity: null, field, expected: want.count, actual: got.count });
    if (!pendingOnly && !sameValue(want.messages, got.messages)) diffs.push(...unwokenDiffs(want.messages, got.messages));
  }
  for (const pendingOnly of [false, true]) {
    const query = { sentBefore: alarmCutoff, limit: 0, pendingOnly };
    const want = expected.ledger.unwoken(query).count;
    const got = (await live.unwoken(query)).count;
    const field = `${pendingOnly ? 'count pending escalation' : 'count'} sent before ${alarmCutoff} (now minus the wake SLA: the alarm's)`;
    if (want !== got) diffs.push({ view: 'unwoken', identity: null, field, expected: want, actual: got });
  }
  return diffs;
}

/** The oldest unwoken messages, expected against live: presence (named by sender), then order, then each entry's fields. */
function unwokenDiffs(want: readonly UnwokenMessage[], got: readonly UnwokenMessage[]): Difference[] {
  const live = new Map(got.map((m) => [m.messageId, m]));
  const wanted = new Set(want.map((m) => m.messageId));
  const diffs: Difference[] = [];
  for (const m of want) {
    const other = live.get(m.messageId);
    if (!other)
      diffs.push({
        view: 'unwoken',
        identity: m.sender,
        messageId: m.messageId,
        field: 'presence',
        expected: 'listed',
        actual: 'missing',
      });
    else diffs.push(...fieldDiffs('unwoken', m.sender, m, other, m.messageId));
  }
  for (const m of got) {
    if (!wanted.has(m.messageId))
      diffs.push({
        view: 'unwoken',
        identity: m.sender,
        messageId: m.messageId,
        field: 'presence',
        expected: 'absent',
        actual: 'listed',
      });
  }
  const common = (list: readonly UnwokenMessage[], other: ReadonlySet<string>) =>
    list.map((m) => m.messageId).filter((id) => other.has(id));
  const order = [common(want, new Set(live.keys())), common(got, wanted)];
  if (!sameValue(order[0], order[1]))
    diffs.push({ view: 'unwoken', identity: null, field: 'order (oldest first)', expected: order[0], actual: order[1] });
  return diffs;
}

/** Each identity's last delivered nudge (the console's "last nudge"). */
async function compareLastNudges(expected: ScratchViews, live: ProjectionStore): Promise<Difference[]> {
  const want = new Map([...expected.ledger.lastNudges()].map(([identity, mark]) => [identity, lastNudgeOf(mark)]));
  const got = await live.lastNudges();
  const diffs: Difference[] = [];
  for (const identity of [...new Set([...want.keys(), ...got.keys()])].sort()) {
    const e = want.get(identity) ?? null;
    const a = got.get(identity) ?? null;
    if (!sameValue(e, a)) diffs.push({ view: 'lastNudge', identity, field: 'lastNudge', expected: e, actual: a });
  }
  return diffs;
}

/** When the lists are compared: `now`, and the wake SLA that makes the unwoken alarm's cutoff (now minus it). */
export interface ListsAt {
  now: Date;
  wakeSlaMs: number;
}

/**
 * The delivery views, and the due lists (dueCompare.ts) with them. `only`: re-check just these messages (those that
 * differed while the live views moved) and, with `lists`, the unwoken list, the last nudges and the due lists.
 */
export async function compareDelivery(
  expected: ScratchViews,
  live: ProjectionStore,
  concurrency: number,
  at: ListsAt,
  only: { messages: ReadonlySet<string>; lists: boolean } | null = null,
  onCompared?: (what: 'ledgers', done: number, total: number) => void,
): Promise<{ diffs: Difference[]; ledgers: number }> {
  const reads = batches(expected, only?.messages ?? null);
  const total = reads.reduce((n, batch) => n + batch.length, 0);
  let done = 0;
  const perBatch = await mapBounded(reads, concurrency, async (batch) => {
    const diffs = await compareBatch(expected, live, batch);
    done += batch.length;
    onCompared?.('ledgers', done, total);
    return diffs;
  });
  const diffs = perBatch.flat();
  // A re-check walks the live ledgers again only when a ledger the log did not explain was among the differences.
  const unexplainedBefore = only === null || [...only.messages].some((id) => !expected.ledger.ledgerOpen(id));
  if (unexplainedBefore) diffs.push(...(await unexplainedLedgers(expected, live, only?.messages ?? null)));
  if (!only || only.lists)
    diffs.push(
      ...(await compareUnwoken(expected, live, new Date(at.now.getTime() - at.wakeSlaMs).toISOString())),
      ...(await compareLastNudges(expected, live)),
      ...(await compareDue(expected, live, at.now.toISOString())),
    );
  return { diffs, ledgers: total };
}
