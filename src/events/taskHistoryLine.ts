/**
 * Which task events make a line in the task's history (A2A get_task history[], status.message): those that change its
 * state or its holder. The line's messageId is the event's id; the views keep which task each such id belongs to, so
 * that an id of a history line passed as a message's or a task's is named as that task's line on every event store
 * (EventStoreDB finds no event by its id). taskA2a.ts writes the lines' text; its unit test holds the two alike.
 */
import type { TaskEvent } from './types';

const HISTORY_LINE_EVENTS: ReadonlySet<TaskEvent['type']> = new Set<TaskEvent['type']>([
  'TaskClaimed',
  'TaskStateChanged',
  'TaskExpired',
  'TaskReleased',
  'TaskLeaseExpired',
]);

export const makesHistoryLine = (type: TaskEvent['type']): boolean => HISTORY_LINE_EVENTS.has(type);
