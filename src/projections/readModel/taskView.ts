/**
 * The task views (issue 12): one record per task, four lists per agent
 * (assigned to me, claimable by me, sent by me, sent by me and asking me) and a count of the tasks
 * waiting on each agent (heartbeat). Stores keep them; the rules in
 * taskRules.ts decide every change.
 */
import { directRecipient, type Addressee } from '../../events/addressing';
import { nextDueAt, type TaskTimes } from '../../events/taskTimes';
import type { Priority, TaskState } from '../../events/types';

/**
 * `asking` (not a user view): the tasks an agent sent that ask it for input or authorization, so that its message in a
 * task's thread finds the tasks it answers by their number, not by a scan of everything it sent (taskAnswers.ts).
 */
export const TASK_LISTS = ['assigned', 'claimable', 'sent', 'asking'] as const;
export type TaskList = (typeof TASK_LISTS)[number];

/** A task as the views hold it. Lists order tasks by `position` (when the message that opened it was logged). */
export interface TaskView {
  taskId: string;
  threadId: string;
  sender: string;
  to: Addressee;
  subject: string;
  priority: Priority;
  sentAt: string;
  /** Sent to AGENT:* (DESIGN section 2: the broadcast is that literal, nothing else; a list is not one). */
  isBroadcast: boolean;
  /** Who may hold it: a direct message's recipient, a broadcast's send-time audience, or a list's identities. */
  audience: string[];
  state: TaskState;
  assignee: string | null;
  claimedAt: string | null;
  leaseExpiresAt: string | null;
  /** The earlier of expiresAt and budget.deadline. */
  deadline: string | null;
  /** The last note or reason given with a state change (A2A status.message). */
  statusMessage: string | null;
  reason: string | null;
  updatedAt: string;
  updatedBy: string;
  artifactCount: number;
  /** The last claimant whose lease lapsed, if any. */
  lapsedClaimant: string | null;
  /** Ended without its sender (not the sender's cancel) and the sender has not read it yet: it waits on the sender. */
  outcomeUnseen: boolean;
  position: number;
  /** The log position of the last event that changed it (a redelivered event changes nothing). */
  updatedPosition: number;
}

/** No one holds it from the send: a broadcast's or a list's task waits for a claim by one of its audience. */
export const openToAudience = (task: Pick<TaskView, 'to'>): boolean => directRecipient(task.to) === null;

export interface TaskViewLookup {
  task(taskId: string): TaskView | undefined;
}

export interface TaskChangeSink {
  /** The task's whole record, as it is after the event. */
  taskUpserted(task: TaskView): void;
  taskListed(list: TaskList, identity: string, taskId: string, position: number): void;
  taskUnlisted(list: TaskList, identity: string, taskId: string): void;
  /** The number of tasks waiting on the identity moves by one. */
  tasksWaitingMoved(identity: string, by: 1 | -1): void;
  /**
   * A task began waiting on the identity (after its tasksWaitingMoved +1): the identity's tasksWaitingSince. Cleared by
   * the store when its count falls to 0.
   */
  tasksWaitingBegan(identity: string, since: WaitingSince): void;
  /** An event made a line in the task's history (events/taskHistoryLine.ts): its id names that task from now on. */
  historyLineRecorded(eventId: string, taskId: string): void;
}

/**
 * The last change that made a task begin waiting on an identity (heartbeat): its log position, when it was made and the
 * task. Tasks that stop waiting leave it as it is; a task that begins waiting again (asked for input, answered, waiting
 * again) moves it. A lease renewed or an artifact added moves no task into or out of waiting: it stays.
 */
export interface WaitingSince {
  position: number;
  at: string;
  taskId: string;
}

/** A WaitingSince as the SQLite and Redis views hold it: one text. */
export const waitingSinceMark = (since: WaitingSince): string => `${since.position}|${since.at}|${since.taskId}`;

export const waitingSinceOf = (mark: string): WaitingSince => {
  const [position, at, taskId] = mark.split('|');
  return { position: Number(position), at, taskId };
};

export type TaskChange =
  | { kind: 'taskUpserted'; task: TaskView }
  | { kind: 'taskListed'; list: TaskList; identity: string; taskId: string; position: number }
  | { kind: 'taskUnlisted'; list: TaskList; identity: string; taskId: string }
  | { kind: 'tasksWaitingMoved'; identity: string; by: 1 | -1 }
  | { kind: 'tasksWaitingBegan'; identity: string; since: WaitingSince }
  | { kind: 'historyLineRecorded'; eventId: string; taskId: string };

export function collectTaskChanges(into: { push(change: TaskChange): unknown }): TaskChangeSink {
  return {
    taskUpserted: (task) => into.push({ kind: 'taskUpserted', task }),
    taskListed: (list, identity, taskId, position) => into.push({ kind: 'taskListed', list, identity, taskId, position }),
    taskUnlisted: (list, identity, taskId) => into.push({ kind: 'taskUnlisted', list, identity, taskId }),
    tasksWaitingMoved: (identity, by) => into.push({ kind: 'tasksWaitingMoved', identity, by }),
    tasksWaitingBegan: (identity, since) => into.push({ kind: 'tasksWaitingBegan', identity, since }),
    historyLineRecorded: (eventId, taskId) => into.push({ kind: 'historyLineRecorded', eventId, taskId }),
  };
}

export function replayTaskChange(change: TaskChange, sink: TaskChangeSink): void {
  switch (change.kind) {
    case 'taskUpserted':
      return sink.taskUpserted(change.task);
    case 'taskListed':
      return sink.taskListed(change.list, change.identity, change.taskId, change.position);
    case 'taskUnlisted':
      return sink.taskUnlisted(change.list, change.identity, change.taskId);
    case 'tasksWaitingMoved':
      return sink.tasksWaitingMoved(change.identity, change.by);
    case 'tasksWaitingBegan':
      return sink.tasksWaitingBegan(change.identity, change.since);
    case 'historyLineRecorded':
      return sink.historyLineRecorded(change.eventId, change.taskId);
    default: {
      const unexpected: never = change;
      throw new Error(`Unknown task change ${(unexpected as { kind: string }).kind}`);
    }
  }
}

/** What the sweeper's rule (events/taskTimes.ts) reads of a task's record. */
export const taskTimesOf = (task: TaskView): TaskTimes => ({
  state: task.state,
  openToAudience: openToAudience(task),
  assignee: task.assignee,
  leaseExpiresAt: task.leaseExpiresAt,
  deadline: task.deadline,
});

/** When an open task falls due for the sweeper (ms), or null: what every task view store indexes it by. */
export const dueAt = (task: TaskView): number | null => nextDueAt(taskTimesOf(task));
