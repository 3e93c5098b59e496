/**
 * A task listing whose filters can never match is refused, not answered with an empty page: the claimable view holds
 * only tasks nobody holds yet, which are all Submitted (a claim moves a task out of it), so `view: claimable` with
 * states that leave out Submitted (`state: Completed`) always answered `tasks: []`, and the caller read "no finished
 * tasks" where it had asked the wrong view. The refusal says why and which views hold such tasks. Which state that is
 * comes from the read model's rule (CLAIMABLE_STATE), so the two cannot drift apart.
 */
import type { ListTasksInput } from '../commands/tasks/taskSchemas';
import { TASK_STATES } from '../events/taskShapes';
import type { TaskState } from '../events/types';
import { MailboxError } from '../errors';
import { CLAIMABLE_STATE } from '../projections/readModel/taskRules';

/** The error for a listing that no task can ever be in, or null. */
export function unmatchableTaskListing(query: Pick<ListTasksInput, 'view' | 'state'>): MailboxError | null {
  if (query.view !== 'claimable' || query.state === undefined || query.state.includes(CLAIMABLE_STATE)) return null;
  const states = [...new Set(query.state)];
  const named = states.join(',');
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `list_tasks: the claimable view holds only tasks nobody holds yet, which are all ${CLAIMABLE_STATE}, so state ` +
      `${named} can never match it and nothing was listed. Ask the claimable view without a state (or with ` +
      `${CLAIMABLE_STATE}); for tasks in ${named}, ask the view assigned (tasks you hold) or sent (tasks you sent) with ` +
      'that state, or get_task for one task.',
    { field: 'state', value: states, view: 'claimable', allowed: [CLAIMABLE_STATE] },
  );
}

/**
 * The states a listing is filtered by, and its cursor bound to: none when the filter leaves out no task the view can
 * hold, so that the same listing asked either way is one (a cursor of either pages the other). Every state named is no
 * filter; so is, in the claimable view (whose tasks are all Submitted), any filter naming Submitted (a cursor of
 * `view=claimable&state=Submitted` was CURSOR_MISMATCH on `view=claimable`, though the two list the same tasks).
 */
export function listingStates(query: Pick<ListTasksInput, 'view' | 'state'>): TaskState[] {
  const named = query.state ? [...new Set(query.state)].sort() : [];
  if (TASK_STATES.every((state) => named.includes(state))) return [];
  return query.view === 'claimable' && named.includes(CLAIMABLE_STATE) ? [] : named;
}
