/**
 * The task decider (issue 12): claims, transitions and the sweeper's
 * decisions, pure. `(command, state) -> events | error`; the time is the
 * command's (metadata.at), never the clock's.
 */
import { MailboxError } from '../../errors';
import { BROADCAST_ADDRESS } from '../../events/addressing';
import { fallenDue } from '../../events/taskTimes';
import type { TaskArtifact, TaskEvent, TaskState as TaskStateName } from '../../events/types';
import type { RegistryState } from '../agentRegistry';
import type { Command } from '../command';
import type { Actor } from '../roles';
import type { MessageState } from '../message';
import {
  alreadyClaimed,
  artifactsOnlyOnCompletion,
  invalidTransition,
  leaseExpired,
  senderRetiredAsked,
  leaseNotApplicable,
  missingField,
  notInAudience,
  releaseTakesNoText,
  taskNotFound,
} from './taskErrors';
import {
  isTerminal,
  leaseLapsed,
  SENDER_RETIRED_REASON,
  taskAsOf,
  taskOf,
  waitsOnHolder,
  type Task,
  type TaskLog,
} from './taskState';
import { allowedRules, relationsOf } from './transitionTable';

export interface TaskContext {
  message: MessageState;
  log: TaskLog;
  /**
   * The registry, read by the application layer: whether a broadcast task's holder was retired (its claim then
   * binds nobody, like a lapsed lease), or its sender (nobody may ask it for input then). Absent: no one counts as
   * retired (claims, transitions and retirements pass it).
   */
  registry?: Pick<RegistryState, 'agents'>;
}

/** The states in which a task waits on its sender's answer. */
const ASKS_SENDER: ReadonlySet<TaskStateName> = new Set(['InputRequired', 'AuthRequired']);

export type ClaimTask = Command<'ClaimTask', { taskId: string; leaseSeconds?: number }>;
export interface ArtifactInput {
  name?: string;
  parts: TaskArtifact['parts'];
}
export type TransitionTask = Command<
  'TransitionTask',
  { taskId: string; to: TaskStateName; reason?: string; note?: string; artifacts?: ArtifactInput[] }
>;
/** The sender got the task (read it): records that it saw the outcome, once. */
export type SeeTaskOutcome = Command<'SeeTaskOutcome', { taskId: string }>;
/** The sweeper's look at one task: end what lapsed or expired, nothing else. */
export type SweepTask = Command<'SweepTask', { taskId: string }>;
/** A retirement's look at one task `holder` held: a broadcast task goes back to its audience (as a release would). */
export type ReleaseRetiredHolder = Command<'ReleaseRetiredHolder', { taskId: string; holder: string }>;
/** A retirement's look at one task `sender` sent: an open task is canceled (no input, no outcome can reach its sender). */
export type CancelRetiredSenderTask = Command<'CancelRetiredSenderTask', { taskId: string; sender: string }>;

export { SENDER_RETIRED_REASON };

const plusMs = (at: string, ms: number): string => new Date(Date.parse(at) + ms).toISOString();

function taskIn(taskId: string, { message, log }: TaskContext): Task | MailboxError {
  const task = message.sent ? taskOf(message.sent, log) : null;
  return task ?? taskNotFound(taskId);
}

/** The task as a claim or a move at `now` finds it: past its deadline, Canceled (taskAsOf), swept or not. */
function taskAt(taskId: string, context: TaskContext, now: string): Task | MailboxError {
  const task = taskIn(taskId, context);
  return task instanceof MailboxError ? task : taskAsOf(task, now);
}

/**
 * An agent that is no party to the message (not its sender, not its recipient, not in a list's audience) is told the
 * task does not exist, as get_task tells it: a claim or an update by a stranger is no oracle of a private task, its
 * recipient or its state. A literal broadcast's task keeps NOT_IN_AUDIENCE for agents registered after it
 * (docs/tasks.md): every agent registered then got it.
 */
function strangerRefusal(task: Task, context: TaskContext, actor: Actor): MailboxError | null {
  if (actor.role !== 'agent' || relationsOf(task, actor)[0] !== 'outsider') return null;
  return context.message.sent?.to === BROADCAST_ADDRESS ? null : taskNotFound(task.taskId);
}

export function decideClaimTask(command: ClaimTask, context: TaskContext): TaskEvent[] | MailboxError {
  const task = taskAt(command.data.taskId, context, command.metadata.at);
  if (task instanceof MailboxError) return task;
  const stranger = strangerRefusal(task, context, command.metadata.actor);
  if (stranger) return stranger;
  const { identity, role } = command.metadata.actor;
  const now = command.metadata.at;
  const relations = relationsOf(task, command.metadata.actor);
  // What the caller may do instead of a claim it cannot make (the sender: cancel an open task), so that the refusal
  // never says "no transition" to someone who has one.
  const instead = () => allowedRules(task, relations).map((rule) => rule.to);
  if (role !== 'agent' || !task.audience.includes(identity)) {
    if (relations.includes('sender') || role === 'auditor')
      return invalidTransition(task, identity, relations, 'claim', instead());
    return notInAudience(task, identity);
  }
  if (!task.openToAudience) {
    // Its recipient's from the start, so a claim changes nothing; but a finished task cannot be claimed (as a finished
    // broadcast task), rather than an answer that reads as though the claim meant something.
    if (isTerminal(task.state)) return invalidTransition(task, identity, relations, 'claim', instead());
    return command.data.leaseSeconds === undefined ? [] : leaseNotApplicable(task);
  }
  const lapsed = task.assignee !== null && leaseLapsed(task, now);
  // A retired holder can never release or finish it: its claim binds nobody, as a lapsed lease (the retirement
  // returns such tasks itself; this covers a retirement whose releases were not written, e.g. a crash between).
  // Never "already claimed" then: that refusal says the holder may still release it. A finished task stays finished.
  const retired = holderRetired(task, context);
  // Finished first: a task that ended is no one's to take, whoever held it; "already claimed" would tell the caller
  // to wait for a release that can never come.
  if (isTerminal(task.state)) return invalidTransition(task, identity, relations, 'claim', instead());
  if (task.assignee !== null && !lapsed && !retired && task.assignee !== identity) return alreadyClaimed(task);
  if (task.assignee === null && task.state !== 'Submitted') {
    return invalidTransition(task, identity, relations, 'claim', instead());
  }
  const leaseExpiresAt = command.data.leaseSeconds === undefined ? null : plusMs(now, command.data.leaseSeconds * 1000);
  if (task.assignee === identity && !lapsed) {
    // Claiming again is the explicit renew: the lease runs on from now (a new length when one is given).
    // Given to a holder without a lease, leaseSeconds starts one. No lease runs while the task waits on its sender.
    const leaseMs = command.data.leaseSeconds === undefined ? task.leaseMs : command.data.leaseSeconds * 1000;
    if (!waitsOnHolder(task)) return command.data.leaseSeconds === undefined ? [] : leaseNotApplicable(task);
    if (leaseMs === null) return [];
    return [
      {
        type: 'TaskLeaseRenewed',
        data: { taskId: task.taskId, claimant: identity, leaseExpiresAt: plusMs(now, leaseMs), renewedAt: now },
      },
    ];
  }
  const events: TaskEvent[] = [];
  if (lapsed) events.push(lapseOf(task, now));
  if (retired && !lapsed) events.push(releaseOf(task, task.assignee!, now));
  events.push({ type: 'TaskClaimed', data: { taskId: task.taskId, claimant: identity, claimedAt: now, leaseExpiresAt } });
  return events;
}

/** The task's sender is an agent the registry says was retired. */
const senderRetired = (task: Task, context: TaskContext): boolean =>
  (context.registry?.agents.get(task.sender)?.retiredAt ?? null) !== null;

/** The task's holder is an agent the registry says was retired. */
const holderRetired = (task: Task, context: TaskContext): boolean =>
  task.assignee !== null && (context.registry?.agents.get(task.assignee)?.retiredAt ?? null) !== null;

const releaseOf = (task: Task, claimant: string, now: string): TaskEvent => ({
  type: 'TaskReleased',
  data: { taskId: task.taskId, claimant, from: task.state, releasedAt: now },
});

const lapseOf = (task: Task, now: string): TaskEvent => ({
  type: 'TaskLeaseExpired',
  data: { taskId: task.taskId, claimant: task.assignee!, from: task.state, leaseExpiresAt: task.leaseExpiresAt!, expiredAt: now },
});

export function decideTransitionTask(command: TransitionTask, context: TaskContext): TaskEvent[] | MailboxError {
  const task = taskAt(command.data.taskId, context, command.metadata.at);
  if (task instanceof MailboxError) return task;
  const stranger = strangerRefusal(task, context, command.metadata.actor);
  if (stranger) return stranger;
  const { identity } = command.metadata.actor;
  const now = command.metadata.at;
  const { to, reason, note, artifacts } = command.data;
  const relations = relationsOf(task, command.metadata.actor);
  // An agent outside a broadcast's send-time audience may neither claim nor move it, and is told so as a claim is,
  // never the task's state (get_task tells it nothing of the task either).
  if (command.metadata.actor.role === 'agent' && relations[0] === 'outsider') return notInAudience(task, identity);
  // A lapsed lease is lost even before the sweeper records it: the late update is told so, and changes nothing.
  if (relations.includes('assignee') && leaseLapsed(task, now) && !relations.includes('sender')) {
    return leaseExpired(task, identity, task.leaseExpiresAt!);
  }
  if (!relations.includes('assignee') && task.lapsed?.claimant === identity && !isTerminal(task.state)) {
    return leaseExpired(task, identity, task.lapsed.leaseExpiresAt);
  }
  // A retired sender can never answer: asking it (InputRequired, AuthRequired) would hold the task for good. Its
  // retirement cancels its open tasks; this covers a retirement whose cancels were not written yet (a crash between).
  const retiredSender = senderRetired(task, context);
  const table = allowedRules(task, relations);
  const rules = retiredSender ? table.filter((r) => !ASKS_SENDER.has(r.to)) : table;
  const rule = rules.find((r) => r.to === to);
  if (!rule && retiredSender && table.some((r) => r.to === to))
    return senderRetiredAsked(
      task,
      identity,
      to,
      rules.map((r) => r.to),
    );
  if (!rule)
    return invalidTransition(
      task,
      identity,
      relations,
      to,
      rules.map((r) => r.to),
    );
  if (rule.requires === 'reason' && !reason) return missingField('reason', to, undefined, note ? 'note' : undefined);
  if (rule.requires === 'note' && !note) return missingField('note', to, undefined, reason ? 'reason' : undefined);
  if (artifacts?.length && to !== 'Completed') return artifactsOnlyOnCompletion(to);

  if (to === 'Submitted') {
    if (note !== undefined) return releaseTakesNoText('note');
    if (reason !== undefined) return releaseTakesNoText('reason');
    return [releaseOf(task, identity, now)];
  }
  const events: TaskEvent[] = (artifacts ?? []).map((artifact, index) => ({
    type: 'TaskArtifactAdded',
    data: {
      taskId: task.taskId,
      artifact: {
        artifactId: `${task.taskId}-artifact-${task.artifacts.length + index + 1}`,
        name: artifact.name ?? null,
        parts: artifact.parts,
      },
      addedAt: now,
    },
  }));
  events.push({
    type: 'TaskStateChanged',
    data: { taskId: task.taskId, from: task.state, to, reason: reason ?? null, note: note ?? null, changedAt: now },
  });
  // Any update that leaves the task waiting on its assignee renews the lease from now.
  if (task.assignee !== null && task.leaseMs !== null && to === 'Working') {
    events.push({
      type: 'TaskLeaseRenewed',
      data: { taskId: task.taskId, claimant: task.assignee, leaseExpiresAt: plusMs(now, task.leaseMs), renewedAt: now },
    });
  }
  return events;
}

/**
 * Expiry first (a task past its deadline ends, whoever holds it), then a lapsed lease of a broadcast's or a list's
 * holder (events/taskTimes.ts fallenDue, the rule the views' due times and reads as of now follow). Idempotent: once
 * written, the same look decides nothing, so two sweepers write it once (with expected revisions).
 */
export function decideSweepTask(command: SweepTask, context: TaskContext): TaskEvent[] | MailboxError {
  const task = taskIn(command.data.taskId, context);
  if (task instanceof MailboxError) return task;
  const now = command.metadata.at;
  const due = fallenDue(task, Date.parse(now)); // events/taskTimes.ts: the rule the views' due times follow too
  if (due === null) return [];
  if (due.kind === 'lease') return [lapseOf(task, now)];
  return [
    {
      type: 'TaskExpired',
      data: { taskId: task.taskId, from: task.state, to: 'Canceled', reason: 'expired', deadline: due.at, expiredAt: now },
    },
  ];
}

/**
 * Retiring an agent returns each broadcast task it still holds to the task's audience: a TaskReleased naming it, as
 * its own release would (back to Submitted, claimable again), so that no task waits forever on an agent that can
 * never act again. Decides nothing for a direct task (its recipient holds it from the send; there is no audience to
 * return it to), a finished one, one held by someone else (already released, or claimed anew since), or when the
 * registry does not say the holder was retired. Idempotent: once released, the same look decides nothing.
 */
export function decideReleaseRetiredHolder(command: ReleaseRetiredHolder, context: TaskContext): TaskEvent[] | MailboxError {
  const task = taskAt(command.data.taskId, context, command.metadata.at); // past its deadline: the sweeper's
  if (task instanceof MailboxError) return task;
  if (!task.openToAudience || isTerminal(task.state) || task.assignee !== command.data.holder) return [];
  if (!holderRetired(task, context)) return [];
  return [releaseOf(task, command.data.holder, command.metadata.at)];
}

/**
 * Retiring an agent cancels each task it sent that has not ended (Submitted, Working, InputRequired, AuthRequired,
 * Unknown), whoever holds it: a TaskStateChanged to Canceled with reason "sender retired" (the sender's own cancel, made
 * for it), since no input, authorization or cancel can ever come from it and no one is left to take the outcome. Its
 * holder is woken as on any cancel, and nobody waits on the outcome. Decides nothing for a finished task, one sent by
 * someone else, or when the registry does not say the sender was retired. Idempotent: once canceled, the same look
 * decides nothing.
 */
export function decideCancelRetiredSenderTask(
  command: CancelRetiredSenderTask,
  context: TaskContext,
): TaskEvent[] | MailboxError {
  const task = taskAt(command.data.taskId, context, command.metadata.at); // past its deadline: the sweeper's
  if (task instanceof MailboxError) return task;
  if (isTerminal(task.state) || task.sender !== command.data.sender || !senderRetired(task, context)) return [];
  const changedAt = command.metadata.at;
  return [
    {
      type: 'TaskStateChanged',
      data: { taskId: task.taskId, from: task.state, to: 'Canceled', reason: SENDER_RETIRED_REASON, note: null, changedAt },
    },
  ];
}

/**
 * The sender read a task that ended without it: the outcome is seen (the task stops waiting on the sender).
 * Anything else decides nothing, never an error: the read that asks is not a command the caller chose to make.
 * Idempotent: once seen, the same look decides nothing.
 */
export function decideSeeTaskOutcome(command: SeeTaskOutcome, context: TaskContext): TaskEvent[] | MailboxError {
  const task = taskIn(command.data.taskId, context);
  if (task instanceof MailboxError) return task;
  const { identity, role } = command.metadata.actor;
  if (role !== 'agent' || identity !== task.sender || !task.outcomeUnseen) return [];
  return [
    {
      type: 'TaskOutcomeSeen',
      data: { taskId: task.taskId, sender: identity, state: task.state, seenAt: command.metadata.at },
    },
  ];
}
