/** Helpers for the read model specs: a LogBuilder log cut into what was given and what happens next. */
import type { InboxEntryFields, ProjectedEvent } from '../../../src/projections/viewChanges';
import { LogBuilder } from '../../contract/projectionStoreLog';

export { LogBuilder };

/** The events `act` appends to the log, projected (positions continue the log). */
export function next(log: LogBuilder, act: (log: LogBuilder) => unknown): ProjectedEvent[] {
  const from = log.events.length;
  act(log);
  return log.projected(from);
}

/** The fields of the message's entries, as its MessageSent carries them. */
export function entryOf(log: LogBuilder, messageId: string): InboxEntryFields {
  const sent = log.events.find((e) => e.type === 'MessageSent' && e.data.messageId === messageId);
  if (!sent || sent.type !== 'MessageSent') throw new Error(`no MessageSent for ${messageId}`);
  const { from, to, subject, priority, threadId, tags, sentAt } = sent.data;
  return { messageId, from, to, subject, priority, threadId, tags, sentAt };
}

/** The position the next event will get. */
export const nextPosition = (log: LogBuilder): bigint => BigInt(log.events.length + 1);
