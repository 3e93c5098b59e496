/** The task errors, each saying what is true now and what the caller can do instead. */
import { MailboxError } from '../../errors';
import { TRANSITION_TABLE, type Relation } from './transitionTable';
import { isTerminal, type Task, type TaskEnding, type TaskStateName } from './taskState';

export const taskNotFound = (taskId: string): MailboxError =>
  new MailboxError(
    'TASK_NOT_FOUND',
    'Task not found',
    `No task ${taskId} exists among the tasks you sent, hold or may claim; a task's id is the id of the message that carried it ` +
      "(list yours with GET /v1/tasks or list_tasks), and an entry of a task's history names its task in its taskId.",
    { taskId },
  );

/**
 * get_task (`move`: claim_task, update_task) given the id of an entry of a task's history that the caller may read:
 * names that task (historyEntries.ts).
 */
export const historyEntryNotTask = (id: string, taskId: string, move = false): MailboxError =>
  new MailboxError(
    'TASK_NOT_FOUND',
    'Task not found',
    `${id} is no task: it is an entry of the history of task ${taskId} (its history[].messageId or ` +
      (move
        ? `status.message.messageId). Give the task's own id: {"taskId": "${taskId}"}; get_task reads it.`
        : `status.message.messageId). Read that task with get_task {"taskId": "${taskId}"} (GET /v1/tasks/${taskId}).`),
    { taskId: id, entryOf: taskId },
  );

/**
 * The refusal of an id that names no task, for `actor`. A message the actor sent or received (or, as an auditor, may
 * read) that carries no task is said to be one, which reveals nothing it may not read: a model claiming or updating
 * a plain message's id was told "No task exists", as if the id were wrong, and tried other ids. To anyone else the id
 * names nothing, as before.
 */
export function noTaskBy(
  taskId: string,
  sent: { from: string; recipients: readonly string[] } | null,
  actor: { identity: string; role: string },
): MailboxError {
  const party =
    sent !== null && (actor.role !== 'agent' || sent.from === actor.identity || sent.recipients.includes(actor.identity));
  if (!party) return taskNotFound(taskId);
  return new MailboxError(
    'TASK_NOT_FOUND',
    'Task not found',
    `Message ${taskId} carries no task: it was sent without one, so there is nothing to claim, move or read as a task. ` +
      "A task is a message sent with 'task' (add_message's task, e.g. {\"task\": {}}), and its id is that message's id; " +
      'list_tasks (GET /v1/tasks) lists yours. The message itself is read with get_message.',
    { taskId, messageId: taskId },
  );
}

export const notInAudience = (task: Task, identity: string): MailboxError =>
  new MailboxError(
    'NOT_IN_AUDIENCE',
    'Not in the audience',
    task.isBroadcast
      ? `${identity} was not in the audience of task ${task.taskId} when it was sent (a broadcast's audience is the agents ` +
          'registered at send time, less the sender); only they may claim it, and only its holder and its sender may move it.'
      : task.openToAudience
        ? `${identity} is not one of the ${task.audience.length} identities task ${task.taskId} was sent to (a list's ` +
          'audience is the identities it names); only they may claim it.'
        : `Task ${task.taskId} was sent directly to ${task.audience[0]}, who holds it; it cannot be claimed by anyone else.`,
    { taskId: task.taskId },
  );

export const alreadyClaimed = (task: Task): MailboxError =>
  new MailboxError(
    'TASK_ALREADY_CLAIMED',
    'Task already claimed',
    `Task ${task.taskId} was claimed by ${task.assignee} at ${task.claimedAt}; the first claim wins. ` +
      (task.leaseExpiresAt
        ? `Its lease runs to ${task.leaseExpiresAt}; if it lapses the task is claimable again.`
        : 'It stays theirs until they release or finish it, or until they are retired (retiring an agent returns its ' +
          'AGENT:* and list tasks to their audience).') +
      ' Should it come back, you are woken (a wake/task on GET /v1/wake: event TaskReleased or TaskLeaseExpired): wait ' +
      'for that rather than claiming again.',
    { taskId: task.taskId, claimant: task.assignee, claimedAt: task.claimedAt, leaseExpiresAt: task.leaseExpiresAt },
  );

export const leaseExpired = (task: Task, identity: string, leaseExpiresAt: string): MailboxError =>
  new MailboxError(
    'LEASE_EXPIRED',
    'Lease expired',
    `${identity}'s lease on task ${task.taskId} lapsed at ${leaseExpiresAt}, so the task went back to its audience and nothing was changed; ` +
      (task.assignee === null || task.assignee === identity
        ? 'claim it again (POST /v1/tasks/{id}/claim or claim_task), and keep the lease alive by updating the task or claiming again before it lapses.'
        : `it is now held by ${task.assignee}.`),
    { taskId: task.taskId, leaseExpiresAt, state: task.state, assignee: task.assignee === identity ? null : task.assignee },
  );

export function invalidTransition(
  task: Task,
  identity: string,
  relations: readonly Relation[],
  requested: TaskStateName | 'claim',
  allowed: readonly TaskStateName[],
): MailboxError {
  const who = relations.join(' and ');
  const hint = nextStep(task, relations, allowed);
  const what = requested === 'claim' ? 'claim it' : `move it to ${requested}`;
  if (task.ending !== null) return finishedRefusal(task, task.ending, identity, who, what, requested);
  return new MailboxError(
    'INVALID_TRANSITION',
    'Invalid transition',
    `Task ${task.taskId} is ${task.state}; ${identity} (${who}) cannot ${what}. ` +
      (allowed.length
        ? `From ${task.state} you may move it to: ${allowed.join(', ')}.`
        : `From ${task.state} you may make no transition.`) +
      hint +
      (requested === 'claim' ? '' : pathVia(task, relations, requested, allowed)) +
      (requested === 'Submitted' ? noReleaseOfDirect(task, identity, relations) : '') +
      (requested === 'Rejected' ? noDeclineForAudience(task, identity, relations) : '') +
      (requested === task.state ? sayInThread(task, identity) : ''),
    { taskId: task.taskId, currentState: task.state, requested, allowed: [...allowed] },
  );
}

/**
 * The holder of a direct task giving it back (found as a model: update_task's description offers Submitted "to give
 * back a task you claimed", and the holder of a task sent to it alone was told only its other moves): a release returns
 * an AGENT:* or list task to its audience; a direct task has none, so the way to give it up is named.
 */
function noReleaseOfDirect(task: Task, identity: string, relations: readonly Relation[]): string {
  if (task.openToAudience || !relations.includes('assignee')) return '';
  const giveUp =
    task.state === 'Submitted'
      ? 'decline it (Rejected, with a reason)'
      : task.state === 'Working'
        ? 'fail it (Failed, with a reason)'
        : '';
  if (giveUp === '') return '';
  return (
    ` It was sent to ${identity} alone, so it has no audience to go back to and cannot be released (a move to ` +
    `Submitted gives back an AGENT:* or list task); to give it up, ${giveUp}, and its sender ${task.sender} may send ` +
    'the work to someone else.'
  );
}

/**
 * The claimant of an AGENT:* or list task declining it (Rejected): a decline ended the task for its whole audience, one
 * member speaking for all, though another might have taken it. It goes back to the audience instead (or fails, once
 * Working, when the work cannot be done); the way is named.
 */
function noDeclineForAudience(task: Task, identity: string, relations: readonly Relation[]): string {
  if (!task.openToAudience || !relations.includes('assignee')) return '';
  if (task.state !== 'Submitted' && task.state !== 'Working') return '';
  const fail = task.state === 'Working' ? '; or, if the work cannot be done by anyone, fail it (Failed, with a reason)' : '';
  return (
    ` ${identity} claimed it from its audience of ${task.audience.length}, and a decline would end it for all of them: ` +
    'only the recipient of a task sent to it alone declines. To give it up, release it to the audience (a move to ' +
    `Submitted), so another member may claim it${fail}; to tell its sender ${task.sender} why, send a message in the ` +
    "task's thread."
  );
}

/**
 * A move to the state the task is in (found as a model: a holder reporting progress with
 * {"to": "Working", "note": "50% done"} on a Working task was told only the moves it may make): a task records no
 * progress notes; what the caller has to say goes to the other party as a message in the task's thread.
 */
function sayInThread(task: Task, identity: string): string {
  const other = identity === task.sender ? task.assignee : identity === task.assignee ? task.sender : null;
  if (other === null) return '';
  return (
    ` It is ${task.state} already, and a task keeps no progress notes: to tell ${other} something about it, send a ` +
    `message in its thread: add_message {"to": "${other}", "inReplyTo": "${task.taskId}", "subject": "...", "body": "..."}.`
  );
}

/**
 * A claim or a move on a finished task: how it ended (its state, who ended it, when, the reason given) and that it is
 * final, so the caller neither retries nor waits for a change that cannot come. Only parties get here (the sender, the
 * audience, auditors: who may read the task anyway); a stranger is refused before, knowing nothing of it.
 */
function finishedRefusal(
  task: Task,
  ending: TaskEnding,
  identity: string,
  who: string,
  what: string,
  requested: TaskStateName | 'claim',
): MailboxError {
  const why = ending.reason === null ? '' : ` (reason: ${JSON.stringify(ending.reason)})`;
  const how: Record<TaskEnding['cause'], string> = {
    sent: `it was sent ${ending.state} by ${ending.by} at ${ending.at}, a record of finished work`,
    sender: `its sender ${ending.by} moved it to ${ending.state} at ${ending.at}${why}`,
    assignee: `its holder ${ending.by} moved it to ${ending.state} at ${ending.at}${why}`,
    expired: `the mailbox moved it to ${ending.state} at ${ending.at}: its deadline ${task.deadline} had passed`,
    senderRetired: `the mailbox moved it to ${ending.state} at ${ending.at}: its sender ${task.sender} was retired`,
  };
  const instead =
    identity === task.sender
      ? ' To have the work done again, send a new task.'
      : ' Its outcome is read with get_task (GET /v1/tasks/{id}).';
  return new MailboxError(
    'INVALID_TRANSITION',
    'Invalid transition',
    `Task ${task.taskId} is ${ending.state}, which is final: ${how[ending.cause]}. No claim or move is possible from ` +
      `${ending.state} (Completed, Failed, Canceled and Rejected are final), so ${identity} (${who}) cannot ${what}, and ` +
      `nothing was changed.${instead}`,
    {
      taskId: task.taskId,
      currentState: task.state,
      requested,
      allowed: [],
      endedBy: ending.by,
      endedAt: ending.at,
    },
  );
}

/**
 * The way to a state the caller may reach in two moves: a holder completing (or failing, or asking about) a Submitted
 * task was told only "you may move it to: Working, Rejected, Submitted", and had to guess that Completed comes after
 * Working. Names the step the table allows it from, when one of the caller's moves now leads there.
 */
function pathVia(
  task: Task,
  relations: readonly Relation[],
  requested: TaskStateName,
  allowed: readonly TaskStateName[],
): string {
  if (!relations.includes('assignee')) return '';
  // Never through Submitted: from Working that move is a release, after which the caller holds nothing.
  const leadsThere = (via: TaskStateName) =>
    via !== task.state &&
    via !== 'Submitted' &&
    TRANSITION_TABLE.some((rule) => rule.by === 'assignee' && rule.from === via && rule.to === requested);
  const step = allowed.find(leadsThere);
  return step === undefined ? '' : ` ${requested} comes after ${step}: move it to ${step} first, then to ${requested}.`;
}

/**
 * Whose move it is, when the caller has none: "you may make no transition" alone leaves an agent nothing to do, though
 * there is (claim it first; wait for a holder's release or lapse; wait for the sender's answer).
 */
function nextStep(task: Task, relations: readonly Relation[], allowed: readonly TaskStateName[]): string {
  if (relations.includes('audience') && task.assignee === null && task.state === 'Submitted')
    return ' Claim it first (POST /v1/tasks/{id}/claim or claim_task); the claimant then moves it.';
  if (allowed.length > 0 || isTerminal(task.state)) return '';
  if (relations.includes('audience') && task.assignee !== null) {
    const lease = task.leaseExpiresAt ? `, whose lease runs to ${task.leaseExpiresAt}` : '';
    return (
      ` It is held by ${task.assignee}${lease}; only its holder and its sender ${task.sender} move it. Should it go back ` +
      `to its audience (a release${lease ? ', or a lapsed lease' : ''}), it is in GET /v1/tasks?view=claimable again, ` +
      'you are woken (wake/task), and you may claim it.'
    );
  }
  if (relations.includes('assignee') && (task.state === 'InputRequired' || task.state === 'AuthRequired'))
    return (
      ` It waits on its sender ${task.sender}: their answer (a move to Working, or a message of theirs to you in the ` +
      "task's thread) moves it back to Working, and wakes you."
    );
  if (task.state === 'Unknown') return ` Only its sender ${task.sender} can move it (to Canceled).`;
  return '';
}

/**
 * The holder asks a retired sender for input or authorization: no answer can ever come (a retired agent sends nothing),
 * so the task would wait on it for good. Its retirement cancels its open tasks; this is the refusal until it has.
 */
export const senderRetiredAsked = (
  task: Task,
  identity: string,
  requested: TaskStateName,
  allowed: readonly TaskStateName[],
): MailboxError =>
  new MailboxError(
    'INVALID_TRANSITION',
    'Invalid transition',
    `Task ${task.taskId} is ${task.state}; ${identity} cannot move it to ${requested}: its sender ${task.sender} was retired, ` +
      'so no answer can ever come and the task would wait on nobody for good. Nothing was changed. ' +
      (allowed.length
        ? `From ${task.state} you may move it to: ${allowed.join(', ')} (finish it with what you have, or fail it with a reason).`
        : `From ${task.state} you may make no transition.`),
    { taskId: task.taskId, currentState: task.state, requested, allowed: [...allowed], sender: task.sender },
  );

/**
 * A claim's leaseSeconds that no lease could honor: a direct task (its recipient's from the send, with no audience to
 * go back to), or a task that waits on its sender (a lease runs only while the task waits on its holder).
 */
export const leaseNotApplicable = (task: Task): MailboxError =>
  new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    task.openToAudience
      ? `Task ${task.taskId} is ${task.state}: it waits on its sender, and a lease runs only while a task waits on its holder ` +
          '(Submitted, Working), so leaseSeconds cannot be applied now and nothing was changed; claim again with leaseSeconds ' +
          'once it is Working again (the answer that moves it back renews a lease you hold).'
      : `Task ${task.taskId} was sent directly to ${task.audience[0]}: it is theirs from the send, with no audience to go back ` +
          `to, so it takes no lease and nothing was changed; claim it without leaseSeconds${directNextStep(task)}`,
    { field: 'leaseSeconds', taskId: task.taskId, state: task.state },
  );

/**
 * What the holder of a direct task can do next, from its state: "accept it" only while it is Submitted (once Working
 * that move is refused, and while it waits on its sender the holder has no move at all).
 */
function directNextStep(task: Task): string {
  if (task.state === 'Submitted') return ', or accept it by moving it to Working.';
  if (task.state === 'Working') return '; it is Working, and stays theirs until they complete or fail it.';
  if (task.state === 'InputRequired' || task.state === 'AuthRequired')
    return `; it is ${task.state} and waits on its sender ${task.sender}, whose answer moves it back to Working.`;
  // Unknown (a finished task is refused before): only its sender moves it.
  return `; it is ${task.state}, which only its sender ${task.sender} can move (to Canceled).`;
}

/** A release (to Submitted) records who released it and from what state; a note or reason would be dropped. */
export const releaseTakesNoText = (field: 'note' | 'reason'): MailboxError =>
  new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `A release (to Submitted) records no ${field}: the task goes back to its audience as it was sent, and nothing was changed. ` +
      `Release it without "${field}"; to tell the sender why, send the sender a message in the task's thread.`,
    { field, to: 'Submitted' },
  );

/**
 * `add` says how to give the field where the caller is: "reason" in JSON (HTTP, MCP); the CLI says --reason <text>.
 * `instead`: the other text field, given in its place (a Rejected with only a note): said, since it is no stand-in.
 */
export const missingField = (
  field: 'reason' | 'note',
  to: TaskStateName,
  add = `add "${field}"`,
  instead?: 'reason' | 'note',
): MailboxError => {
  const other = instead === undefined ? '' : ` (the ${instead} given goes beside the ${field}, never in its place)`;
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    field === 'reason'
      ? `Moving a task to ${to} needs a reason (a sentence for the sender saying why); ${add}${other}.`
      : `Moving a task to ${to} needs a note (what you need from the sender); ${add}${other}.`,
    { field, to, ...(instead === undefined ? {} : { given: instead }) },
  );
};

/** `send` says how to give artifacts where the caller is (the CLI: with its flag, on a move to completed). */
export const artifactsOnlyOnCompletion = (to: TaskStateName, send = 'send them with "to": "Completed"'): MailboxError =>
  new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `Artifacts are the output of a finished task: ${send}, not with ${to}.`,
    { field: 'artifacts', to },
  );
