/**
 * Our events on EventStoreDB: JSON events whose data is the event's data and
 * whose metadata is our metadata object, under our deterministic event ids.
 *
 * Positions. EventStoreDB places an event in $all at {commit, prepare}. For
 * every event appended over gRPC (EventStoreDB 20+), both equal the event's own
 * byte offset in the transaction log: unique and increasing. The port's bigint
 * `position` is therefore the commit position, and a port position p maps back
 * to {commit: p, prepare: p} for `fromPosition`. Legacy explicit transactions
 * (TCP API) could give several events one commit position; such an event in a
 * mailbox stream is refused loudly rather than given an ambiguous position.
 */
import { MAILBOX_STREAM_PREFIX } from '../../events/streams';
import { readEvent } from '../../events/readEvent';
import type { NewEvent, StoredEvent } from '../../events/types';
import type { EsdbEventData, EsdbPosition, EsdbRecordedEvent as RecordedEvent } from './esdbClientCompat';

type JsonEventData = Extract<EsdbEventData, { contentType: 'application/json' }>;

export function toEventData(event: NewEvent): EsdbEventData {
  return {
    id: event.eventId,
    contentType: 'application/json',
    type: event.type,
    data: event.data as unknown as JsonEventData['data'],
    metadata: event.metadata as unknown as JsonEventData['metadata'],
  };
}

export const toReadPosition = (position: bigint): EsdbPosition => ({ commit: position, prepare: position });

/** Mailbox streams only: system streams start with '$', system event types too (links, metadata, stats). */
export const isMailboxRecord = (event: RecordedEvent): boolean =>
  event.streamId.startsWith(MAILBOX_STREAM_PREFIX) && !event.type.startsWith('$');

export function positionOf(event: RecordedEvent): bigint {
  const position = event.position;
  if (!position) throw new Error(`EventStoreDB returned event ${event.id} of ${event.streamId} without a log position`);
  if (position.commit !== position.prepare) {
    throw new Error(
      `Event ${event.id} of ${event.streamId} has commit position ${position.commit} != prepare position ` +
        `${position.prepare} (a legacy explicit transaction); the mailbox cannot order it unambiguously`,
    );
  }
  return position.commit;
}

/** Checked against its stored shape and upcast (readEvent). `position`: when the caller has already taken it from the event. */
export function toStoredEvent(event: RecordedEvent, position: bigint = positionOf(event)): StoredEvent {
  if (!event.isJson || typeof event.metadata !== 'object' || event.metadata === null || event.metadata instanceof Uint8Array) {
    throw new Error(`Event ${event.id} in ${event.streamId} is not a mailbox JSON event (type ${event.type})`);
  }
  return readEvent({
    eventId: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    streamName: event.streamId,
    revision: event.revision,
    position,
  });
}
