/**
 * `audit verify`, the due lists: the open tasks the task sweeper ends or returns when their deadline or lease passes
 * (ProjectionStore.dueTasks) and the reply obligations the heartbeat finds overdue (dueReplies), rebuilt from the log
 * against the live ones. The stores keep them as indexes of their own (SQLite: the tasks' due_at and the ledgers'
 * due_ms columns; Redis: the tasks:timed and replies:due sorted sets): a deadline or a due time dropped from them was
 * never swept or found overdue, while the lists and ledgers verify compared all agreed, and it said OK.
 *
 * Each list is read at two cutoffs: the end of time (every entry: one dropped or forged shows) and now (what is due
 * now: an entry whose due time was moved earlier shows). Compared as sets: the stores break ties in their own order.
 */
import type { ProjectionStore } from '../../projections/projectionStore';
import type { ScratchViews } from '../../projections/readModel/scratchViews';
import { fieldDiffs, type Difference } from './viewDiff';

/** Later than any deadline, lease or due time: the whole list. */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';

interface Due {
  id: string;
  sender: string;
}

/** One list at one cutoff: entries the log has and the live views miss, and the reverse (not those reported already). */
function presenceDiffs(
  view: 'dueTasks' | 'dueReplies',
  cutoff: string,
  want: readonly Due[],
  got: readonly Due[],
  reported: Set<string>,
): Difference[] {
  const field = cutoff === END_OF_TIME ? 'presence' : `presence (due by ${cutoff})`;
  const wanted = new Set(want.map((d) => d.id));
  const live = new Set(got.map((d) => d.id));
  const diffs: Difference[] = [];
  for (const d of want)
    if (!live.has(d.id) && !reported.has(d.id))
      diffs.push({ view, identity: d.sender, messageId: d.id, field, expected: 'listed', actual: 'missing' });
  for (const d of got)
    if (!wanted.has(d.id) && !reported.has(d.id))
      diffs.push({ view, identity: d.sender, messageId: d.id, field, expected: 'absent', actual: 'listed' });
  for (const d of diffs) reported.add(d.messageId!);
  return diffs;
}

async function compareDueTasks(expected: ScratchViews, live: ProjectionStore, now: string): Promise<Difference[]> {
  const reported = new Set<string>();
  const diffs: Difference[] = [];
  for (const cutoff of [END_OF_TIME, now]) {
    const want = expected.tasks.due(cutoff, Number.MAX_SAFE_INTEGER);
    const got = await live.dueTasks(cutoff, want.length + 1); // one more than the log's: an extra one shows
    const ids = (tasks: typeof want) => tasks.map((t) => ({ id: t.taskId, sender: t.sender }));
    diffs.push(...presenceDiffs('dueTasks', cutoff, ids(want), ids(got), reported));
  }
  return withRecordsMissing(diffs, live); // the records themselves are the task lists' (compared there)
}

/**
 * A due task the live list lacks because the live views have no record of it at all (a Redis tasks:timed entry whose
 * record was deleted by hand or lost in a partial restore: the sweeper's read passes over it) is said as that: it read
 * "presence: ... live projection has "missing"", as if the due entry were gone while it was the record.
 */
async function withRecordsMissing(diffs: Difference[], live: ProjectionStore): Promise<Difference[]> {
  return Promise.all(
    diffs.map(async (d) =>
      d.actual === 'missing' && (await live.getTask(d.messageId!)) === undefined
        ? { ...d, field: 'task record', expected: 'present', actual: 'missing' }
        : d,
    ),
  );
}

async function compareDueReplies(expected: ScratchViews, live: ProjectionStore, now: string): Promise<Difference[]> {
  const reported = new Set<string>();
  const diffs: Difference[] = [];
  for (const cutoff of [END_OF_TIME, now]) {
    const want = expected.ledger.dueReplies(cutoff, Number.MAX_SAFE_INTEGER);
    const got = await live.dueReplies(cutoff, want.length + 1);
    const ids = (replies: typeof want) => replies.map((r) => ({ id: r.messageId, sender: r.sender }));
    diffs.push(...presenceDiffs('dueReplies', cutoff, ids(want), ids(got), reported));
    if (cutoff !== END_OF_TIME) continue;
    const liveOnes = new Map(got.map((r) => [r.messageId, r]));
    for (const reply of want) {
      const other = liveOnes.get(reply.messageId);
      if (other) diffs.push(...fieldDiffs('dueReplies', reply.sender, reply, other, reply.messageId));
    }
  }
  return diffs;
}

/** Both due lists, expected against live, at the end of time and at `now`. */
export async function compareDue(expected: ScratchViews, live: ProjectionStore, now: string): Promise<Difference[]> {
  return [...(await compareDueTasks(expected, live, now)), ...(await compareDueReplies(expected, live, now))];
}
