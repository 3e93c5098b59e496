/**
 * The tasks waiting on an agent, read from its task lists by the read model's rule (taskRules.ts, waitingOn), for a
 * nudge about tasks: a nudge about tasks alone is recorded under the newest of them (the message that carried it, a
 * task's id being its message's), as a nudge about mail is under the newest unread message; and when the last of them
 * changed dates the waiting set for a later daemon (rememberedNudges); which they are is part of the nudge's signature
 * (a new task at the same count is a new set). Read only for the agents that may be nudged (idle, not opted out...)
 * with tasks waiting, once per tick.
 */
import { TERMINAL_TASK_STATES, WAITS_ON_HOLDER_STATES } from '../events/taskTimes';
import type { ProjectionStore } from '../projections/projectionStore';
import { waitingOn } from '../projections/readModel/taskRules';
import type { TaskListQuery } from '../projections/readModel/taskViewsMemory';

export interface WaitingTasks {
  /** The waiting task changed last (its id is its message's); null when none was found. */
  newestTaskId: string | null;
  /**
   * When the last of them changed (a task's updatedAt is at or after the change that made it wait on the agent); null
   * when fewer were found than the counts said (the views moved between the reads): the set is then not known.
   */
  changedAt: string | null;
  /**
   * Their ids: which tasks wait, for the nudge's signature (a task that ended and another come between two ticks leave
   * the count as it was). When fewer were found than the counts said, those found: a set that differs from the last.
   */
  taskIds: string[];
}

const PAGE = 200;
/** Where a task waiting on the agent is listed: held (Submitted, Working), asking it, and sent and ended without it. */
const LOOKS: ReadonlyArray<Omit<TaskListQuery, 'limit' | 'before'>> = [
  { list: 'assigned', states: [...WAITS_ON_HOLDER_STATES] },
  { list: 'asking' },
  { list: 'sent', states: [...TERMINAL_TASK_STATES] },
];

/** The tasks waiting on `identity`, of which its heartbeat counts say there are `count` (the reads stop once found). */
export async function waitingTasks(projections: ProjectionStore, identity: string, count: number): Promise<WaitingTasks> {
  const found = new Map<string, string>(); // taskId -> updatedAt
  for (const look of LOOKS) {
    let before: number | null = null;
    do {
      if (found.size >= count) break;
      const page = await projections.listTasks(identity, { ...look, limit: PAGE, before });
      for (const task of page.tasks) if (waitingOn(task).includes(identity)) found.set(task.taskId, task.updatedAt);
      before = page.nextBefore;
    } while (before !== null);
  }
  let newest: [string, string] | null = null;
  for (const entry of found) if (newest === null || Date.parse(entry[1]) > Date.parse(newest[1])) newest = entry;
  return {
    newestTaskId: newest?.[0] ?? null,
    changedAt: found.size >= count ? (newest?.[1] ?? null) : null,
    taskIds: [...found.keys()],
  };
}
