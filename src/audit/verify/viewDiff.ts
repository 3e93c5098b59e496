/**
 * Pure comparisons of the views rebuilt from the log ("expected") with the
 * live projections ("actual"). Each difference names the view, the agent, the
 * message and the field, with both values, so it can be checked by hand.
 */
import type { AgentView, HeartbeatCounts, ListedMessage } from '../../projections/projectionStore';

export type ViewName =
  | 'checkpoint'
  | 'agents'
  | 'heartbeat'
  | 'unreadCount'
  | 'inbox'
  | 'unread'
  | 'outbox'
  | 'archived'
  | 'tasks'
  | 'delivery'
  | 'unwoken'
  | 'lastNudge'
  | 'dueTasks'
  | 'dueReplies'
  | 'taskLines';

export interface Difference {
  view: ViewName;
  identity: string | null;
  messageId?: string;
  field: string;
  /** What the log implies. */
  expected: unknown;
  /** What the live projection holds. */
  actual: unknown;
}

/** Deep equality for JSON-like values (key order ignored, undefined fields absent); allocation-free, it runs per listed entry. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], other[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let defined = 0;
  for (const key in ra) {
    if (ra[key] === undefined) continue;
    defined++;
    if (!sameValue(ra[key], rb[key])) return false;
  }
  for (const key in rb) if (rb[key] !== undefined) defined--;
  return defined === 0;
}

/** Field-by-field differences of two records (missing fields count as undefined). */
export function fieldDiffs(
  view: ViewName,
  identity: string | null,
  expected: object,
  actual: object,
  messageId?: string,
): Difference[] {
  if (sameValue(expected, actual)) return [];
  const e = expected as Record<string, unknown>;
  const a = actual as Record<string, unknown>;
  const fields = new Set([...Object.keys(e), ...Object.keys(a)]);
  const diffs: Difference[] = [];
  for (const field of fields) {
    if (!sameValue(e[field], a[field])) {
      diffs.push({
        view,
        identity,
        field,
        expected: e[field] ?? null,
        actual: a[field] ?? null,
        ...(messageId ? { messageId } : {}),
      });
    }
  }
  return diffs;
}

export function diffAgents(expected: readonly AgentView[], actual: readonly AgentView[]): Difference[] {
  const live = new Map(actual.map((agent) => [agent.identity, agent]));
  const diffs: Difference[] = [];
  for (const agent of expected) {
    const other = live.get(agent.identity);
    live.delete(agent.identity);
    if (!other)
      diffs.push({ view: 'agents', identity: agent.identity, field: 'presence', expected: 'registered', actual: 'missing' });
    else diffs.push(...fieldDiffs('agents', agent.identity, agent, other));
  }
  for (const extra of live.keys())
    diffs.push({ view: 'agents', identity: extra, field: 'presence', expected: 'absent', actual: 'registered' });
  return diffs;
}

const ZERO_HEARTBEAT = {
  unread: 0,
  unseen: 0,
  tasksWaiting: 0,
  tasksWaitingSince: null,
  repliesOwed: 0,
  nextReplyDueBy: null,
  byPriority: { low: 0, normal: 0, high: 0 },
  oldestUnreadAt: null,
  lastActivityAt: null,
};

/** An agent a store does not list has the zero heartbeat (no mail, never active): that is not drift. */
export function diffHeartbeats(expected: readonly HeartbeatCounts[], actual: readonly HeartbeatCounts[]): Difference[] {
  const e = new Map(expected.map((h) => [h.identity, h]));
  const a = new Map(actual.map((h) => [h.identity, h]));
  const diffs: Difference[] = [];
  for (const identity of [...new Set([...e.keys(), ...a.keys()])].sort()) {
    const { identity: _e, byPriority: pe, ...restE } = e.get(identity) ?? { identity, ...ZERO_HEARTBEAT };
    const { identity: _a, byPriority: pa, ...restA } = a.get(identity) ?? { identity, ...ZERO_HEARTBEAT };
    diffs.push(...fieldDiffs('heartbeat', identity, restE, restA));
    for (const priority of ['low', 'normal', 'high'] as const) {
      if (pe[priority] !== pa[priority]) {
        diffs.push({
          view: 'heartbeat',
          identity,
          field: `byPriority.${priority}`,
          expected: pe[priority],
          actual: pa[priority],
        });
      }
    }
  }
  return diffs;
}

/** Differences between two listings of one view (membership, order, then each entry's fields). */
export function diffListing(
  view: ViewName,
  identity: string,
  expected: readonly ListedMessage[],
  actual: readonly ListedMessage[],
): Difference[] {
  const sameOrder = expected.length === actual.length && expected.every((m, i) => m.messageId === actual[i].messageId);
  if (sameOrder) return expected.flatMap((m, i) => fieldDiffs(view, identity, m, actual[i], m.messageId));
  const diffs: Difference[] = [];
  const live = new Map<string, ListedMessage>();
  for (const m of actual) {
    if (live.has(m.messageId))
      diffs.push({ view, identity, messageId: m.messageId, field: 'presence', expected: 'listed once', actual: 'listed twice' });
    live.set(m.messageId, m);
  }
  const wanted = new Set(expected.map((m) => m.messageId));
  for (const m of expected) {
    const other = live.get(m.messageId);
    if (!other) diffs.push({ view, identity, messageId: m.messageId, field: 'presence', expected: 'listed', actual: 'missing' });
    else diffs.push(...fieldDiffs(view, identity, m, other, m.messageId));
  }
  for (const m of actual) {
    if (!wanted.has(m.messageId))
      diffs.push({ view, identity, messageId: m.messageId, field: 'presence', expected: 'absent', actual: 'listed' });
  }
  const commonExpected = expected.filter((m) => live.has(m.messageId)).map((m) => m.messageId);
  const commonActual = [...live.keys()].filter((id) => wanted.has(id));
  if (!sameValue(commonExpected, commonActual)) {
    diffs.push({ view, identity, field: 'order (newest first)', expected: commonExpected, actual: commonActual });
  }
  return diffs;
}

export function formatDifference(d: Difference): string {
  const show = (value: unknown) => JSON.stringify(value);
  const where = [d.view.padEnd(11), d.identity ?? '-', d.messageId ? `message ${d.messageId}` : ''].filter(Boolean).join('  ');
  return `${where}  ${d.field}: log says ${show(d.expected)}, live projection has ${show(d.actual)}`;
}
