/**
 * A task's history entry (A2A: get_task's history[].messageId, status.message.messageId) is named by its event's id,
 * not by a message's. Passed to get_message or get_task, such an id is refused; the refusal names the entry's task when
 * the caller may read that task, found by the event's id in the log (found as a model: an agent that kept only the id of
 * the answer that moved a task could not find the task again: the refusal said "<the entry's taskId>"). A log that
 * finds no event by its id (EventStoreDB) leaves it to the views, which keep the task of each history line's id
 * (ProjectionStore.taskOfHistoryLine): the same answer once the views have the line.
 */
import { isPartyTo } from '../commands/receipts';
import type { Actor } from '../commands/roles';
import type { EventStore } from '../events/eventStore';
import type { ProjectionStore } from '../projections/projectionStore';
import { messageStream, TASK_STREAM_PREFIX } from '../events/streams';
import { messageModel } from './streamModels';
import type { StreamLoader } from './streamLoader';

/**
 * The task whose history holds the event `eventId`, when `actor` may read that task (its sender, its audience, an
 * auditor or admin); else null, and the caller answers as for any id (no existence oracle). The views are asked only
 * when the log has no answer, and views that cannot answer (lost, being rebuilt) leave the answer the generic one: this
 * is a hint on a refusal, not worth refusing the refusal for.
 */
export async function historyEntryTask(
  store: Pick<EventStore, 'streamOfEvent'>,
  views: Pick<ProjectionStore, 'taskOfHistoryLine'>,
  messages: Pick<StreamLoader, 'load'>,
  actor: Actor,
  eventId: string,
): Promise<string | null> {
  const stream = (await store.streamOfEvent?.(eventId)) ?? null;
  const taskId =
    stream === null
      ? await taskOfLineInViews(views, eventId)
      : stream.startsWith(TASK_STREAM_PREFIX)
        ? stream.slice(TASK_STREAM_PREFIX.length)
        : null;
  if (taskId === null) return null;
  if (actor.role !== 'agent') return taskId;
  const { state } = await messages.load(messageStream(taskId), messageModel);
  return isPartyTo(state, actor.identity) ? taskId : null;
}

async function taskOfLineInViews(views: Pick<ProjectionStore, 'taskOfHistoryLine'>, eventId: string): Promise<string | null> {
  try {
    return await views.taskOfHistoryLine(eventId);
  } catch {
    return null; // views lost or being rebuilt: the refusal stays the generic one
  }
}
