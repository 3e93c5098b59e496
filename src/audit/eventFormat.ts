/** One event as a line: JSON (the API's shape, positions as strings) or text for people. */
import { eventToJson } from '../application/mailboxQueries';
import type { StoredEvent } from '../events/types';

export const eventJsonLine = (event: StoredEvent): string => JSON.stringify(eventToJson(event));

export function describeEvent(event: StoredEvent): string {
  switch (event.type) {
    case 'AgentRegistered':
      return `${event.data.identity} registered (${event.data.role})`;
    case 'AgentRetired':
      return `${event.data.identity} retired`;
    case 'MessageSent': {
      const d = event.data;
      return `${d.from} -> ${d.to} ${JSON.stringify(d.subject)} [${d.priority}] message ${d.messageId}` +
        ` (${d.recipients.length} recipient${d.recipients.length === 1 ? '' : 's'})`;
    }
    case 'BroadcastDelivered':
      return `message ${event.data.messageId} delivered to ${event.data.recipient}`;
    case 'ReceiptRead':
      return `message ${event.data.messageId} read by ${event.data.reader}`;
    case 'MessageArchived':
      return `message ${event.data.messageId} archived by ${event.data.recipient}${event.data.wasUnread ? ' (unread)' : ''}`;
    default: {
      const unexpected: never = event;
      return `unknown event ${(unexpected as StoredEvent).type}`;
    }
  }
}

export const eventTextLine = (event: StoredEvent): string =>
  `#${event.position}  ${event.metadata.at}  ${event.type.padEnd(18)}  ${describeEvent(event)}  ` +
  `[${event.streamName}@${event.revision} by ${event.metadata.actor}]`;
