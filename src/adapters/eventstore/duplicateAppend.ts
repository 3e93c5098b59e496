/**
 * Event-id de-duplication shared by the in-process stores, with EventStoreDB's
 * semantics: when the appended ids are already the stream's events at some
 * revisions, the append is a retry of one that succeeded; report that result.
 */
import type { AppendResult } from '../../events/eventStore';
import type { NewEvent, StoredEvent } from '../../events/types';

export function findDuplicateAppend(stream: readonly StoredEvent[], events: readonly NewEvent[]): AppendResult | null {
  if (events.length === 0) return null;
  const start = stream.findIndex((stored) => stored.eventId === events[0].eventId);
  if (start < 0) return null;
  const last = start + events.length - 1;
  if (last >= stream.length) return null;
  for (let i = 0; i < events.length; i++) if (stream[start + i].eventId !== events[i].eventId) return null;
  return { nextExpectedRevision: stream[last].revision, position: stream[last].position };
}
