/**
 * When a task falls due for the sweeper, and what falls due then: the one rule that the task decider
 * (decideSweepTask), the read model (taskAsOf: a read as of now; dueAt: the views' due index, which the sweeper
 * reads) and the sweeper (its command id) all apply. Here, beside the task shapes, so that commands and projections
 * both import it (neither may import the other).
 *
 * - Finished (terminal) tasks fall due for nothing.
 * - Past its deadline (the earlier of expiresAt and budget.deadline), a task expires: first, whoever holds it.
 * - Else a broadcast's or a list's task (open to its audience) whose holder's lease ran out lapses back to its
 *   audience. A lease runs only while the task waits on its holder (Submitted, Working): asking the sender pauses it.
 */
import type { TaskEvent, TaskState } from './types';

/** Terminal states are final (A2A v1.0). */
export const TERMINAL_TASK_STATES: ReadonlySet<TaskState> = new Set<TaskState>(['Completed', 'Canceled', 'Failed', 'Rejected']);
export const isTerminalState = (state: TaskState): boolean => TERMINAL_TASK_STATES.has(state);

/** The states in which a task waits on its holder (not on its sender nor on nobody): the only ones a lease runs in. */
export const WAITS_ON_HOLDER_STATES: ReadonlySet<TaskState> = new Set<TaskState>(['Submitted', 'Working']);
export const waitsOnHolderState = (state: TaskState): boolean => WAITS_ON_HOLDER_STATES.has(state);

/** What the rule reads of a task: the decider's Task and the views' record (with openToAudience) both have it. */
export interface TaskTimes {
  state: TaskState;
  /** No one holds it from the send (a broadcast's or a list's task): only such a task's lease lapses back to its audience. */
  openToAudience: boolean;
  assignee: string | null;
  leaseExpiresAt: string | null;
  /** The earlier of the envelope's expiresAt and budget.deadline, or null. */
  deadline: string | null;
}

/** What falls due: the deadline (the task expires) or the holder's lease (it lapses), and since when. */
export type TaskFallenDue = { kind: 'deadline'; at: string } | { kind: 'lease'; at: string; claimant: string };

/** The lease's end while it runs (the task waits on its holder), else null. */
export const runningLease = (task: Pick<TaskTimes, 'state' | 'leaseExpiresAt'>): string | null =>
  waitsOnHolderState(task.state) ? task.leaseExpiresAt : null;

/** The lease that can lapse: a running lease of a holder of a task open to its audience, or null. */
function lapsingLease(task: TaskTimes): { at: string; claimant: string } | null {
  const lease = runningLease(task);
  if (lease === null || task.assignee === null || !task.openToAudience) return null;
  return { at: lease, claimant: task.assignee };
}

/** What the sweeper ends at `now` (ms): the deadline first, else a lapsed lease; null when nothing is due. */
export function fallenDue(task: TaskTimes, now: number): TaskFallenDue | null {
  if (isTerminalState(task.state)) return null;
  if (task.deadline !== null && Date.parse(task.deadline) <= now) return { kind: 'deadline', at: task.deadline };
  const lease = lapsingLease(task);
  return lease !== null && Date.parse(lease.at) <= now ? { kind: 'lease', ...lease } : null;
}

/**
 * When something first falls due for the sweeper (ms), or null when nothing ever will as the task stands:
 * `fallenDue(task, now)` is null exactly while `now` is before it.
 */
export function nextDueAt(task: TaskTimes): number | null {
  if (isTerminalState(task.state)) return null;
  const lease = lapsingLease(task);
  const times = [task.deadline, lease?.at ?? null].filter((t): t is string => t !== null).map((t) => Date.parse(t));
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * When what the sweeper records fell due (null for any other event): an expiry at its deadline, a lapse at its lease's
 * end. The sweep (or a claim) records it later; every read dates it then, before the record and after it.
 */
export const fellDueAt = (event: TaskEvent): string | null =>
  event.type === 'TaskExpired' ? event.data.deadline : event.type === 'TaskLeaseExpired' ? event.data.leaseExpiresAt : null;
