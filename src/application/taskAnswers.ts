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
 */
import type { CommandMetadata, CommandWarning } from '../commands/command';
import type { MessageState } from '../commands/message';
import type { Actor } from '../commands/roles';
import { decideTransitionTask } from '../commands/tasks/decideTask';
import { taskAsOf, taskOf } from '../commands/tasks/taskState';
import { isMailboxError } from '../errors';
import { messageStream, taskStream } from '../events/streams';
import type { MessageSent, TaskState } from '../events/types';
import type { ProjectionStore } from '../projections/projectionStore';
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

export async function answerTasksInThread(
  deps: { handler: CommandHandler; projections: ProjectionStore },
  actor: Actor,
  reply: MessageSent['data'],
  parent: MessageState | null,
  metadata: CommandMetadata,
): Promise<Answered> {
  const candidates = await candidatesFor(deps, actor, reply, parent);
  const answered: Answered = { position: null, warnings: [] };
  for (const [taskId, known] of candidates) {
    const commandId = `answer:${reply.messageId}:${taskId}`;
    const answer: CommandMetadata = { ...metadata, commandId, causationId: metadata.commandId };
    try {
      const message = known ?? (await deps.handler.load(messageStream(taskId), messageModel)).state;
      const { position } = await deps.handler.handle(taskStream(taskId), taskModel, answer, (log) => {
        // As of the send: past its deadline the task is over (Canceled, expired), and the message is only a message.
        const task = message.sent ? taskOf(message.sent, log) : null;
        if (!task || task.sender !== actor.identity || !ASKING.has(taskAsOf(task, answer.at).state)) return [];
        if (task.assignee === null || !reply.recipients.includes(task.assignee)) return []; // to someone else: only talk
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
    } catch (error) {
      const why = isMailboxError(error) ? error.message : String(error);
      const text =
        `Your message was sent, but task ${taskId} could not be moved back to Working (${why}). ` +
        'Move it yourself: POST /v1/tasks/{id}/transition or update_task with {"to": "Working"}.';
      answered.warnings.push({ code: 'TASK_NOT_ANSWERED', taskId, message: text });
    }
  }
  return answered;
}

/** Task id -> its message's state when already read (the parent), else null (read when deciding). */
async function candidatesFor(
  { projections }: { projections: ProjectionStore },
  actor: Actor,
  reply: MessageSent['data'],
  parent: MessageState | null,
): Promise<Map<string, MessageState | null>> {
  const candidates = new Map<string, MessageState | null>();
  const asked = parent?.sent;
  if (parent && asked?.task && asked.from === actor.identity) candidates.set(asked.messageId, parent);
  if (reply.threadId === reply.messageId) return candidates; // a new thread holds no earlier task
  // Only the tasks now asking the sender: a handful, however much it ever sent (no scan of its outbox or sent list).
  let before: number | null = null;
  do {
    const page = await projections.listTasks(actor.identity, { list: 'asking', limit: PAGE, before });
    for (const task of page.tasks) {
      if (task.threadId !== reply.threadId || task.taskId === reply.messageId) continue;
      if (task.assignee !== null && reply.recipients.includes(task.assignee) && !candidates.has(task.taskId))
        candidates.set(task.taskId, null);
    }
    before = page.nextBefore;
  } while (before !== null);
  return candidates;
}
