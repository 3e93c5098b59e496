/** The pure projector: one stored event -> its facts (viewChanges.ts); the read model's rules apply them. No I/O. */
import type { MessageSummaryFields, StoredEvent } from '../events/types';
import type { InboxEntryFields, ProjectedEvent, ViewChange } from './viewChanges';

const entryOf = (s: MessageSummaryFields): InboxEntryFields => ({
  messageId: s.messageId,
  from: s.from,
  to: s.to,
  subject: s.subject,
  priority: s.priority,
  threadId: s.threadId,
  tags: s.tags,
  sentAt: s.sentAt,
});

export function projectEvent(event: StoredEvent): ViewChange[] {
  switch (event.type) {
    case 'AgentRegistered':
      return [
        { kind: 'agentRegistered', identity: event.data.identity, role: event.data.role, registeredAt: event.data.registeredAt },
      ];
    case 'AgentRetired':
      return [{ kind: 'agentRetired', identity: event.data.identity, retiredAt: event.data.retiredAt }];
    case 'AgentTokenRotated':
      return []; // tokens are the write side's concern: no view shows them
    case 'MessageSent': {
      const d = event.data;
      const isBroadcast = d.to.startsWith('AGENT:');
      const changes: ViewChange[] = [
        {
          kind: 'messageRecorded',
          summary: {
            messageId: d.messageId,
            from: d.from,
            to: d.to,
            subject: d.subject,
            priority: d.priority,
            threadId: d.threadId,
            inReplyTo: d.inReplyTo,
            tags: d.tags,
            sentAt: d.sentAt,
            task: d.task,
            recipientCount: d.recipients.length,
          },
        },
        { kind: 'outboxAdded', sender: d.from, entry: entryOf(d) },
      ];
      // Broadcast recipients arrive as BroadcastDelivered events, one each.
      if (!isBroadcast) {
        changes.push({
          kind: 'inboxAdded',
          recipient: d.to,
          entry: entryOf(d),
          isBroadcast: false,
          wakeSuppressed: d.wakeSuppressed,
        });
      }
      return changes;
    }
    case 'BroadcastDelivered': {
      const d = event.data;
      return [
        { kind: 'inboxAdded', recipient: d.recipient, entry: entryOf(d), isBroadcast: true, wakeSuppressed: d.wakeSuppressed },
      ];
    }
    case 'ReceiptRead':
      return [
        {
          kind: 'receiptRead',
          recipient: event.data.reader,
          messageId: event.data.messageId,
          readAt: event.data.readAt,
          priority: event.data.priority,
        },
      ];
    case 'MessageArchived':
      return [
        {
          kind: 'inboxArchived',
          recipient: event.data.recipient,
          messageId: event.data.messageId,
          archivedAt: event.data.archivedAt,
        },
      ];
    default: {
      const unexpected: never = event;
      throw new Error(`No projection for event type ${(unexpected as { type: string }).type}`); // stored events hold bigints: no JSON.stringify
    }
  }
}

export const projectStored = (event: StoredEvent): ProjectedEvent => ({
  position: event.position,
  at: event.metadata.at,
  changes: projectEvent(event),
});
