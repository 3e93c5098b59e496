/**
 * A task sent to a list of identities or to AGENT:* is nobody's until one of its audience claims it, and a claim takes
 * a task that is Submitted. Sent as Working, InputRequired or AuthRequired, it was accepted 201 and then nobody could
 * ever hold it: every claim was refused (409 INVALID_TRANSITION "is Working; ... cannot claim it"), it was in no
 * claimable list, and the sender's answer to its InputRequired moved it to Working with no one at work. Such a send is
 * refused, naming the field, the state and the states the send may give.
 */
import { MailboxError } from '../../errors';
import { directRecipient, type Addressee } from '../../events/addressing';
import type { TaskEnvelope, TaskState } from '../../events/types';

/** States that say someone already works the task, or asks about it: only a holder can be at them. */
const HELD_STATES: readonly TaskState[] = ['Working', 'InputRequired', 'AuthRequired'];

/** The error for an open (list or AGENT:*) task sent at a step only its holder could be at, or null. */
export function openTaskSentHeld(task: TaskEnvelope, to: Addressee): MailboxError | null {
  if (directRecipient(to) !== null || task.state === undefined || !HELD_STATES.includes(task.state)) return null;
  const where = typeof to === 'string' ? 'to AGENT:*' : 'to a list of identities';
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `task.state '${task.state}' cannot open a task sent ${where}: such a task is nobody's until one of its audience claims ` +
      `it, and only a Submitted task can be claimed, so nobody could ever work it. Leave task.state out (or send ` +
      `Submitted) and the one who claims it moves it to Working; send ${HELD_STATES.join(' or ')} only to one identity ` +
      `(to: "@name"), who holds it from the send. Nothing was sent.`,
    { field: 'task.state', value: task.state, allowed: ['Submitted', 'Completed', 'Canceled', 'Failed', 'Rejected', 'Unknown'] },
  );
}
