/**
 * Transition authority (issue 12), as one table: who may move a task from
 * which state to which. Anything not in it is INVALID_TRANSITION. The
 * assignee works the task; the sender cancels it and answers its questions;
 * everyone else (other audience members, outsiders, auditors) moves nothing.
 */
import type { Role } from '../../events/types';
import { isTerminal, type Task, type TaskStateName } from './taskState';

/** How the caller stands to the task. One caller may be several (a message to oneself). */
export type Relation = 'assignee' | 'sender' | 'audience' | 'outsider' | 'auditor';

/** What a transition must carry. */
export type Requirement = 'reason' | 'note';

interface Rule {
  from: TaskStateName | 'any non-terminal';
  by: 'assignee' | 'sender' | 'broadcast assignee' | 'direct assignee';
  to: TaskStateName;
  requires?: Requirement;
  /** What the move means, for error messages and docs. */
  means: string;
}

export const TRANSITION_TABLE: readonly Rule[] = [
  { from: 'Submitted', by: 'assignee', to: 'Working', means: 'accept' },
  { from: 'Submitted', by: 'direct assignee', to: 'Rejected', requires: 'reason', means: 'decline' },
  { from: 'Working', by: 'assignee', to: 'InputRequired', requires: 'note', means: 'ask the sender for input' },
  { from: 'Working', by: 'assignee', to: 'AuthRequired', requires: 'note', means: 'ask the sender for authorization' },
  { from: 'Working', by: 'assignee', to: 'Completed', means: 'finish, with artifacts' },
  { from: 'Working', by: 'assignee', to: 'Failed', requires: 'reason', means: 'give up' },
  { from: 'Submitted', by: 'broadcast assignee', to: 'Submitted', means: 'release the claim to the audience' },
  { from: 'Working', by: 'broadcast assignee', to: 'Submitted', means: 'release the claim to the audience' },
  { from: 'InputRequired', by: 'sender', to: 'Working', means: 'provide the input asked for' },
  { from: 'AuthRequired', by: 'sender', to: 'Working', means: 'provide the authorization asked for' },
  { from: 'any non-terminal', by: 'sender', to: 'Canceled', means: 'cancel' },
];

export function relationsOf(task: Task, caller: { identity: string; role: Role }): Relation[] {
  if (caller.role === 'auditor') return ['auditor'];
  const relations: Relation[] = [];
  if (task.assignee === caller.identity) relations.push('assignee');
  if (task.sender === caller.identity) relations.push('sender');
  if (relations.length === 0) relations.push(task.audience.includes(caller.identity) ? 'audience' : 'outsider');
  return relations;
}

function applies(rule: Rule, task: Task, relations: readonly Relation[]): boolean {
  const fromHolds = rule.from === 'any non-terminal' ? !isTerminal(task.state) : rule.from === task.state;
  if (!fromHolds) return false;
  if (rule.by === 'broadcast assignee') return task.openToAudience && relations.includes('assignee');
  if (rule.by === 'direct assignee') return !task.openToAudience && relations.includes('assignee');
  return relations.includes(rule.by);
}

/** The rules this caller may apply now, in table order, one per target. */
export function allowedRules(task: Task, relations: readonly Relation[]): Rule[] {
  const seen = new Set<TaskStateName>();
  return TRANSITION_TABLE.filter((rule) => applies(rule, task, relations) && !seen.has(rule.to) && seen.add(rule.to));
}

export const allowedTargets = (task: Task, relations: readonly Relation[]): TaskStateName[] =>
  allowedRules(task, relations).map((rule) => rule.to);
