/**
 * Which task changes wake whom (issue 12): the other party, after the view
 * change. The sender on a claim and when the task asks for input or ends
 * (InputRequired, AuthRequired, Completed, Failed, Rejected); the assignee on
 * a cancel and when its question was answered (back to Working from
 * InputRequired/AuthRequired); an expiry wakes both. A task back with its
 * audience (a release, a retired holder's release, a lapsed lease) wakes every
 * audience member who may claim it now, so that an agent waiting on wakes
 * learns it is claimable again: the holder that released it is not woken, a
 * lapsed claimant is (its lease is gone; it may claim again). Its sender too:
 * its last wake said who claimed the task, and that holder has it no more. A
 * lapse that an audience member's claim recorded wakes the lapsed claimant
 * alone (the task is the claimant's at once; the claim wakes the sender).
 * Never the actor itself.
 */
import type { TaskEvent } from '../../events/types';
import type { TaskFact, TaskWakeEvent } from '../viewChanges';
import { membersOf } from './taskRules';
import type { TaskView, TaskViewLookup } from './taskView';

const TO_SENDER = new Set(['InputRequired', 'AuthRequired', 'Completed', 'Failed', 'Rejected']);

/**
 * A lapse or a retired holder's release recorded by an audience member's claim (the decider writes it just before the
 * claim, in the same append): the task is that member's at once, so nobody else may claim it.
 */
const recordedByClaim = (event: TaskEvent & { data: { claimant: string } }, task: TaskView, actor: string): boolean =>
  actor !== event.data.claimant && task.audience.includes(actor);

function partiesToWake(event: TaskEvent, task: TaskView, actor: string): readonly string[] {
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
    case 'TaskReleased':
      if (recordedByClaim(event, task, actor)) return [];
      return [task.sender, ...membersOf(task, 'claimable').filter((identity) => identity !== event.data.claimant)];
    case 'TaskLeaseExpired':
      return recordedByClaim(event, task, actor) ? [event.data.claimant] : [task.sender, ...membersOf(task, 'claimable')];
    default:
      return [];
  }
}

/** The wakes a task fact makes due, read from the views once its changes are applied. */
export function taskWakesFor(fact: TaskFact, position: bigint, view: TaskViewLookup): TaskWakeEvent[] {
  if (fact.kind !== 'taskChanged') return [];
  const task = view.task(fact.event.data.taskId);
  if (task === undefined || task.updatedPosition !== Number(position)) return [];
  const recipients = [...new Set(partiesToWake(fact.event, task, fact.actor))].filter((identity) => identity !== fact.actor);
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
