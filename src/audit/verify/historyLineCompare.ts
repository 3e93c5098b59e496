/**
 * `audit verify`, the task history lines: the task of each event that made a line in a task's history (a claim, a
 * move, a release, a lapse, an expiry: readModel/taskRules.ts historyLineRecorded). The stores keep them as an index of
 * their own (memory: a map; SQLite: the task_lines table; Redis: the tasks:lines hash), by which a line's id given as a
 * message's or a task's is named as that task's (ProjectionStore.taskOfHistoryLine). No listing shows them, and verify
 * read none: a line dropped, pointed at another task or forged verified as OK, while get_message or update_task given
 * that id answered as if it named nothing, or another task. Every line the live views keep is now read (page by page)
 * and looked up in the log's; each line of the log's the walk did not meet is missing.
 */
import type { ProjectionStore } from '../../projections/projectionStore';
import type { ScratchViews } from '../../projections/readModel/scratchViews';
import type { Difference } from './viewDiff';

/** Lines per page of the live store's walk. */
const LINES_PER_READ = 10_000;

/** One line that differs: named by the task the log gives it, or, for a line the log does not have, the live views'. */
function lineDiff(expected: ScratchViews, eventId: string, want: string | null, got: string | null): Difference {
  const taskId = want ?? got!;
  return {
    view: 'taskLines',
    identity: expected.tasks.task(taskId)?.sender ?? null,
    messageId: taskId,
    field: `history line ${eventId}`,
    expected: want ?? 'absent',
    actual: got ?? 'missing',
  };
}

export interface HistoryLineComparison {
  diffs: Difference[];
  /** The lines the log has (what the summary counts as compared). */
  lines: number;
  /** The event ids of the lines that differ, for a re-check. */
  differing: string[];
}

/** Every line, the log's against the live views'. */
export async function compareHistoryLines(expected: ScratchViews, live: ProjectionStore): Promise<HistoryLineComparison> {
  const logged = expected.tasks.historyLines();
  const met = new Set<string>();
  const diffs: Difference[] = [];
  const differing: string[] = [];
  for (let after: string | null = null; ;) {
    const page = await live.taskHistoryLines(after, LINES_PER_READ);
    for (const { eventId, taskId } of page.lines) {
      if (met.has(eventId)) continue; // Redis pages as HSCAN does: a line may come twice
      met.add(eventId);
      const want = logged.get(eventId) ?? null;
      if (want === taskId) continue;
      diffs.push(lineDiff(expected, eventId, want, taskId));
      differing.push(eventId);
    }
    if (page.next === null) break;
    after = page.next;
  }
  for (const [eventId, taskId] of logged) {
    if (met.has(eventId)) continue;
    diffs.push(lineDiff(expected, eventId, taskId, null));
    differing.push(eventId);
  }
  return { diffs, lines: logged.size, differing };
}

/** The lines that differed, looked up again one by one (a re-check, once the scratch views caught up). */
export async function compareHistoryLinesOf(
  expected: ScratchViews,
  live: ProjectionStore,
  eventIds: readonly string[],
): Promise<Difference[]> {
  const logged = expected.tasks.historyLines();
  const diffs: Difference[] = [];
  for (const eventId of eventIds) {
    const want = logged.get(eventId) ?? null;
    const got = await live.taskOfHistoryLine(eventId);
    if (want !== got) diffs.push(lineDiff(expected, eventId, want, got));
  }
  return diffs;
}
