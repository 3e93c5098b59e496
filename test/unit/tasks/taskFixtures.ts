/** Building blocks for the task decider specs: one history of message and task events folded into the decider's context. */
import { foldMessage, initialMessageState } from '../../../src/commands/message';
import type { TaskContext } from '../../../src/commands/tasks/decideTask';
import { foldTask, initialTaskLog } from '../../../src/commands/tasks/taskState';
import type { MessageEvent, TaskEnvelope, TaskEvent, TaskState } from '../../../src/events/types';
import { broadcastSent, directSent, PARENT_ID, T0 } from '../fixtures/domain';

export const TASK_ID = PARENT_ID;
export type History = Array<MessageEvent | TaskEvent>;

export const initialContext = (): TaskContext => ({ message: initialMessageState(), log: initialTaskLog() });

export function foldContext(context: TaskContext, events: readonly (MessageEvent | TaskEvent)[]): TaskContext {
  let { message, log } = context;
  for (const event of events) {
    if (event.type.startsWith('Task')) log = foldTask(log, [event as TaskEvent]);
    else message = foldMessage(message, [event as MessageEvent]);
  }
  return { message, log };
}

export function broadcastTask(from: string, audience: string[], task: TaskEnvelope = { state: 'Submitted' }): History {
  const [sent, ...delivered] = broadcastSent(from, audience);
  return [{ ...sent, data: { ...sent.data, task, hasTask: true } }, ...delivered];
}

export const directTask = (from: string, to: string, task: TaskEnvelope = { state: 'Submitted' }): History => [
  directSent(from, to, { task, hasTask: true }),
];

export const claimed = (claimant: string, at = T0, leaseExpiresAt: string | null = null): TaskEvent => ({
  type: 'TaskClaimed',
  data: { taskId: TASK_ID, claimant, claimedAt: at, leaseExpiresAt },
});

export const changed = (from: TaskState, to: TaskState, at = T0): TaskEvent => ({
  type: 'TaskStateChanged',
  data: { taskId: TASK_ID, from, to, reason: null, note: null, changedAt: at },
});
