/**
 * `audit verify`: rebuild every view from the log into a scratch in-memory
 * store (the pure projector, nothing shared with the live pipeline but the
 * log) and compare it with the live projections through the ProjectionStore
 * port: agents, heartbeat counts, unread counts, and every inbox, unread and
 * outbox listing, page by page.
 *
 * The live views may move while we compare (a running server). Both sides are
 * compared at the live checkpoint; a difference counts as drift only if it
 * persists after catching the scratch views up to the live checkpoint again.
 */
import { MemoryProjectionStore } from '../../adapters/projections/memoryProjectionStore';
import { parseListQuery, type ListQuery } from '../../projections/listQuery';
import type { ListedMessage, ProjectionStore } from '../../projections/projectionStore';
import { mapBounded } from '../../heartbeat/boundedQueue';
import type { LogSource } from '../logSource';
import { DiscardingWakeBus } from './discardingWakeBus';
import { rebuildInto } from './scratchRebuild';
import { diffAgents, diffHeartbeats, diffListing, type Difference, type ViewName } from './viewDiff';

export interface VerifyOptions {
  /** Rounds of re-checking differences while the live checkpoint moves (default 3). */
  maxRounds?: number;
  /** Parallel per-agent comparisons (helps over a network; default 8). */
  concurrency?: number;
  /** Called as the scratch rebuild reads the log. */
  onProgress?: (position: bigint) => void;
}

export interface VerifyReport {
  ok: boolean;
  head: string | null;
  /** The live checkpoint both sides were compared at. */
  comparedAt: string | null;
  /** Log head minus the live checkpoint (positions the live views have yet to apply; not drift). */
  lag: string | null;
  eventsRebuilt: number;
  agentsCompared: number;
  entriesCompared: number;
  rounds: number;
  differences: Difference[];
}

const PAGE = 200;
const LISTINGS: Array<[ViewName, ListQuery]> = [
  ['inbox', parseListQuery({ box: 'inbox', status: 'all', limit: PAGE })],
  ['unread', parseListQuery({ box: 'inbox', status: 'unread', limit: PAGE })],
  ['outbox', parseListQuery({ box: 'outbox', limit: PAGE })],
];

/** Every entry of one listing, following nextCursor; a cursor that repeats is itself a difference. */
async function listAll(store: ProjectionStore, identity: string, query: ListQuery): Promise<{ entries: ListedMessage[]; loop: boolean }> {
  const entries: ListedMessage[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await store.listMessages(identity, { ...query, cursor });
    entries.push(...page.messages);
    if (page.nextCursor === null) return { entries, loop: false };
    if (seen.has(page.nextCursor)) return { entries, loop: true };
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}

async function diffAgentViews(expected: ProjectionStore, live: ProjectionStore, identity: string): Promise<{ diffs: Difference[]; entries: number }> {
  const diffs: Difference[] = [];
  let entries = 0;
  const [ue, ua] = await Promise.all([expected.unreadCount(identity), live.unreadCount(identity)]);
  if (ue.unread !== ua.unread) diffs.push({ view: 'unreadCount', identity, field: 'unread', expected: ue.unread, actual: ua.unread });
  for (const priority of ['low', 'normal', 'high'] as const) {
    if (ue.byPriority[priority] !== ua.byPriority[priority]) {
      diffs.push({ view: 'unreadCount', identity, field: `byPriority.${priority}`, expected: ue.byPriority[priority], actual: ua.byPriority[priority] });
    }
  }
  for (const [view, query] of LISTINGS) {
    const [e, a] = await Promise.all([listAll(expected, identity, query), listAll(live, identity, query)]);
    if (a.loop) diffs.push({ view, identity, field: 'pagination', expected: 'cursors advance', actual: 'a cursor repeated' });
    diffs.push(...diffListing(view, identity, e.entries, a.entries));
    entries += e.entries.length;
  }
  return { diffs, entries };
}

async function compare(expected: ProjectionStore, live: ProjectionStore, only: ReadonlySet<string> | null, concurrency: number) {
  const [agentsE, agentsA, beatsE, beatsA] = await Promise.all([expected.listAgents(), live.listAgents(),
    expected.allHeartbeats(), live.allHeartbeats()]);
  const pick = <T extends { identity: string }>(items: T[]) => (only ? items.filter((i) => only.has(i.identity)) : items);
  const diffs = [...diffAgents(pick(agentsE), pick(agentsA)), ...diffHeartbeats(pick(beatsE), pick(beatsA))];
  const identities = [...new Set([...agentsE, ...agentsA, ...beatsE, ...beatsA].map((x) => x.identity))]
    .filter((identity) => !only || only.has(identity)).sort();
  const perAgent = await mapBounded(identities, concurrency, (identity) => diffAgentViews(expected, live, identity));
  for (const result of perAgent) diffs.push(...result.diffs);
  return { diffs, agents: identities.length, entries: perAgent.reduce((sum, r) => sum + r.entries, 0) };
}

export async function verifyProjections(source: LogSource, live: ProjectionStore, options: VerifyOptions = {}): Promise<VerifyReport> {
  const { maxRounds = 3, concurrency = 8, onProgress } = options;
  const scratch = new MemoryProjectionStore(new DiscardingWakeBus());
  let comparedAt = await live.checkpoint();
  let eventsRebuilt = await rebuildInto(scratch, source, comparedAt, onProgress);
  let result = await compare(scratch, live, null, concurrency);
  let rounds = 1;
  while (result.diffs.length > 0 && rounds < maxRounds) {
    const moved = await live.checkpoint();
    if (moved === comparedAt) break; // the live views stand still: what differs is drift
    comparedAt = moved;
    eventsRebuilt += await rebuildInto(scratch, source, comparedAt, onProgress);
    const suspects = new Set(result.diffs.map((d) => d.identity).filter((id): id is string => id !== null));
    const recheck = await compare(scratch, live, suspects, concurrency);
    result = { ...recheck, agents: result.agents, entries: result.entries };
    rounds++;
  }
  const head = await source.head();
  const differences = [...result.diffs];
  if (head !== undefined && comparedAt !== null && (head === null || comparedAt > head)) {
    differences.unshift({ view: 'checkpoint', identity: null, field: 'position',
      expected: `at most the log head (${head ?? 'empty log'})`, actual: comparedAt.toString() });
  }
  const lag = head === undefined || head === null ? null : (head - (comparedAt ?? 0n) > 0n ? head - (comparedAt ?? 0n) : 0n).toString();
  return { ok: differences.length === 0, head: head === undefined || head === null ? null : head.toString(),
    comparedAt: comparedAt?.toString() ?? null, lag, eventsRebuilt, agentsCompared: result.agents,
    entriesCompared: result.entries, rounds, differences };
}
