/**
 * `audit verify`, the delivery views (issue 13): every message's ledger (header, counts, escalation and reply
 * marks, each recipient's stages), the unwoken list and each identity's last nudge, rebuilt from the log
 * (ScratchViews' LedgerMemory) against the live ones through the ProjectionStore port. Without it, a ledger row
 * deleted or forged in the live views (get_delivery, `mailbox delivery`, the console) verified as OK.
 */
import { mapBounded } from '../../heartbeat/boundedQueue';
import { lastNudgeOf, type DeliveryRow, type LedgerPage, type UnwokenMessage } from '../../projections/readModel/ledger';
import type { ProjectionStore } from '../../projections/projectionStore';
import type { ScratchViews } from '../../projections/readModel/scratchViews';
import { fieldDiffs, sameValue, type Difference } from './viewDiff';

/** Recipients per ledger page read (the port's largest). */
const LEDGER_PAGE = 1000;
/** How many of the oldest unwoken messages are compared one by one (their counts are compared in full). */
export const UNWOKEN_COMPARED = 1000;
/** Later than any send: the unwoken list as a whole, whatever the wake SLA. */
const EVERY_SEND = '9999-12-31T23:59:59.999Z';

type Pages = (after: string | null) => Promise<LedgerPage | undefined>;

/** A whole ledger: its first page's header and every recipient's row, paged with the port's own cursor. */
async function wholeLedger(pages: Pages): Promise<{ head: Omit<LedgerPage, 'rows' | 'nextAfter'>; rows: DeliveryRow[] } | null> {
  const first = await pages(null);
  if (!first) return null;
  const { rows: firstRows, nextAfter: firstAfter, ...head } = first;
  const rows = [...firstRows];
  for (let after = firstAfter; after !== null;) {
    const page = await pages(after);
    if (!page) break;
    rows.push(...page.rows);
    after = page.nextAfter;
  }
  return { head, rows };
}

/** One message's ledger, expected against live; differences name the sender (header) or the recipient (a row). */
async function compareLedger(expected: ScratchViews, live: ProjectionStore, messageId: string): Promise<Difference[]> {
  const want = (await wholeLedger(async (after) => expected.ledger.page(messageId, { after, limit: LEDGER_PAGE })))!;
  const sender = want.head.message.sender;
  const got = await wholeLedger((after) => live.deliveryLedger(messageId, { after, limit: LEDGER_PAGE }));
  if (!got)
    return [{ view: 'delivery', identity: sender, messageId, field: 'presence', expected: 'a ledger', actual: 'missing' }];
  const diffs = fieldDiffs('delivery', sender, want.head, got.head, messageId);
  const liveRows = new Map(got.rows.map((row) => [row.recipient, row]));
  for (const row of want.rows) {
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

/** The unwoken list: how many (all, and pending escalation), then the oldest ones entry by entry. */
async function compareUnwoken(expected: ScratchViews, live: ProjectionStore): Promise<Difference[]> {
  const diffs: Difference[] = [];
  for (const pendingOnly of [false, true]) {
    const query = { sentBefore: EVERY_SEND, limit: pendingOnly ? 0 : UNWOKEN_COMPARED, pendingOnly };
    const want = expected.ledger.unwoken(query);
    const got = await live.unwoken(query);
    const field = pendingOnly ? 'count pending escalation' : 'count';
    if (want.count !== got.count) diffs.push({ view: 'unwoken', identity: null, field, expected: want.count, actual: got.count });
    if (!pendingOnly && !sameValue(want.messages, got.messages)) diffs.push(...unwokenDiffs(want.messages, got.messages));
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

/**
 * The delivery views. `only`: re-check just these messages (those that differed while the live views moved) and,
 * with `lists`, the unwoken list and the last nudges.
 */
export async function compareDelivery(
  expected: ScratchViews,
  live: ProjectionStore,
  concurrency: number,
  only: { messages: ReadonlySet<string>; lists: boolean } | null = null,
): Promise<{ diffs: Difference[]; ledgers: number }> {
  const messageIds = only ? [...only.messages].filter((id) => expected.ledger.ledgerOpen(id)) : [...expected.ledger.messageIds()];
  const perMessage = await mapBounded(messageIds, concurrency, (messageId) => compareLedger(expected, live, messageId));
  const diffs = perMessage.flat();
  if (!only || only.lists) diffs.push(...(await compareUnwoken(expected, live)), ...(await compareLastNudges(expected, live)));
  return { diffs, ledgers: messageIds.length };
}
