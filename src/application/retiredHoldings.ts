/**
 * Retiring an agent returns the broadcast tasks it holds to their audiences (TaskReleased naming it, as its own
 * release would), since a retired agent can never release or finish them; and cancels the tasks it sent that have not
 * ended (TaskStateChanged to Canceled, reason "sender retired"), since it can never answer their questions, cancel them
 * or take their outcome (cancelRetiredSenderTasks, below, the same way).
 *
 * - Candidates: the agent's `assigned` task list in the views, open states only (kept by the read model's rules; a
 *   few per agent), read once the views show the retirement, so every claim logged before it is in the list. The
 *   views only narrow the list; each release is decided on the task's own stream by the task decider, given the
 *   registry, which is authoritative (a direct, finished or meanwhile re-claimed task decides nothing).
 * - Retry-safe: the command id is derived from the retirement (identity and retiredAt) and the task, so a retried
 *   retirement (idempotent: it writes no second AgentRetired) writes each release once and finishes what a crash
 *   left undone. Until then an audience member's claim takes such a task anyway (decideClaimTask).
 * - A release that cannot be written never fails the retirement (it is durable): the answer says so instead
 *   (warning TASK_NOT_RELEASED, per task).
 */
import type { RegistryState } from '../commands/agentRegistry';
import type { CommandMetadata, CommandWarning } from '../commands/command';
import { decideCancelRetiredSenderTask, decideReleaseRetiredHolder } from '../commands/tasks/decideTask';
import { isMailboxError } from '../errors';
import { messageStream, taskStream } from '../events/streams';
import type { TaskState } from '../events/types';
import type { ProjectionStore } from '../projections/projectionStore';
import { openToAudience } from '../projections/readModel/taskView';
import type { CommandHandler } from './commandHandler';
import { messageModel, taskModel } from './streamModels';

/** The states in which a holder still owes the task something (a finished task stays as it ended). */
const HELD: readonly TaskState[] = ['Submitted', 'Working', 'InputRequired', 'AuthRequired'];
/** The states in which a task has not ended (its sender may still cancel it). */
const OPEN: readonly TaskState[] = [...HELD, 'Unknown'];
/** Assigned tasks read per page. */
const PAGE = 200;

export interface Released {
  /** The tasks returned to their audiences now. */
  taskIds: string[];
  /** The log position of the last release written (null: none). */
  position: bigint | null;
  warnings: CommandWarning[];
}

export async function releaseRetiredHoldings(
  deps: { handler: CommandHandler; projections: ProjectionStore },
  holder: string,
  registry: RegistryState,
  metadata: CommandMetadata,
): Promise<Released> {
  const released: Released = { taskIds: [], position: null, warnings: [] };
  const retiredAt = registry.agents.get(holder)?.retiredAt;
  if (!retiredAt) return released;
  for (const taskId of await heldBroadcasts(deps.projections, holder)) {
    const commandId = `retire:${holder}:${retiredAt}:${taskId}`;
    const release: CommandMetadata = { ...metadata, commandId, causationId: metadata.commandId };
    try {
      const { state: message } = await deps.handler.load(messageStream(taskId), messageModel);
      const { position } = await deps.handler.handle(taskStream(taskId), taskModel, release, (log) =>
        decideReleaseRetiredHolder(
          { type: 'ReleaseRetiredHolder', data: { taskId, holder }, metadata: release },
          { message, log, registry },
        ),
      );
      if (position === null) continue; // released already (a retried retirement), or claimed anew since
      released.taskIds.push(taskId);
      if (released.position === null || position > released.position) released.position = position;
    } catch (error) {
      const why = isMailboxError(error) ? error.message : String(error);
      const text =
        `${holder} is retired, but task ${taskId} it held could not be returned to its audience (${why}). ` +
        `Retire ${holder} again to retry (it writes each release once); meanwhile any audience member's claim takes the task.`;
      released.warnings.push({ code: 'TASK_NOT_RELEASED', taskId, message: text });
    }
  }
  return released;
}

export interface Canceled {
  /** The tasks it sent that this retirement canceled now. */
  taskIds: string[];
  /** The log position of the last cancel written (null: none). */
  position: bigint | null;
  warnings: CommandWarning[];
}

/**
 * Cancels every task `sender` sent that has not ended, whoever holds it (a direct, list or broadcast task, unclaimed or
 * waiting on its answer), as its own cancel would: a TaskStateChanged to Canceled, reason "sender retired", the
 * retiring admin its actor. Found in the views (the sender's `sent` list, open states only, read once the views show
 * the retirement: every task it sent is there), each decided on the task's own stream (decideCancelRetiredSenderTask:
 * a task finished or canceled by then decides nothing). Command id `retire-sender:<identity>:<retiredAt>:<taskId>`:
 * a retried retirement writes each cancel once and those a crash left undone. A cancel that cannot be written never
 * fails the retirement: warning TASK_NOT_CANCELED names the task.
 */
export async function cancelRetiredSenderTasks(
  deps: { handler: CommandHandler; projections: ProjectionStore },
  sender: string,
  registry: RegistryState,
  metadata: CommandMetadata,
): Promise<Canceled> {
  const canceled: Canceled = { taskIds: [], position: null, warnings: [] };
  const retiredAt = registry.agents.get(sender)?.retiredAt;
  if (!retiredAt) return canceled;
  for (const taskId of await openTasksSent(deps.projections, sender)) {
    const commandId = `retire-sender:${sender}:${retiredAt}:${taskId}`;
    const cancel: CommandMetadata = { ...metadata, commandId, causationId: metadata.commandId };
    try {
      const { state: message } = await deps.handler.load(messageStream(taskId), messageModel);
      const { position } = await deps.handler.handle(taskStream(taskId), taskModel, cancel, (log) =>
        decideCancelRetiredSenderTask(
          { type: 'CancelRetiredSenderTask', data: { taskId, sender }, metadata: cancel },
          { message, log, registry },
        ),
      );
      if (position === null) continue; // canceled already (a retried retirement), or finished since
      canceled.taskIds.push(taskId);
      if (canceled.position === null || position > canceled.position) canceled.position = position;
    } catch (error) {
      const why = isMailboxError(error) ? error.message : String(error);
      const text =
        `${sender} is retired, but task ${taskId} it sent could not be canceled (${why}). ` +
        `Retire ${sender} again to retry (it writes each cancel once); meanwhile its holder cannot ask ${sender} for input.`;
      canceled.warnings.push({ code: 'TASK_NOT_CANCELED', taskId, message: text });
    }
  }
  return canceled;
}

/** The tasks the views say `sender` sent and that have not ended, all pages read before any is canceled. */
async function openTasksSent(projections: ProjectionStore, sender: string): Promise<string[]> {
  const taskIds: string[] = [];
  let before: number | null = null;
  do {
    const page = await projections.listTasks(sender, { list: 'sent', states: OPEN, limit: PAGE, before });
    for (const task of page.tasks) taskIds.push(task.taskId);
    before = page.nextBefore;
  } while (before !== null);
  return taskIds;
}

/** The broadcast's and list's tasks the views say `holder` holds and has not finished, all pages read before any is released. */
async function heldBroadcasts(projections: ProjectionStore, holder: string): Promise<string[]> {
  const taskIds: string[] = [];
  let before: number | null = null;
  do {
    const page = await projections.listTasks(holder, { list: 'assigned', states: HELD, limit: PAGE, before });
    for (const task of page.tasks) if (openToAudience(task)) taskIds.push(task.taskId);
    before = page.nextBefore;
  } while (before !== null);
  return taskIds;
}
