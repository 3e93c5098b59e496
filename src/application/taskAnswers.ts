/**
 * A message from a task's sender in the task's thread answers the task (issue 12, Deliver 3): when it is addressed
 * to (or includes) the task's holder, every task in the thread that the sender sent, that recipient holds, and that
 * is InputRequired or AuthRequired moves back to Working, as the sender's own transition on the task's own stream.
 *
 * - Candidates: the task the message replies to (read from its stream), and the sender's tasks that ask it for
 *   input now, from the views (the `asking` task list, kept by the read model's rules: a few per agent, however
 *   much it sent), in the message's thread and held by one of its recipients. The views only narrow the list; the
 *   move is decided on each task's stream by the task decider, which is authoritative.
 * - Retry-safe: the command id is derived from the message and the task, so a retried send (same message id) or
 *   a retried append writes each move once, and a task already answered decides nothing.
 * - A move that cannot be written never fails the send (the message is durable): the send says so instead
 *   (warning TASK_NOT_ANSWERED, per task).
 * - A message to someone else in the thread (not the holder) answers nothing; nor does one by anyone but the sender.
 * - The send says what it did to the sender's tasks (found as a model: a reply that answered a task, or one that did not
 *   because it went to another thread, answered a bare 201 either way): TASK_ANSWERED per task it moved; and
 *   TASK_AWAITS_INPUT per task still waiting on the sender that the message looked like an answer to (to its holder in
 *   another thread, or in its thread to someone else), naming the calls that answer it.
 */
import type { CommandMetadata, CommandWarning } from '../commands/command';
import type { MessageState } from '../commands/message';
import { messageIdSchema } from '../commands/messageIds';
import type { Actor } from '../commands/roles';
import { decideTransitionTask } from '../commands/tasks/decideTask';
import { taskAsOf, taskLogBefore, taskOf } from '../commands/tasks/taskState';
import { isMailboxError } from '../errors';
import { messageStream, taskStream } from '../events/streams';
import type { MessageSent, TaskState } from '../events/types';
import type { ProjectionStore } from '../projections/projectionStore';
import type { TaskView } from '../projections/readModel/taskView';
import type { TaskViewPage } from '../projections/readModel/taskViewsMemory';
import { taskTimesOf } from '../projections/readModel/taskView';
import { fallenDue, waitsOnHolderState, WAITS_ON_HOLDER_STATES, type TaskTimes } from '../events/taskTimes';
import type { CommandHandler } from './commandHandler';
import { messageModel, taskModel } from './streamModels';

const ASKING: ReadonlySet<TaskState> = new Set(['InputRequired', 'AuthRequired']);
/** Asking tasks read per page. */
const PAGE = 200;

export interface Answered {
  /** The log position of the last move written (null: none). */
  position: bigint | null;
  warnings: CommandWarning[];
}

/**
 * The tasks now asking `sender` for input, from the views: a handful, however much it ever sent (no scan of its outbox
 * or sent list). A send in a thread (inReplyTo or threadId) starts this read beside its append and awaits it after
 * (askingRead), so that it pays no round trip of its own. A send in a new thread does not read it: that was ~30 us of
 * the event loop per send on the SQLite views (about 7% of a send's), for a note only (it answers nothing), so a
 * message to a task's holder in a new thread is not told that the task still waits (a reply in another thread is).
 */
export async function askingTasks(projections: ProjectionStore, sender: string): Promise<TaskView[]> {
  const tasks: TaskView[] = [];
  let before: number | null = null;
  do {
    const page: TaskViewPage = await projections.listTasks(sender, { list: 'asking', limit: PAGE, before });
    tasks.push(...page.tasks);
    before = page.nextBefore;
  } while (before !== null);
  return tasks;
}

/** askingTasks started now, to be awaited by answerTasksInThread (a rejection not awaited yet is not unhandled). */
export function askingRead(projections: ProjectionStore, sender: string): Promise<TaskView[]> {
  const read = askingTasks(projections, sender);
  read.catch(() => undefined);
  return read;
}

export async function answerTasksInThread(
  deps: { handler: CommandHandler },
  actor: Actor,
  reply: MessageSent['data'],
  parent: MessageState | null,
  metadata: CommandMetadata,
  asking: Promise<TaskView[]> | null,
  replayed = false,
  threadTasks: readonly string[] = [],
): Promise<Answered> {
  const { candidates, waiting } = await candidatesFor(asking, actor, reply, parent);
  // A replay: the sender's tasks in the thread that no longer ask are candidates too, so that a move the first run
  // wrote (an answer by threadId alone) is read back below and said again (a task asking now was one already).
  for (const taskId of threadTasks) if (!candidates.has(taskId)) candidates.set(taskId, null);
  const answered: Answered = { position: null, warnings: [] };
  for (const [taskId, known] of candidates) {
    const commandId = `answer:${reply.messageId}:${taskId}`;
    const answer: CommandMetadata = { ...metadata, commandId, causationId: metadata.commandId };
    try {
      const message = known ?? (await deps.handler.load(messageStream(taskId), messageModel)).state;
      const seen: { asking: Asking | null; answers: boolean; holder: string | null } = {
        asking: null,
        answers: false,
        holder: null,
      };
      const { position, appended } = await deps.handler.handle(taskStream(taskId), taskModel, answer, (log) => {
        // As of the send: past its deadline the task is over (Canceled, expired), and the message is only a message.
        const task = message.sent ? taskOf(message.sent, log) : null;
        seen.asking = null;
        seen.holder = task?.assignee ?? null;
        if (!task || task.sender !== actor.identity || !ASKING.has(taskAsOf(task, answer.at).state)) return [];
        if (task.assignee === null) return [];
        // A retry writes nothing its first run would not have: a question asked after the message was first sent is
        // not answered by it (found: a retried send moved a task that asked after it, noting the old message as the answer).
        if (replayed && log.updatedAt !== null && log.updatedAt >= reply.sentAt) return [];
        const { subject, threadId } = message.sent!;
        seen.asking = { taskId, subject, threadId, state: task.state, assignee: task.assignee };
        seen.answers = reply.recipients.includes(task.assignee);
        if (!seen.answers) return []; // to someone else: only talk
        return decideTransitionTask(
          {
            type: 'TransitionTask',
            data: { taskId, to: 'Working', note: `reply ${reply.messageId}: ${reply.subject}` },
            metadata: answer,
          },
          { message, log },
        );
      });
      if (position !== null && (answered.position === null || position > answered.position)) answered.position = position;
      if (seen.asking && seen.answers && appended.length > 0) answered.warnings.push(taskAnswered(seen.asking));
      // A retried send returns the original result (DESIGN: idempotency), its TASK_ANSWERED too: the task no longer
      // asks, so the move its first run wrote is read back (only on a replay, of a task it replies to or in its thread).
      else if (replayed && !seen.asking && appended.length === 0 && message.sent && seen.holder !== null) {
        const earlier = await answerWritten(deps.handler, taskId, commandId);
        if (earlier)
          answered.warnings.push(taskAnswered({ ...message.sent, taskId, state: earlier.from, assignee: seen.holder }));
      }
      if (seen.asking && !seen.answers) waiting.unshift(seen.asking);
    } catch (error) {
      const why = isMailboxError(error) ? error.message : String(error);
      const text =
        `Your message was sent, but task ${taskId} could not be moved back to Working (${why}). ` +
        'Move it yourself: POST /v1/tasks/{id}/transition or update_task with {"to": "Working"}.';
      answered.warnings.push({ code: 'TASK_NOT_ANSWERED', taskId, message: text });
    }
  }
  answered.warnings.push(...waiting.slice(0, MAX_WAITING_SAID).map((task) => awaitsInput(task, reply)));
  return answered;
}

/**
 * The tasks `sender` sent in the thread of its replayed message `reply`, from the views (its outbox in that thread): a
 * replay's candidates (a task its first run answered by being in the thread no longer asks, so no other read finds it).
 * Read on a replay only, of a message in a named thread: a fresh send reads nothing more.
 */
export async function threadTasksSent(
  projections: ProjectionStore,
  sender: string,
  reply: MessageSent['data'],
): Promise<string[]> {
  if (reply.threadId === reply.messageId) return []; // a new thread holds no earlier task
  const taskIds: string[] = [];
  let before: bigint | null = null;
  do {
    const page = await projections.listMessages(sender, { box: 'outbox', threadId: reply.threadId, limit: PAGE, before });
    for (const { messageId } of page.messages) {
      if (messageId === reply.messageId) continue;
      const task = await projections.getTask(messageId);
      if (task && task.sender === sender) taskIds.push(messageId);
    }
    before = page.nextBefore;
  } while (before !== null);
  return taskIds;
}

/** The move `commandId` wrote on the task's stream (a replayed send's answer), or null. */
async function answerWritten(handler: CommandHandler, taskId: string, commandId: string) {
  for (const event of await handler.events(taskStream(taskId)))
    if (event.type === 'TaskStateChanged' && event.metadata.commandId === commandId) return event.data;
  return null;
}

/** At most this many TASK_AWAITS_INPUT notes on one send (an agent rarely has more tasks asking it). */
const MAX_WAITING_SAID = 10;

/** A task asking its sender, as the notes name it. */
type Asking = Pick<TaskView, 'taskId' | 'subject' | 'threadId' | 'state'> & { assignee: string };

function taskAnswered(task: Asking): CommandWarning {
  return {
    code: 'TASK_ANSWERED',
    taskId: task.taskId,
    state: 'Working',
    message:
      `Your message answered task ${task.taskId} (${JSON.stringify(task.subject)}): it was ${task.state}, waiting on ` +
      `you, and is Working again, with its holder ${task.assignee}; the task's history notes this message as your answer.`,
  };
}

/** A task still waiting on the sender after its message to the task's holder elsewhere, or in its thread to others. */
function awaitsInput(task: Asking, reply: MessageSent['data']): CommandWarning {
  const holder = task.assignee;
  const why =
    task.threadId === reply.threadId
      ? `this message, in its thread, is not to its holder ${holder}, so it did not answer it. To answer it, send to ` +
        `${holder} in this thread, or call`
      : `this message to ${holder} is in another thread (${reply.threadId}), so it did not answer it. To answer it, reply ` +
        `in the task's thread (inReplyTo "${task.taskId}", or threadId "${task.threadId}"), or call`;
  return {
    code: 'TASK_AWAITS_INPUT',
    taskId: task.taskId,
    state: task.state,
    assignee: holder,
    message:
      `Task ${task.taskId} (${JSON.stringify(task.subject)}) still waits on your input (${task.state}, held by ` +
      `${holder}): ${why} update_task {"taskId": "${task.taskId}", "to": "Working", "note": "<your answer>"} ` +
      `(HTTP: POST /v1/tasks/${task.taskId}/transition with {"to": "Working", "note": "..."}).`,
  };
}

interface Candidates {
  /** Task id -> its message's state when already read (the parent), else null (read when deciding). */
  candidates: Map<string, MessageState | null>;
  /** Tasks asking the sender that this message does not answer, though it reads like an answer to them (see above). */
  waiting: Asking[];
}

async function candidatesFor(
  asking: Promise<TaskView[]> | null,
  actor: Actor,
  reply: MessageSent['data'],
  parent: MessageState | null,
): Promise<Candidates> {
  const candidates = new Map<string, MessageState | null>();
  const waiting: Asking[] = [];
  const asked = parent?.sent;
  if (parent && asked?.task && asked.from === actor.identity) candidates.set(asked.messageId, parent);
  // A new thread holds no earlier task and is not read for (see askingRead): its send reads nothing more.
  if (asking === null || reply.threadId === reply.messageId) return { candidates, waiting };
  const tasks = await asking;
  for (const task of tasks) {
    if (task.taskId === reply.messageId || candidates.has(task.taskId) || task.assignee === null) continue;
    const toHolder = reply.recipients.includes(task.assignee);
    // A new thread holds no earlier task: only a message in the task's thread, to its holder, answers it.
    if (task.threadId === reply.threadId && reply.threadId !== reply.messageId && toHolder) candidates.set(task.taskId, null);
    else if (task.threadId === reply.threadId || toHolder) waiting.push({ ...task, assignee: task.assignee });
  }
  return { candidates, waiting };
}

/**
 * The tasks `actor` holds, open and waiting on it, in whose thread its message `reply` went to the task's sender: a
 * message never moves a task its holder holds (found as a model: "done: PR 12" sent in the thread, by threadId or
 * inReplyTo, was a bare 201; the task stayed Working and its sender read a message with "task": null). Said per task
 * (TASK_UNCHANGED), with the calls that move it. Read for a send in a thread only: the task its inReplyTo carries, the
 * task whose own thread this is (a task's message starts its thread unless it named one), and the tasks it holds in a
 * thread its sender named (threadId "deploy-7", or another message's id: found as a model, "done" sent there was a bare
 * 201), from its held tasks (heldTasksInThread).
 *
 * `replay` (a retried send: its handler and the log position of its MessageSent): the notes are its first run's (DESIGN
 * §3, a retry returns the original result), so each task is read as of the send, its stream folded up to that position,
 * not as the views hold it now (found: a retry after the holder completed the task answered without its note).
 */
export async function holderNotes(
  projections: ProjectionStore,
  actor: Actor,
  reply: MessageSent['data'],
  parent: MessageState | null,
  replay: { handler: CommandHandler; position: bigint } | null = null,
): Promise<CommandWarning[]> {
  const taskIds = new Set<string>();
  if (parent?.sent?.task) taskIds.add(parent.sent.messageId);
  const known = new Map<string, TaskView>();
  if (reply.threadId !== reply.messageId) {
    // A thread named otherwise (deploy-7) is no task's id: not looked up as one.
    if (messageIdSchema.safeParse(reply.threadId).success) taskIds.add(reply.threadId);
    const held = replay
      ? await assignedInThreadBefore(projections, actor.identity, reply.threadId, replay.position)
      : await heldTasksInThread(projections, actor.identity, reply.threadId);
    for (const task of held) {
      taskIds.add(task.taskId);
      known.set(task.taskId, task);
    }
  }
  const notes: CommandWarning[] = [];
  for (const taskId of taskIds) {
    const task = replay ? await heldAsOf(replay.handler, taskId, replay.position) : await heldNow(projections, known, taskId);
    if (task === undefined || task.assignee !== actor.identity || task.sender === actor.identity) continue;
    if (!waitsOnHolderState(task.state) || !reply.recipients.includes(task.sender)) continue;
    if (fallenDue(task, Date.parse(reply.sentAt)) !== null) continue; // past its deadline or lease: not held
    notes.push({
      code: 'TASK_UNCHANGED',
      taskId,
      state: task.state,
      sender: task.sender,
      message:
        `Your message to ${task.sender} did not change task ${taskId} (${JSON.stringify(task.subject)}), which you hold: ` +
        `it is still ${task.state}, and a message never moves it. To finish it, call update_task {"taskId": "${taskId}", ` +
        `"to": "Completed"} (or "Failed", "Rejected" with a "reason"); to ask ${task.sender}, {"to": "InputRequired", ` +
        `"note": "<your question>"} (HTTP: POST /v1/tasks/${taskId}/transition).`,
    });
  }
  return notes;
}

/** A task as a holder's note reads it. */
type Held = TaskTimes & Pick<TaskView, 'taskId' | 'sender' | 'subject'>;

/** The task as the views hold it now (a send just decided). */
async function heldNow(projections: ProjectionStore, known: Map<string, TaskView>, taskId: string): Promise<Held | undefined> {
  const task = known.get(taskId) ?? (await projections.getTask(taskId));
  return task && { ...taskTimesOf(task), taskId, sender: task.sender, subject: task.subject };
}

/** The task as it stood at log position `position` (a replayed send's): its stream folded up to there. */
async function heldAsOf(handler: CommandHandler, taskId: string, position: bigint): Promise<Held | undefined> {
  const sent = (await handler.load(messageStream(taskId), messageModel)).state.sent;
  if (!sent?.task) return undefined;
  const task = taskOf(sent, taskLogBefore(await handler.events(taskStream(taskId)), position));
  return task ? { ...task, subject: sent.subject } : undefined;
}

/**
 * A replay's held tasks in `threadId`: every task assigned to `holder` opened before the replayed message (at
 * `position`), in any state (one it finished since waits no more, so heldTasksInThread no longer finds it). Read on a
 * replay only; the fold (heldAsOf) says which waited on it then.
 */
async function assignedInThreadBefore(
  projections: ProjectionStore,
  holder: string,
  threadId: string,
  position: bigint,
): Promise<TaskView[]> {
  const found: TaskView[] = [];
  let before: number | null = Number(position);
  while (before !== null) {
    const page: TaskViewPage = await projections.listTasks(holder, { list: 'assigned', limit: PAGE, before });
    found.push(...page.tasks.filter((task) => task.threadId === threadId));
    before = page.nextBefore;
  }
  return found;
}

/**
 * The tasks `holder` holds that wait on it (Submitted, Working) in thread `threadId`, from the views: none read past
 * its heartbeat's tasksWaiting (one read of its counts; 0, the usual case, reads no list), which counts every such task,
 * so the walk of its assigned list stops once it has passed that many.
 */
async function heldTasksInThread(projections: ProjectionStore, holder: string, threadId: string): Promise<TaskView[]> {
  let left = (await projections.heartbeat(holder)).tasksWaiting;
  const found: TaskView[] = [];
  let before: number | null = null;
  while (left > 0) {
    const page: TaskViewPage = await projections.listTasks(holder, {
      list: 'assigned',
      states: [...WAITS_ON_HOLDER_STATES],
      limit: PAGE,
      before,
    });
    for (const task of page.tasks) {
      left--;
      if (task.threadId === threadId) found.push(task);
    }
    if (page.nextBefore === null) break;
    before = page.nextBefore;
  }
  return found;
}
