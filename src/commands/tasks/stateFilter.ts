/**
 * list_tasks' `state` filter: one state, several as an array, a JSON-encoded array or comma-separated text (lossless).
 *
 * A word that is no state (found probing list_tasks as a model: `{"state": "open"}`) was refused as `'state.0' must be
 * a task state ... did you mean Submitted?`: a field the caller never wrote (it sent no list), and a suggestion that
 * lists one state where "open" means every state not finished. A value of another type (`7`) was told only "must be a
 * list". Every refusal now names `state`, says the forms it takes and the states, and suggests the filter that was
 * likely meant (never taken: DESIGN, suggest, never substitute).
 */
import { z } from 'zod';
import { TASK_STATES, stateMeant, stateNamed, squashedStateWord, taskStateSchema, type TaskState } from '../messageFields';
import { TERMINAL_TASK_STATES } from '../../events/taskTimes';
import { shownValue } from '../shownValue';
import { receivedOf } from '../teachingMessages';

const NOT_FINISHED = TASK_STATES.filter((state) => !TERMINAL_TASK_STATES.has(state));
const FINISHED = TASK_STATES.filter((state) => TERMINAL_TASK_STATES.has(state));

/** Words for several states at once, as a filter means them (squashed: lowercase letters only). */
const GROUPS = new Map<string, { what: string; states: readonly TaskState[] }>([
  ...['open', 'pending', 'unfinished', 'notfinished', 'incomplete', 'outstanding', 'ongoing', 'notdone'].map(
    (word) => [word, { what: 'the tasks not finished', states: NOT_FINISHED }] as const,
  ),
  ...['closed', 'finished', 'ended', 'final', 'terminal', 'over'].map(
    (word) => [word, { what: 'the finished tasks', states: FINISHED }] as const,
  ),
]);
const EVERY = new Set(['all', 'any', '*', 'every']);

const FORM =
  'takes one task state or a list of them (an array, e.g. ["Working", "InputRequired"], or comma-separated: ' +
  `Working,InputRequired); the states: ${TASK_STATES.join(', ')} (A2A v0.3 'input-required' and v1.0 ` +
  "'TASK_STATE_INPUT_REQUIRED' spellings are accepted)";

/** What was sent as the list it stands for, or the value itself when it is none (refused below). */
function listOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return value;
    }
  }
  return text.split(',').map((s) => s.trim());
}

/** The filter the caller most likely meant, said after the refusal; '' when there is no good guess. */
function meant(list: readonly unknown[], wrong: readonly unknown[]): string {
  if (wrong.length === 1 && typeof wrong[0] === 'string') {
    const word = squashedStateWord(wrong[0]);
    const group = GROUPS.get(word);
    if (group) return `: for ${group.what}, pass "state": ${JSON.stringify(group.states)}`;
    if (EVERY.has(wrong[0].trim()) || EVERY.has(word)) return ": omit 'state' to list tasks in every state";
  }
  const fixed = list.map((item) => (typeof item === 'string' ? (stateNamed(item) ?? stateMeant(item) ?? null) : null));
  return fixed.every((state) => state !== null) ? `: did you mean "state": ${JSON.stringify([...new Set(fixed)])}?` : '';
}

export const stateFilterSchema = z.preprocess((value, ctx) => {
  if (value === null || value === undefined) return value; // told to omit it (validation.ts), or absent
  const list = listOf(value);
  if (!Array.isArray(list)) {
    ctx.addIssue({ code: 'custom', message: `${FORM}, not ${receivedOf(value)}`, input: value });
    return value;
  }
  if (list.length === 0) {
    // An empty list names no state: it would match no task (never taken as "every state", never answered empty).
    ctx.addIssue({
      code: 'custom',
      message: `${FORM}; ${shownValue(value)} names none, so it would match no task: omit 'state' to list tasks in every state`,
      input: value,
    });
    return value;
  }
  const wrong = list.filter((item) => typeof item !== 'string' || !taskStateSchema.safeParse(item).success);
  if (wrong.length === 0) return list; // its size is checked next
  const named = wrong.slice(0, 3).map((item) => shownValue(item));
  const more = wrong.length > 3 ? ` and ${wrong.length - 3} more` : '';
  ctx.addIssue({
    code: 'custom',
    message: `${FORM}; ${named.join(', ')}${more} ${wrong.length > 1 ? 'are' : 'is'} none of them${meant(list, wrong)}`,
    input: value,
  });
  return value;
}, z.array(taskStateSchema).min(1).max(TASK_STATES.length));
