/**
 * One event as a line: JSON in the shape GET /v1/audit/events serves
 * (positions as strings, exact beyond 2^53), or text for people.
 */
import { addresseeText } from '../events/addressing';
import type { StoredEvent } from '../events/types';
import type { JsonTextRow } from './logSource';
import { describeTaskEvent } from './taskEventText';
import { quoted } from '../support/terminalText';
import { withheldTokenHash, withheldTokenHashText } from '../support/tokenHashWithheld';

/**
 * Same shape as the API's eventToJson (a unit test holds them together); kept here so the audit tools load without DI.
 * A token hash is withheld (support/tokenHashWithheld.ts), as the API withholds it.
 */
export const eventJson = (event: StoredEvent) => ({
  position: event.position.toString(),
  streamName: event.streamName,
  revision: event.revision.toString(),
  eventId: event.eventId,
  type: event.type,
  data: withheldTokenHash(event.data),
  metadata: event.metadata,
});

/** JSON.stringify(eventJson(event)), without building the intermediate object (replay's hot path). */
export const eventJsonLine = (event: StoredEvent): string =>
  `{"position":"${event.position}","streamName":${JSON.stringify(event.streamName)},"revision":"${event.revision}",` +
  `"eventId":${JSON.stringify(event.eventId)},"type":${JSON.stringify(event.type)},"data":${JSON.stringify(withheldTokenHash(event.data))},` +
  `"metadata":${JSON.stringify(event.metadata)}}`;

/** eventJsonLine of a row whose data and metadata are still the JSON text the store wrote (same bytes; a test holds them together). */
export const rowJsonLine = (row: JsonTextRow): string =>
  `{"position":"${row[0]}","streamName":${JSON.stringify(row[2])},"revision":"${row[3]}","eventId":${JSON.stringify(row[1])},` +
  `"type":${JSON.stringify(row[4])},"data":${withheldTokenHashText(row[5])},"metadata":${row[6]}}`;

export function describeEvent(event: StoredEvent): string {
  switch (event.type) {
    case 'AgentRegistered':
      return `${event.data.identity} registered (${event.data.role})`;
    case 'AgentRetired':
      return `${event.data.identity} retired`;
    case 'AgentTokenRotated':
      return `${event.data.identity} got a new token (the old one no longer works)`;
    case 'MessageSent': {
      const d = event.data;
      return (
        `${d.from} -> ${addresseeText(d.to)} ${quoted(d.subject)} [${d.priority}] message ${d.messageId}` +
        ` (${d.recipients.length} recipient${d.recipients.length === 1 ? '' : 's'})`
      );
    }
    case 'BroadcastDelivered':
      return `message ${event.data.messageId} delivered to ${event.data.recipient}`;
    case 'ReceiptRead':
      return `message ${event.data.messageId} read by ${event.data.reader}`;
    case 'MessageArchived':
      return `message ${event.data.messageId} archived by ${event.data.recipient}${event.data.wasUnread ? ' (unread)' : ''}`;
    case 'WakeObserved':
      // Recorded off the request path, in batches: the line's time column is when the batch was written.
      return `${event.data.recipient} woken for message ${event.data.messageId} via ${event.data.via} at ${event.data.observedAt}`;
    case 'ReplyRequested':
      return `message ${event.data.messageId}: every recipient's reply expected by ${event.data.dueBy}`;
    case 'ReplyOverdue':
      return `message ${event.data.messageId}: reply overdue since ${event.data.dueBy}, waiting on ${event.data.waitingOn.join(', ')}`;
    case 'WakeEscalated':
      return (
        // Whom the message was due to wake, not whom a nudge reached: a retired, opted-out or unregistered recipient is
        // listed and never nudged (it read "escalated to @d" for a retired @d); the heartbeat's log and the ledger say who.
        `message ${event.data.messageId} woke nobody within ${event.data.slaMs} ms: escalated; due a wake: ` +
        `${event.data.recipients.join(', ') || 'nobody'} (a retired, opted-out or unregistered one is not nudged)`
      );
    case 'MessagesSeen': {
      const n = event.data.messageIds.length;
      // Seeing is not reading (a message read before it was listed is in both); seenAt is when, the column when written.
      return (
        `${event.data.recipient} saw ${n} message${n === 1 ? '' : 's'} at ${event.data.seenAt} (listed or opened, which ` +
        `does not mark ${n === 1 ? 'it' : 'them'} read): ${event.data.messageIds.join(', ')}`
      );
    }
    case 'MessageUnarchived':
      return `message ${event.data.messageId} back in the inbox of ${event.data.recipient} (unarchived)`;
    case 'TaskClaimed':
    case 'TaskStateChanged':
    case 'TaskArtifactAdded':
    case 'TaskLeaseRenewed':
    case 'TaskReleased':
    case 'TaskLeaseExpired':
    case 'TaskExpired':
    case 'TaskOutcomeSeen':
      return describeTaskEvent(event, event.metadata.actor);
    default: {
      const unexpected: never = event;
      return `unknown event ${(unexpected as StoredEvent).type}`;
    }
  }
}

/**
 * One event as a text line. `positionWidth`: the digits of the widest position the replay can show (the log head's),
 * so that the columns after it stay aligned once positions reach more digits (#9 beside #10).
 */
export const eventTextLine = (event: StoredEvent, positionWidth = 0): string =>
  `${`#${event.position}`.padEnd(positionWidth + 1)}  ${event.metadata.at}  ${event.type.padEnd(18)}  ${describeEvent(event)}  ` +
  `[${event.streamName}@${event.revision} by ${event.metadata.actor}]`;
