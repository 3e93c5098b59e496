/**
 * A task's `expiresAt` and `budget.deadline` must fall after the send. A task sent with either already passed was
 * accepted 201 without a word, and the sweeper ended it (Canceled, reason "expired") at its next run: the sender
 * learned of its own mistake from a wake, and the recipient got a task that was over before it arrived. It is
 * refused, as `expectsReplyBy` not after the send is, naming the field, the value and the send time.
 */
import { MailboxError } from '../../errors';
import type { TaskEnvelope } from '../../events/types';

const DAY_MS = 86_400_000;

/** The error for a task deadline at or before `sentAt` (the sweeper's own test: due once the deadline <= now), or null. */
export function taskDeadlinePassed(task: TaskEnvelope, sentAt: string): MailboxError | null {
  const sentMs = Date.parse(sentAt);
  const passed = [
    { field: 'task.expiresAt', value: task.expiresAt },
    { field: 'task.budget.deadline', value: task.budget?.deadline },
  ].filter((entry): entry is { field: string; value: string } => entry.value !== undefined && Date.parse(entry.value) <= sentMs);
  if (passed.length === 0) return null;
  const named = passed.map(({ field, value }) => `${field} '${value}'`).join(' and ');
  // An example that would be accepted: a day after this send, written as the form asks (seconds, an offset).
  const example = new Date(sentMs + DAY_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `${named} ${passed.length > 1 ? 'are' : 'is'} not after the send (${sentAt}): the task would be over before it arrived ` +
      `(the sweeper ends it as Canceled, expired). Give an ISO 8601 date and time after the send, with seconds and an ` +
      `offset (e.g. ${example}), or leave ${passed.length > 1 ? 'them' : 'it'} out.`,
    { field: passed[0].field, value: passed[0].value, sentAt },
  );
}
