/**
 * A task as an A2A v1.0 Task object (id, contextId, status, artifacts,
 * history, metadata) plus the mailbox's own fields (assignee, lease,
 * audience) under `mailbox`. States in the A2A part use the v1.0 enum
 * spelling (TASK_STATE_WORKING); the mailbox part keeps the stored PascalCase.
 */
import type { Addressee } from '../events/addressing';
import type { MessageSent, TaskArtifact, TaskEvent, TaskState } from '../events/types';
import { runningLeaseExpiresAt, type Task } from '../commands/tasks/taskState';
import { makesHistoryLine } from '../events/taskHistoryLine';
import { fellDueAt } from '../events/taskTimes';

const V1_STATE: Record<TaskState, string> = {
  Submitted: 'TASK_STATE_SUBMITTED',
  Working: 'TASK_STATE_WORKING',
  InputRequired: 'TASK_STATE_INPUT_REQUIRED',
  AuthRequired: 'TASK_STATE_AUTH_REQUIRED',
  Completed: 'TASK_STATE_COMPLETED',
  Canceled: 'TASK_STATE_CANCELLED',
  Failed: 'TASK_STATE_FAILED',
  Rejected: 'TASK_STATE_REJECTED',
  Unknown: 'TASK_STATE_UNSPECIFIED',
};

type Part = TaskArtifact['parts'][number];

/** A task event as its history reads it: a stored one, or one a read shows as due (a lapse, an expiry not swept yet). */
export type HistoryEvent = TaskEvent & { eventId: string; metadata: { actor: string; at: string } };

export type A2aMessage = {
  messageId: string;
  contextId: string;
  taskId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: Part[];
  metadata: { from: string; at: string; event: string };
}; // a type, not an interface: assignable to the response schema's open object (an interface has no index signature)

export interface A2aTask {
  id: string;
  contextId: string;
  status: { state: string; message: A2aMessage | null; timestamp: string };
  artifacts: TaskArtifact[];
  history: A2aMessage[];
  metadata: Record<string, unknown>;
  mailbox: {
    taskId: string;
    messageId: string;
    state: TaskState;
    sender: string;
    to: Addressee;
    subject: string;
    assignee: string | null;
    claimedAt: string | null;
    lease: { expiresAt: string } | null;
    deadline: string | null;
    /** Who may hold it: the recipient of a direct task, or the broadcast's send-time audience (only its size is shown to others). */
    audienceSize: number;
    lapsedClaimant: string | null;
  };
}

/**
 * What a history line says, for the events that change the task's state or its holder (null: the event changes
 * neither, e.g. a renewed lease). A release and a lapsed lease put the task back to Submitted: they are lines too, or
 * the status would show the last line before them ("Submitted -> Working") beside the state Submitted. A claim is a
 * line as well: without it a task released and claimed again showed "released by @b: ... claimable again" as its status
 * beside its new holder.
 */
function lineText(event: HistoryEvent): string | null {
  switch (event.type) {
    case 'TaskClaimed':
      return event.data.leaseExpiresAt === null
        ? `claimed by ${event.data.claimant}`
        : `claimed by ${event.data.claimant}, lease to ${event.data.leaseExpiresAt}`;
    case 'TaskStateChanged': {
      // Both given, both are said: a Failed task's required reason beside its holder's note was shown nowhere a
      // reader of the task looks (the note alone was its status and history line).
      const { note, reason, from, to } = event.data;
      if (note !== null && reason !== null) return `${note} (reason: ${reason})`;
      return note ?? reason ?? `${from} -> ${to}`;
    }
    case 'TaskExpired':
      return `expired at its deadline ${event.data.deadline}`;
    case 'TaskReleased':
      // Released by someone else than its claimant: the claimant was retired (its release is the retirement's).
      return event.data.claimant === event.metadata.actor
        ? `released by ${event.data.claimant}: back to Submitted, claimable again`
        : `released from ${event.data.claimant}, who was retired: back to Submitted, claimable again`;
    case 'TaskLeaseExpired':
      return `the lease of ${event.data.claimant} lapsed at ${event.data.leaseExpiresAt}: back to Submitted, claimable again`;
    default:
      return null;
  }
}

/**
 * When the event happened to the task: an expiry at its deadline and a lapse at its lease's end, as a read before the
 * sweep dates them (the sweep that records one runs later: its time said the task ended, or went back to its audience,
 * when the sweeper got to it); any other event when written.
 */
const happenedAt = (event: HistoryEvent): string => fellDueAt(event) ?? event.metadata.at;

/** A line of the task's history: the sender's messages are the user's, the assignee's the agent's. */
function historyLine(sent: MessageSent['data'], event: HistoryEvent): A2aMessage | null {
  // Only the events the views record as lines (events/taskHistoryLine.ts): every line's id then names its task.
  const text = makesHistoryLine(event.type) ? lineText(event) : null;
  if (text === null) return null;
  return {
    messageId: event.eventId,
    contextId: sent.threadId,
    taskId: sent.messageId,
    role: event.metadata.actor === sent.from ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: [{ kind: 'text', text }],
    metadata: { from: event.metadata.actor, at: happenedAt(event), event: event.type },
  };
}

export function toA2aTask(sent: MessageSent['data'], task: Task, events: readonly HistoryEvent[]): A2aTask {
  const opening: A2aMessage = {
    messageId: sent.messageId,
    contextId: sent.threadId,
    taskId: sent.messageId,
    role: 'ROLE_USER',
    parts: sent.task?.input?.parts?.length ? sent.task.input.parts : [{ kind: 'text', text: sent.body }],
    metadata: { from: sent.from, at: sent.sentAt, event: 'MessageSent' },
  };
  const history = [
    opening,
    ...events.map((event) => historyLine(sent, event)).filter((line): line is A2aMessage => line !== null),
  ];
  // The status's time is that of the last change to the task: the sender reading the outcome (TaskOutcomeSeen)
  // changes nothing (as in the read model's updatedAt), so it must not move the timestamp every reader sees.
  const last = events.filter((event) => event.type !== 'TaskOutcomeSeen').at(-1);
  const statusLine = history.length > 1 ? history[history.length - 1] : null;
  const { state: _state, input: _input, ...envelope } = sent.task ?? {};
  const lease = runningLeaseExpiresAt(task); // paused (the task waits on its sender): none runs
  return {
    id: task.taskId,
    contextId: sent.threadId,
    status: { state: V1_STATE[task.state], message: statusLine, timestamp: last === undefined ? sent.sentAt : happenedAt(last) },
    artifacts: [...task.artifacts],
    history,
    metadata: { ...envelope },
    mailbox: {
      taskId: task.taskId,
      messageId: sent.messageId,
      state: task.state,
      sender: task.sender,
      to: sent.to,
      subject: sent.subject,
      assignee: task.assignee,
      claimedAt: task.claimedAt,
      lease: lease === null ? null : { expiresAt: lease },
      deadline: task.deadline,
      audienceSize: task.audience.length,
      lapsedClaimant: task.lapsed?.claimant ?? null,
    },
  };
}
