/**
 * Which task changes wake whom (issue 12): the other party, after the view
 * change. The sender on a claim and when the task asks for input or ends
 * (InputRequired, AuthRequired, Completed, Failed, Rejected); the assignee on
 * a cancel and when its question was answered (back to Working from
 * InputRequired/AuthRequired); an expiry wakes both. Never the actor itself.
 */
import type { TaskEvent } from '../../events/types';
import type { TaskFact, TaskWakeEvent } from '../viewChanges';
import type { TaskView, TaskViewLookup } from './taskView';

const TO_SENDER = new Set(['InputRequired', 'AuthRequired', 'Completed', 'Failed', 'Rejected']);

function partiesToWake(event: TaskEvent, task: TaskView): string[] {
  switch (event.type) {
    case 'TaskClaimed':
      return [task.sender];
    case 'TaskStateChanged': {
      const { from, to } = event.data;
      if (TO_SENDER.has(to)) return [task.sender];
      if (to === 'Canceled') return task.assignee === null ? [] : [task.assignee];
      if (to === 'Working' && (from === 'InputRequired' || from === 'AuthRequired'))
        return task.assignee === null ? [] : [task.assignee];
      return [];
    }
    case 'TaskExpired':
      return task.assignee === null ? [task.sender] : [task.sender, task.assignee];
    default:
      return [];
  }
}

/** The wakes a task fact makes due, read from the views once its changes are applied. */
export function taskWakesFor(fact: TaskFact, position: bigint, view: TaskViewLookup): TaskWakeEvent[] {
  if (fact.kind !== 'taskChanged') return [];
  const task = view.task(fact.event.data.taskId);
  if (task === undefined || task.updatedPosition !== Number(position)) return [];
  const recipients = [...new Set(partiesToWake(fact.event, task))].filter((identity) => identity !== fact.actor);
  return recipients.map((recipient) => ({
    type: 'wake/task',
    taskId: task.taskId,
    messageId: task.taskId,
    recipient,
    by: fact.actor,
    event: fact.event.type,
    state: task.state,
    assignee: task.assignee,
    subject: task.subject,
    priority: task.priority,
    position: position.toString(),
  }));
}
