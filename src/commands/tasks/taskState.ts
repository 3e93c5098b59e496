/**
 * A task's state: what its message opened (sender, audience, envelope) plus
 * what its own stream changed since (claims, transitions, leases, artifacts).
 * Pure folds; the message's part never changes after the send.
 */
import { directRecipient, isBroadcastAddress } from '../../events/addressing';
import { openingTaskState, taskDeadline } from '../../events/taskShapes';
import { fallenDue, isTerminalState, runningLease, waitsOnHolderState } from '../../events/taskTimes';
import type { MessageSent, TaskArtifact, TaskEvent, TaskState as TaskStateName } from '../../events/types';

export type { TaskStateName };

/** Terminal states are final (A2A v1.0): events/taskTimes.ts says which. */
export const isTerminal = isTerminalState;

/** What the task's own stream says, folded. `undefined`: not changed by the stream (the message's value holds). */
export interface TaskLog {
  state: TaskStateName | undefined;
  assignee: string | null | undefined;
  claimedAt: string | null;
  leaseExpiresAt: string | null;
  /** The lease length of the current claim, to renew by (null: no lease). */
  leaseMs: number | null;
  /**
   * The last claimant whose lease lapsed, so its late update is told why: until it claims the task again (it holds it
   * then, and a later release of its own is no lapse) or the task ends.
   */
  lapsed: { claimant: string; leaseExpiresAt: string } | null;
  artifacts: TaskArtifact[];
  updatedAt: string | null;
  /**
   * Who ended the task (null: not ended by the stream). Read from the event, not its metadata: by the table only
   * the sender cancels and only the assignee completes, fails or rejects; an expiry is the sweeper's.
   */
  endedBy: 'sender' | 'assignee' | 'sweeper' | null;
  /** When the stream ended the task, and the reason it gave (null: not ended by the stream). */
  ended: { at: string; reason: string | null } | null;
  /** The sender read the outcome (TaskOutcomeSeen). */
  outcomeSeen: boolean;
}

export const initialTaskLog = (): TaskLog => ({
  state: undefined,
  assignee: undefined,
  claimedAt: null,
  leaseExpiresAt: null,
  leaseMs: null,
  lapsed: null,
  artifacts: [],
  updatedAt: null,
  endedBy: null,
  ended: null,
  outcomeSeen: false,
});

export function foldTask(log: TaskLog, events: readonly TaskEvent[]): TaskLog {
  let next = log;
  for (const event of events) next = evolveTaskLog(next, event);
  return next;
}

/**
 * What the task's stream said before log position `position` (an event's): its events at earlier positions folded. A
 * retried send's notes read the task as it stood at the send (taskAnswers.ts holderNotes), not as it stands now.
 */
export const taskLogBefore = (events: ReadonlyArray<{ position: bigint }>, position: bigint): TaskLog =>
  foldTask(initialTaskLog(), events.filter((event) => event.position < position) as unknown as TaskEvent[]);

function evolveTaskLog(log: TaskLog, event: TaskEvent): TaskLog {
  switch (event.type) {
    case 'TaskClaimed': {
      const { claimant, claimedAt, leaseExpiresAt } = event.data;
      const leaseMs = leaseExpiresAt === null ? null : Date.parse(leaseExpiresAt) - Date.parse(claimedAt);
      const lapsed = log.lapsed?.claimant === claimant ? null : log.lapsed;
      return { ...log, assignee: claimant, claimedAt, leaseExpiresAt, leaseMs, lapsed, updatedAt: claimedAt };
    }
    case 'TaskStateChanged': {
      const { to, changedAt, reason } = event.data;
      const endedBy = !isTerminal(to) ? null : to === 'Canceled' ? 'sender' : 'assignee';
      const ended = isTerminal(to) ? { at: changedAt, reason } : null;
      return { ...log, state: to, updatedAt: changedAt, endedBy, ended, lapsed: isTerminal(to) ? null : log.lapsed };
    }
    case 'TaskArtifactAdded':
      return { ...log, artifacts: [...log.artifacts, event.data.artifact], updatedAt: event.data.addedAt };
    case 'TaskLeaseRenewed': {
      // A renewal runs for the length it was given: a new one when claiming again set it (or started a lease).
      const { leaseExpiresAt, renewedAt } = event.data;
      return { ...log, leaseExpiresAt, leaseMs: Date.parse(leaseExpiresAt) - Date.parse(renewedAt), updatedAt: renewedAt };
    }
    case 'TaskReleased':
      return { ...unclaimed(log), state: 'Submitted', updatedAt: event.data.releasedAt };
    case 'TaskLeaseExpired': {
      const { claimant, leaseExpiresAt, expiredAt } = event.data;
      return { ...unclaimed(log), state: 'Submitted', lapsed: { claimant, leaseExpiresAt }, updatedAt: expiredAt };
    }
    case 'TaskExpired':
      return {
        ...log,
        state: event.data.to,
        leaseExpiresAt: null,
        lapsed: null,
        updatedAt: event.data.expiredAt,
        endedBy: 'sweeper',
        // It ended at its deadline, as every read before the sweep says; the sweep only records it (later).
        ended: { at: event.data.deadline, reason: event.data.reason },
      };
    case 'TaskOutcomeSeen':
      return { ...log, outcomeSeen: true }; // reading is no change to the task: updatedAt stays
    default: {
      const unexpected: never = event;
      throw new Error(`Unexpected task event type ${(unexpected as { type: string }).type}`);
    }
  }
}

const unclaimed = (log: TaskLog): TaskLog => ({ ...log, assignee: null, claimedAt: null, leaseExpiresAt: null, leaseMs: null });

/** The task as the decider sees it: the message's part and the stream's part together. */
export interface Task {
  taskId: string;
  sender: string;
  /** Sent to AGENT:* (DESIGN section 2: the broadcast is that literal, nothing else). */
  isBroadcast: boolean;
  /** No one holds it from the send: a broadcast's or a list's task waits for a claim by one of its audience. */
  openToAudience: boolean;
  /** Who may hold it: the recipient of a direct message, a broadcast's send-time audience, a list's identities. */
  audience: readonly string[];
  state: TaskStateName;
  assignee: string | null;
  claimedAt: string | null;
  leaseExpiresAt: string | null;
  leaseMs: number | null;
  lapsed: TaskLog['lapsed'];
  /** The earlier of the envelope's expiresAt and budget.deadline, or null. */
  deadline: string | null;
  artifacts: readonly TaskArtifact[];
  /**
   * Ended by someone other than its sender (the assignee, the sweeper) and not yet read by the sender: it waits on
   * the sender until the sender gets it (issue 12, Deliver 5: terminal-unseen).
   */
  outcomeUnseen: boolean;
  /** How a finished task ended (null while it is open), so that a refusal can say so. */
  ending: TaskEnding | null;
}

/** Why a retirement cancels its agent's open tasks (the reason of the TaskStateChanged it writes). */
export const SENDER_RETIRED_REASON = 'sender retired';

/**
 * How a finished task ended: who ended it (`by`: the sender's cancel, the holder's completion, failure or rejection;
 * null when the mailbox did, at its deadline or its sender's retirement), when, and the reason given. A task sent in a
 * final state ended at its send, by its sender (`sent`).
 */
export interface TaskEnding {
  state: TaskStateName;
  at: string;
  by: string | null;
  cause: 'sent' | 'sender' | 'assignee' | 'expired' | 'senderRetired';
  reason: string | null;
}

function endingOf(sent: MessageSent['data'], log: TaskLog, state: TaskStateName, assignee: string | null): TaskEnding | null {
  if (!isTerminal(state)) return null;
  if (log.ended === null || log.endedBy === null) return { state, at: sent.sentAt, by: sent.from, cause: 'sent', reason: null };
  const { at, reason } = log.ended;
  if (log.endedBy === 'sweeper') return { state, at, by: null, cause: 'expired', reason };
  if (log.endedBy === 'assignee') return { state, at, by: assignee, cause: 'assignee', reason };
  if (reason === SENDER_RETIRED_REASON) return { state, at, by: null, cause: 'senderRetired', reason };
  return { state, at, by: sent.from, cause: 'sender', reason };
}

/** Null when the message carries no task. */
export function taskOf(sent: MessageSent['data'], log: TaskLog): Task | null {
  if (sent.task === null) return null;
  const direct = directRecipient(sent.to); // a broadcast's or a list's task waits for a claim by one of its audience
  const assignee = log.assignee === undefined ? direct : log.assignee;
  const endedByOther = log.endedBy === 'sweeper' || (log.endedBy === 'assignee' && assignee !== sent.from);
  const state = log.state ?? openingTaskState(sent.task);
  return {
    taskId: sent.messageId,
    sender: sent.from,
    isBroadcast: isBroadcastAddress(sent.to),
    openToAudience: direct === null,
    audience: sent.recipients,
    state,
    assignee,
    claimedAt: log.claimedAt,
    leaseExpiresAt: log.leaseExpiresAt,
    leaseMs: log.leaseMs,
    lapsed: log.lapsed,
    deadline: taskDeadline(sent.task),
    artifacts: log.artifacts,
    outcomeUnseen: endedByOther && !log.outcomeSeen,
    ending: endingOf(sent, log, state, assignee),
  };
}

/** The task waits on its assignee (Submitted, Working), not on its sender nor on nobody (finished). */
export const waitsOnHolder = (task: Task): boolean => waitsOnHolderState(task.state);

/** The lease's end while it runs (it holds the task only while it waits on its assignee), else null: what a task's
 * answers and views show (a paused lease shows none). */
export const runningLeaseExpiresAt = (task: Task): string | null => runningLease(task);

export const leaseLapsed = (task: Task, now: string): boolean => {
  const lease = runningLease(task);
  return lease !== null && Date.parse(lease) <= Date.parse(now);
};

/** Why the mailbox ends a task at its deadline (the reason of the TaskExpired the sweeper writes). */
export const EXPIRED_REASON = 'expired';

/**
 * The task as of `now` for a claim or a move: past its deadline it is Canceled (expired at the deadline), as every read
 * shows it, whether or not the sweeper has recorded it yet. A claim or a move then is refused as on any finished task,
 * and writes nothing: the sweeper records the expiry (a claim took the task after its deadline, its holder completed it,
 * its sender canceled it, and the sweep found it ended by them).
 */
export function taskAsOf(task: Task, now: string): Task {
  const due = fallenDue(task, Date.parse(now));
  if (due?.kind !== 'deadline') return task;
  const ending: TaskEnding = { state: 'Canceled', at: due.at, by: null, cause: 'expired', reason: EXPIRED_REASON };
  return { ...task, state: 'Canceled', leaseExpiresAt: null, lapsed: null, ending };
}
