/**
 * A task's history entry (A2A: get_task's history[].messageId, status.message.messageId) is named by its event's id,
 * not by a message's. Passed to get_message or get_task, such an id is refused; the refusal names the entry's task when
 * the caller may read that task, found by the event's id in the log (found as a model: an agent that kept only the id of
 * the answer that moved a task could not find the task again: the refusal said "<the entry's taskId>").
 */
import { isPartyTo } from '../commands/receipts';
import type { Actor } from '../commands/roles';
import type { EventStore } from '../events/eventStore';
import { messageStream, TASK_STREAM_PREFIX } from '../events/streams';
import { messageModel } from './streamModels';
import type { StreamLoader } from './streamLoader';

/**
 * The task whose history holds the event `eventId`, when `actor` may read that task (its sender, its audience, an
 * auditor or admin); else null, and the caller answers as for any id (no existence oracle). Null too on a store that
 * cannot look an event up by its id (EventStoreDB: the answer stays the generic one).
 */
export async function historyEntryTask(
  store: Pick<EventStore, 'streamOfEvent'>,
  messages: Pick<StreamLoader, 'load'>,
  actor: Actor,
  eventId: string,
): Promise<string | null> {
  const stream = (await store.streamOfEvent?.(eventId)) ?? null;
  if (stream === null || !stream.startsWith(TASK_STREAM_PREFIX)) return null;
  const taskId = stream.slice(TASK_STREAM_PREFIX.length);
  if (actor.role !== 'agent') return taskId;
  const { state } = await messages.load(messageStream(taskId), messageModel);
  return isPartyTo(state, actor.identity) ? taskId : null;
}
