/**
 * The task views' rules (issue 12), pure: a task fact and the task's record
 * before it -> the record after it, the list memberships that moved and the
 * waiting counts that moved.
 *
 * - Sent by me: the sender, from the send on.
 * - Assigned to me: the current assignee (a direct task's recipient from the send; a broadcast's claimant).
 * - Asking me: the sender while the task is InputRequired or AuthRequired (internal: what its messages may answer).
 * - Claimable by me: every audience member of a broadcast's or a list's task that is Submitted and unclaimed; a claim
 *   takes it out of every list at once, a release or a lapsed lease puts it back.
 * - Waiting on: the assignee while the task is Submitted or Working; the sender while it is InputRequired
 *   or AuthRequired, and once it ended without the sender (completed, failed or rejected by the assignee,
 *   expired by the sweeper) until the sender read the outcome (TaskOutcomeSeen). A task the sender ended
 *   itself (its cancel), or its retirement canceled (reason "sender retired"), waits on nobody.
 *   Each identity keeps the last change that made a task begin waiting on it (tasksWaitingSince: position, time,
 *   task), while any task waits on it: the heartbeat's mark of a waiting set that has something new.
 * - The lease (leaseExpiresAt) is shown while it runs: while the task waits on its holder (Submitted, Working). Asking
 *   the sender (InputRequired, AuthRequired) pauses it, so none is shown (a time long past read as a lapse that would
 *   never come, and kept the task due for the sweeper); the answer that moves it back renews it (TaskLeaseRenewed).
 * - The lapsed claimant (lapsedClaimant) is shown while its lapse stands, as the decider holds it (its late update is
 *   told LEASE_EXPIRED): until it claims the task again (it holds it now) or the task ends.
 * - An event that makes a line in the task's history (events/taskHistoryLine.ts) records its id as that task's
 *   (historyLineRecorded): a line's id given as a message's or a task's is named as the task's on every event store.
 * - A fact at or below the task's last change (redelivered) changes nothing.
 */
import { makesHistoryLine } from '../../events/taskHistoryLine';
import { fallenDue, fellDueAt, isTerminalState, waitsOnHolderState } from '../../events/taskTimes';
import type { TaskEvent, TaskState } from '../../events/types';
import type { TaskFact } from '../viewChanges';
import {
  openToAudience,
  taskTimesOf,
  TASK_LISTS,
  type TaskChangeSink,
  type TaskList,
  type TaskView,
  type TaskViewLookup,
} from './taskView';

export function evolveTask(view: TaskViewLookup, fact: TaskFact, position: bigint, sink: TaskChangeSink): void {
  const at = Number(position);
  if (fact.kind === 'taskOpened') {
    if (view.task(fact.task.taskId) !== undefined) return;
    const opened: TaskView = { ...fact.task, position: at, updatedPosition: at };
    sink.taskUpserted(opened);
    moved(null, opened, sink);
    return;
  }
  const before = view.task(fact.event.data.taskId);
  if (before === undefined || before.updatedPosition >= at) return;
  // Reading the outcome is no change to the task: its last change (updatedAt, updatedBy) stays. An expiry is dated at
  // its deadline and a lapse at its lease's end, as every read before the sweep (taskAsOf) and get_task say: the sweep
  // (or a claim) only records it, later.
  const touched = fact.event.type === 'TaskOutcomeSeen' ? {} : { updatedAt: changedAt(fact), updatedBy: fact.actor };
  const after = { ...applied(before, fact.event, fact.actor), ...touched, updatedPosition: at };
  sink.taskUpserted(after);
  moved(before, after, sink);
  if (makesHistoryLine(fact.event.type)) sink.historyLineRecorded(fact.eventId, after.taskId);
}

const changedAt = (fact: TaskFact & { kind: 'taskChanged' }): string => fellDueAt(fact.event) ?? fact.at;

function applied(task: TaskView, event: TaskEvent, actor: string): TaskView {
  switch (event.type) {
    case 'TaskClaimed':
      return {
        ...task,
        assignee: event.data.claimant,
        claimedAt: event.data.claimedAt,
        leaseExpiresAt: event.data.leaseExpiresAt,
        lapsedClaimant: task.lapsedClaimant === event.data.claimant ? null : task.lapsedClaimant,
      };
    case 'TaskStateChanged': {
      const { to, reason, note } = event.data;
      const ended = isTerminalState(to);
      return {
        ...task,
        state: to,
        reason,
        statusMessage: note ?? reason,
        leaseExpiresAt: waitsOnHolderState(to) ? task.leaseExpiresAt : null,
        lapsedClaimant: ended ? null : task.lapsedClaimant,
        // A cancel is the sender's own, or its retirement's (actor: the admin): no one is left waiting on its outcome.
        outcomeUnseen: ended && to !== 'Canceled' && actor !== task.sender,
      };
    }
    case 'TaskArtifactAdded':
      return { ...task, artifactCount: task.artifactCount + 1 };
    case 'TaskLeaseRenewed':
      return { ...task, leaseExpiresAt: event.data.leaseExpiresAt };
    case 'TaskReleased':
      return {
        ...task,
        state: 'Submitted',
        assignee: null,
        claimedAt: null,
        leaseExpiresAt: null,
        statusMessage: null,
        reason: null,
      };
    case 'TaskLeaseExpired':
      return {
        ...task,
        state: 'Submitted',
        assignee: null,
        claimedAt: null,
        leaseExpiresAt: null,
        lapsedClaimant: event.data.claimant,
        statusMessage: null,
        reason: null,
      };
    case 'TaskExpired':
      return {
        ...task,
        state: event.data.to,
        reason: event.data.reason,
        statusMessage: event.data.reason,
        leaseExpiresAt: null,
        lapsedClaimant: null,
        outcomeUnseen: true,
      };
    case 'TaskOutcomeSeen':
      return { ...task, outcomeUnseen: false };
    default: {
      const unexpected: never = event;
      throw new Error(`No task rule for ${(unexpected as { type: string }).type}`);
    }
  }
}

/**
 * The task as a read at `now` shows it: what the sweeper records once it runs (an expiry past the deadline, else a
 * lapsed lease, as decideSweepTask decides them), applied by the same rules, dated when it fell due and by `sweeper`.
 * Until the sweep, the views still hold the old holder: a read must not say the task is theirs when their lease ran
 * out (a claim by another would succeed, and their update be refused LEASE_EXPIRED). Lists keep their members until
 * the sweep; only the record is shown as of now.
 */
export function taskAsOf(task: TaskView, now: string, sweeper: string): TaskView {
  const due = fallenDue(taskTimesOf(task), Date.parse(now)); // events/taskTimes.ts: the decider's rule
  if (due === null) return task;
  const { taskId, state: from } = task;
  const fell: TaskEvent =
    due.kind === 'deadline'
      ? { type: 'TaskExpired', data: { taskId, from, to: 'Canceled', reason: 'expired', deadline: due.at, expiredAt: due.at } }
      : { type: 'TaskLeaseExpired', data: { taskId, claimant: due.claimant, from, leaseExpiresAt: due.at, expiredAt: due.at } };
  return { ...applied(task, fell, sweeper), updatedAt: due.at, updatedBy: sweeper };
}

/** The one state a task is at while it is in its audience's claimable list (a claim takes it out). */
export const CLAIMABLE_STATE: TaskState = 'Submitted';

/** Who has the task in a list. */
export function membersOf(task: TaskView, list: TaskList): readonly string[] {
  switch (list) {
    case 'sent':
      return [task.sender];
    case 'assigned':
      return task.assignee === null ? [] : [task.assignee];
    case 'claimable':
      return openToAudience(task) && task.assignee === null && task.state === CLAIMABLE_STATE ? task.audience : [];
    case 'asking':
      return task.state === 'InputRequired' || task.state === 'AuthRequired' ? [task.sender] : [];
  }
}

/** Who the task waits on (heartbeat counts). */
export function waitingOn(task: TaskView): readonly string[] {
  if (waitsOnHolderState(task.state) && task.assignee !== null) return [task.assignee];
  if (task.state === 'InputRequired' || task.state === 'AuthRequired') return [task.sender];
  if (task.outcomeUnseen === true) return [task.sender]; // records stored before the field have none: seen
  return [];
}

function moved(before: TaskView | null, after: TaskView, sink: TaskChangeSink): void {
  for (const list of TASK_LISTS) {
    const was = before === null ? [] : membersOf(before, list);
    const is = membersOf(after, list);
    if (was === is) continue;
    const now = new Set(is);
    for (const identity of was) if (!now.has(identity)) sink.taskUnlisted(list, identity, after.taskId);
    const then = new Set(was);
    for (const identity of is) if (!then.has(identity)) sink.taskListed(list, identity, after.taskId, after.position);
  }
  const was = before === null ? [] : waitingOn(before);
  const is = waitingOn(after);
  for (const identity of was) if (!is.includes(identity)) sink.tasksWaitingMoved(identity, -1);
  for (const identity of is) {
    if (was.includes(identity)) continue;
    sink.tasksWaitingMoved(identity, 1);
    // The change that made it wait on the identity, when (the change's own time) and which task: what is new to it.
    sink.tasksWaitingBegan(identity, { position: after.updatedPosition, at: after.updatedAt, taskId: after.taskId });
  }
}
