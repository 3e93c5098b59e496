/**
 * `audit verify`: derive every view from the log in scratch memory (pure
 * projector -> the read model's rules -> ScratchViews) and compare it with the live projections through
 * the ProjectionStore port: agents, heartbeat counts, unread counts, every
 * inbox, unread, outbox and archived listing, page by page, the task lists, the delivery
 * views (every message's ledger, the unwoken list, the last nudges: ledgerCompare.ts), the due lists of the
 * task sweeper and the heartbeat (dueCompare.ts) and the task of each task history line (historyLineCompare.ts).
 *
 * The live views may move while we compare (a running server). Both sides are
 * compared at the live checkpoint; a difference counts as drift only if it
 * persists in a read of the live views during which their checkpoint stood still
 * (the expected views caught up to it first). Differences no such read could
 * settle are reported as unsettled, not as drift.
 */
import { DEFAULT_WAKE_SLA_MS } from '../../config';
import { mapBounded } from '../../heartbeat/boundedQueue';
import type { ListQuery } from '../../projections/listQuery';
import type { ListedMessage, ProjectionStore } from '../../projections/projectionStore';
import type { LogSource } from '../logSource';
import { ScratchViews, type ScratchEntry } from '../../projections/readModel/scratchViews';
import { rebuildInto } from './scratchRebuild';
import { TASK_LISTS, type TaskList, type TaskView } from '../../projections/readModel/taskView';
import type { TaskListQuery } from '../../projections/readModel/taskViewsMemory';
import { TASK_STATES } from '../../events/storedShapes';
import { compareDelivery } from './ledgerCompare';
import { compareHistoryLines, compareHistoryLinesOf } from './historyLineCompare';
import { diffAgents, diffHeartbeats, diffListing, fieldDiffs, sameValue, type Difference } from './viewDiff';

export interface VerifyOptions {
  /** Reads of a differing agent (or of the delivery views) before giving up on the live views standing still across one (default 10). */
  maxRounds?: number;
  /** Parallel per-agent comparisons (helps over a network; default 8). */
  concurrency?: number;
  /** Called as the scratch rebuild reads the log. */
  onProgress?: (position: bigint) => void;
  /**
   * Called as the comparison goes on, after the rebuild (about half of a long run): the agents compared of all, then
   * the delivery ledgers. Its first pass only (a re-check of what differed is short).
   */
  onCompared?: (what: ComparedUnit, done: number, total: number) => void;
  /** The time the due lists and the unwoken alarm are compared at (what is due now; default: the clock's). */
  now?: () => Date;
  /** The wake SLA: the unwoken alarm counts the messages sent before now minus it (default MAILBOX_WAKE_SLA_MS's). */
  wakeSlaMs?: number;
}

export interface VerifyReport {
  ok: boolean;
  head: string | null;
  /** The live checkpoint both sides were compared at. */
  comparedAt: string | null;
  /** Log head minus the live checkpoint (positions the live views have yet to apply; not drift). */
  lag: string | null;
  eventsRebuilt: number;
  /** Every identity whose views were compared: the registered agents, and the identities no agent holds that mail was sent to. */
  agentsCompared: number;
  /**
   * Of agentsCompared, the identities neither the log nor the live views list as agents (mail sent to a name nobody
   * registered keeps an inbox): GET /v1/agents does not list them, so the summary names them apart.
   */
  unregisteredCompared: number;
  entriesCompared: number;
  /** Messages whose delivery ledger was compared (every one the log has). */
  ledgersCompared: number;
  /**
   * Task history lines whose task was compared (every one the log has; with each line the live views keep that the log
   * does not: historyLineCompare.ts).
   */
  historyLinesCompared: number;
  rounds: number;
  /**
   * False when differences remain that could be neither confirmed nor cleared: the live views moved while each re-check
   * read them (a server under a steady load). Those are not known to be drift: `ok` is false, and verify says so.
   */
  settled: boolean;
  differences: Difference[];
}

/**
 * What the comparison counts as it goes: agents (every view of one), then delivery ledgers; then, when the live views
 * moved while they were read, the re-checks of what differed (each agent, the delivery views as one, the history lines
 * that differed as one).
 */
export type ComparedUnit = 'agents' | 'ledgers' | 'rechecks';

type Listing = 'inbox' | 'unread' | 'outbox' | 'archived';
const QUERIES: Record<Listing, ListQuery> = {
  inbox: { box: 'inbox', status: 'all', limit: 200, before: null },
  unread: { box: 'inbox', status: 'unread', limit: 200, before: null },
  outbox: { box: 'outbox', limit: 200, before: null },
  // What an agent archived (`mailbox inbox --status archived`, and what unarchive brings back): not compared, an archive
  // time changed or an archived entry dropped in the live views verified as OK (the inbox leaves them out).
  archived: { box: 'inbox', status: 'archived', limit: 200, before: null },
};

/** Whether `actual` is exactly `expected.listed(entry, view)`, without building it (runs once per listed entry). */
export function matches(expected: ScratchViews, entry: ScratchEntry, view: Listing, actual: ListedMessage): boolean {
  const f = entry.fields;
  const extra = expected.extrasOf(f.messageId);
  const task = extra?.task ?? undefined;
  // Object.keys, not for-in: for-in over the listed objects measured twice as slow on a million entries.
  const archived = view === 'archived';
  return (
    Object.keys(actual).length === (task ? 12 : 11) + (archived ? 1 : 0) &&
    actual.messageId === f.messageId &&
    actual.from === f.from &&
    (typeof f.to === 'string' ? actual.to === f.to : sameValue(actual.to, f.to)) && // a list of identities: by value
    actual.subject === f.subject &&
    actual.priority === f.priority &&
    actual.threadId === f.threadId &&
    actual.inReplyTo === (extra?.inReplyTo ?? null) &&
    actual.sentAt === f.sentAt &&
    actual.readAt === (view === 'outbox' ? null : entry.readAt) &&
    actual.seenAt === (view === 'outbox' ? null : entry.seenAt) &&
    sameValue(actual.tags, f.tags) &&
    (task === undefined ? actual.task === undefined : sameValue(actual.task, task)) &&
    (!archived || actual.archivedAt === entry.archivedAt)
  );
}

/**
 * Streams the live listing page by page against the expected one, comparing
 * entry by entry while they line up; from the first misalignment on, the rest
 * of both is compared as sets (missing, extra, order) by diffListing.
 */
async function compareListing(expected: ScratchViews, live: ProjectionStore, identity: string, view: Listing) {
  const wanted = expected.listing(identity, view);
  const diffs: Difference[] = [];
  let aligned = 0;
  let rest: ListedMessage[] | null = null;
  let before: bigint | null = null;
  for (;;) {
    const page = await live.listMessages(identity, { ...QUERIES[view], before });
    for (const actual of page.messages) {
      if (rest === null && aligned < wanted.length && wanted[aligned].fields.messageId === actual.messageId) {
        const entry = wanted[aligned++];
        if (!matches(expected, entry, view, actual)) {
          diffs.push(...fieldDiffs(view, identity, expected.listed(entry, view), actual, actual.messageId));
        }
      } else {
        (rest ??= []).push(actual);
      }
    }
    if (page.nextBefore === null) break;
    if (before !== null && page.nextBefore >= before) {
      diffs.push({
        view,
        identity,
        field: 'pagination',
        expected: 'pages move to older positions',
        actual: `page bound ${page.nextBefore} after ${before}`,
      });
      break;
    }
    before = page.nextBefore;
  }
  if (rest !== null || aligned < wanted.length) {
    diffs.push(
      ...diffListing(
        view,
        identity,
        wanted.slice(aligned).map((entry) => expected.listed(entry, view)),
        rest ?? [],
      ),
    );
  }
  return { diffs, entries: wanted.length };
}

async function compareAgent(expected: ScratchViews, live: ProjectionStore, identity: string) {
  const diffs: Difference[] = [];
  const e = expected.heartbeat(identity);
  const a = await live.unreadCount(identity);
  if (e.unread !== a.unread) diffs.push({ view: 'unreadCount', identity, field: 'unread', expected: e.unread, actual: a.unread });
  for (const priority of ['low', 'normal', 'high'] as const) {
    if (e.byPriority[priority] !== a.byPriority[priority]) {
      diffs.push({
        view: 'unreadCount',
        identity,
        field: `byPriority.${priority}`,
        expected: e.byPriority[priority],
        actual: a.byPriority[priority],
      });
    }
  }
  let entries = 0;
  for (const view of ['inbox', 'unread', 'outbox', 'archived'] as const) {
    const listing = await compareListing(expected, live, identity, view);
    diffs.push(...listing.diffs);
    entries += listing.entries;
  }
  for (const list of TASK_LISTS) {
    const tasks = await compareTaskList(expected, live, identity, list);
    diffs.push(...tasks.diffs);
    entries += tasks.entries;
  }
  return { diffs, entries };
}

/** One task list of one agent, every page, record by record (issue 12: the task views are verified too), then state by state. */
async function compareTaskList(expected: ScratchViews, live: ProjectionStore, identity: string, list: TaskList) {
  const logged = expected.tasks.list(identity, { list, limit: Number.MAX_SAFE_INTEGER, before: null }).tasks;
  const got = await allTasks(live, identity, { list });
  const ids = (tasks: TaskView[]) => tasks.map((t) => t.taskId);
  const gone = sameValue(ids(logged), ids(got)) ? new Set<string>() : await recordsGone(live, logged, got);
  const diffs: Difference[] = [...gone].map((taskId) => ({
    view: 'tasks' as const,
    identity,
    messageId: taskId,
    field: `task record (${list} list)`,
    expected: 'present',
    actual: 'missing',
  }));
  // The rest is compared without the tasks said above: what differs besides them (or nothing) is what is said.
  const wanted = gone.size === 0 ? logged : logged.filter((task) => !gone.has(task.taskId));
  if (!sameValue(ids(wanted), ids(got))) {
    diffs.push({ view: 'tasks', identity, field: list, expected: ids(wanted), actual: ids(got) });
    return { diffs, entries: logged.length }; // the lists differ already: filtered, they would only say it again
  }
  wanted.forEach((task, i) => diffs.push(...fieldDiffs('tasks', identity, task as never, got[i] as never)));
  // Filtered by each state: a store may filter by a column of its own (the SQLite views do) rather than by the record
  // compared above, and a drifted column showed only in filtered listings (list_tasks with states), verified as OK.
  // An empty list is skipped: every store filters the rows of the same walk, so none has any to show.
  if (wanted.length === 0) return { diffs, entries: logged.length };
  for (const state of TASK_STATES) {
    const want = ids(
      expected.tasks
        .list(identity, { list, states: [state], limit: Number.MAX_SAFE_INTEGER, before: null })
        .tasks.filter((task) => !gone.has(task.taskId)),
    );
    const have = ids(await allTasks(live, identity, { list, states: [state] }));
    if (!sameValue(want, have))
      diffs.push({ view: 'tasks', identity, field: `${list} in state ${state}`, expected: want, actual: have });
  }
  return { diffs, entries: logged.length };
}

/**
 * The tasks of a list the live one lacks because the live views hold no record of them at all (a Redis task list entry
 * whose record was deleted by hand or lost in a partial restore: the lists pass over it). They read as the list
 * entries gone ("sent: log says [<id>], live projection has []") while it was the record; a task the list dropped while
 * its record stays is still the list's difference. As dueCompare.ts tells the due list's.
 */
async function recordsGone(live: ProjectionStore, logged: TaskView[], got: TaskView[]): Promise<Set<string>> {
  const listed = new Set(got.map((task) => task.taskId));
  const gone = new Set<string>();
  for (const task of logged) {
    if (!listed.has(task.taskId) && (await live.getTask(task.taskId)) === undefined) gone.add(task.taskId);
  }
  return gone;
}

/** Every page of one task list as the live store answers it. */
async function allTasks(
  live: ProjectionStore,
  identity: string,
  query: Pick<TaskListQuery, 'list' | 'states'>,
): Promise<TaskView[]> {
  const tasks: TaskView[] = [];
  for (let before: number | null = null; ;) {
    const page = await live.listTasks(identity, { ...query, limit: 200, before });
    tasks.push(...page.tasks);
    if (page.nextBefore === null) return tasks;
    before = page.nextBefore;
  }
}

async function compare(
  expected: ScratchViews,
  live: ProjectionStore,
  concurrency: number,
  onCompared?: VerifyOptions['onCompared'],
) {
  const [liveAgents, liveBeats] = await Promise.all([live.listAgents(), live.allHeartbeats()]);
  const identities = [
    ...new Set([...expected.identities(), ...liveAgents.map((a) => a.identity), ...liveBeats.map((b) => b.identity)]),
  ].sort();
  const diffs = [
    ...diffAgents(expected.agentList(), liveAgents),
    ...diffHeartbeats(
      identities.map((identity) => expected.heartbeat(identity)),
      liveBeats,
    ),
  ];
  let done = 0;
  const perAgent = await mapBounded(identities, concurrency, async (identity) => {
    const result = await compareAgent(expected, live, identity);
    onCompared?.('agents', ++done, identities.length);
    return result;
  });
  for (const result of perAgent) diffs.push(...result.diffs);
  const registered = new Set([...expected.agentList(), ...liveAgents].map((agent) => agent.identity));
  return {
    diffs,
    agents: identities.length,
    unregistered: identities.filter((identity) => !registered.has(identity)).length,
    entries: perAgent.reduce((sum, r) => sum + r.entries, 0),
  };
}

/**
 * What compare finds of one identity, without listing every agent: the re-check of one agent that differed reads only
 * its own entries (live.agentEntries) and views (re-reading every agent's entries for each cost the square of the
 * agents). An identity neither side knows has nothing to compare, as in compare.
 */
async function compareOne(expected: ScratchViews, live: ProjectionStore, identity: string): Promise<Difference[]> {
  const mine = expected.agentEntry(identity);
  const theirs = await live.agentEntries(identity);
  if (!mine.known && theirs.agent === undefined && theirs.heartbeat === undefined) return [];
  const diffs = [
    ...diffAgents(mine.agent ? [mine.agent] : [], theirs.agent ? [theirs.agent] : []),
    ...diffHeartbeats([expected.heartbeat(identity)], theirs.heartbeat ? [theirs.heartbeat] : []),
  ];
  diffs.push(...(await compareAgent(expected, live, identity)).diffs);
  return diffs;
}

export async function verifyProjections(
  source: LogSource,
  live: ProjectionStore,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const {
    maxRounds = 10,
    concurrency = 8,
    onProgress,
    onCompared,
    now = () => new Date(),
    wakeSlaMs = DEFAULT_WAKE_SLA_MS,
  } = options;
  const listsAt = () => ({ now: now(), wakeSlaMs });
  const expected = new ScratchViews();
  let comparedAt = await live.checkpoint();
  let eventsRebuilt = await rebuildInto(expected, source, comparedAt, onProgress);
  const first = await compare(expected, live, concurrency, onCompared);
  const firstDelivery = await compareDelivery(expected, live, concurrency, listsAt(), null, onCompared);
  const ledgersCompared = firstDelivery.ledgers;
  const firstLines = await compareHistoryLines(expected, live);
  let differences = [...first.diffs, ...firstDelivery.diffs, ...firstLines.diffs];
  let rounds = 1;
  // The live views stood still while they were read (the checkpoint moves with every change they take): what differs is
  // drift. Else each agent that differed, and the delivery views, are read again until they stand still across a read.
  let settled = differences.length === 0 || (await live.checkpoint()) === comparedAt;
  if (!settled) {
    const catchUp = async (to: bigint | null) => {
      if (to === comparedAt) return;
      comparedAt = to;
      eventsRebuilt += await rebuildInto(expected, source, to, onProgress);
    };
    const recheck = async (check: () => Promise<Difference[]>) => {
      const outcome = await settle(live, catchUp, check, maxRounds - 1);
      rounds = Math.max(rounds, 1 + outcome.tries);
      return outcome;
    };
    const suspects = [...new Set(first.diffs.map((d) => d.identity).filter((id): id is string => id !== null))].sort();
    const delivery = firstDelivery.diffs;
    differences = [];
    settled = true;
    // Under a steady load every agent compared after a broadcast landed differs, and each is re-read up to maxRounds
    // times: that ran silent after the comparison's full bars, for as long as the comparison or longer.
    const lines = firstLines.differing;
    const rechecks = suspects.length + (delivery.length > 0 ? 1 : 0) + (lines.length > 0 ? 1 : 0);
    let rechecked = 0;
    onCompared?.('rechecks', 0, rechecks);
    for (const identity of suspects) {
      const outcome = await recheck(() => compareOne(expected, live, identity));
      differences.push(...outcome.diffs);
      settled &&= outcome.settled;
      onCompared?.('rechecks', ++rechecked, rechecks);
    }
    if (delivery.length > 0) {
      // Seen marks and wakes land on a running server all the time: re-check the ledgers that differed, after catching up.
      const messages = new Set(delivery.filter((d) => d.view === 'delivery').map((d) => d.messageId!));
      const lists = delivery.some((d) => d.view !== 'delivery');
      const outcome = await recheck(
        async () => (await compareDelivery(expected, live, concurrency, listsAt(), { messages, lists })).diffs,
      );
      differences.push(...outcome.diffs);
      settled &&= outcome.settled;
      onCompared?.('rechecks', suspects.length + 1, rechecks);
    }
    if (lines.length > 0) {
      // A line the live views took after the checkpoint compared at reads as one the log does not have: looked up again.
      const outcome = await recheck(() => compareHistoryLinesOf(expected, live, lines));
      differences.push(...outcome.diffs);
      settled &&= outcome.settled;
      onCompared?.('rechecks', rechecks, rechecks); // the last one
    }
  }
  const head = await source.head();
  if (head !== undefined && comparedAt !== null && (head === null || comparedAt > head)) {
    differences.unshift({
      view: 'checkpoint',
      identity: null,
      field: 'position',
      expected: `at most the log head (${head ?? 'empty log'})`,
      actual: comparedAt.toString(),
    });
  }
  const behind = head === undefined || head === null ? null : head - (comparedAt ?? 0n);
  return {
    ok: differences.length === 0,
    head: head === undefined || head === null ? null : head.toString(),
    comparedAt: comparedAt?.toString() ?? null,
    lag: behind === null ? null : (behind > 0n ? behind : 0n).toString(),
    eventsRebuilt,
    agentsCompared: first.agents,
    unregisteredCompared: first.unregistered,
    entriesCompared: first.entries,
    ledgersCompared,
    historyLinesCompared: firstLines.lines,
    rounds,
    settled,
    differences,
  };
}

/**
 * Runs `check` (a re-read of some live views, against the expected views caught up to the live checkpoint first) until
 * the live checkpoint is the same before and after it: the views it read then stood still at that position, and what
 * it finds is drift. At most `tries` times; unsettled when the views moved during every one (a steady load).
 */
async function settle(
  live: ProjectionStore,
  catchUp: (to: bigint | null) => Promise<void>,
  check: () => Promise<Difference[]>,
  tries: number,
): Promise<{ diffs: Difference[]; settled: boolean; tries: number }> {
  let diffs: Difference[] = [];
  for (let attempt = 1; attempt <= tries; attempt++) {
    const before = await live.checkpoint();
    await catchUp(before);
    diffs = await check();
    if (diffs.length === 0 || (await live.checkpoint()) === before) return { diffs, settled: true, tries: attempt };
  }
  return { diffs, settled: false, tries };
}
