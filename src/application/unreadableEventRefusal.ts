/**
 * A stored event this build cannot read (readEvent's InvalidStoredEvent: written into the log by something else, or by
 * a newer build), met by a reader: said as the log being unreadable there, as a damaged SQLite page is ('Event log
 * unreadable', UNAVAILABLE), naming its position and what an operator can do. `mailbox audit` and GET /v1/audit/events
 * said it as INTERNAL, which is left for a bug of the mailbox. A new event the mailbox itself would write that does not
 * fit (position below zero) is such a bug, and stays as it is.
 */
import { MailboxError } from '../errors';
import type { InvalidStoredEvent } from '../events/readEvent';

export function unreadableEventRefusal(caught: unknown): MailboxError | null {
  if (!(caught instanceof Error) || caught.name !== 'InvalidStoredEvent') return null; // by name: the CLI loads lazily
  const error = caught as InvalidStoredEvent;
  if (error.position < 0n) return null;
  const next = error.position + 1n;
  return new MailboxError('UNAVAILABLE', 'Event log unreadable', error.message, {
    position: error.position.toString(),
    stream: error.streamName,
    eventType: error.type,
    eventField: error.field,
    operatorAction:
      'Restore the log from a backup (mailbox backup writes one), or run a build that reads this event (an upcaster). ' +
      `Nothing was skipped: to read the log past it, mailbox audit replay --from ${next} (GET /v1/audit/events?after=${error.position}).`,
  });
}
