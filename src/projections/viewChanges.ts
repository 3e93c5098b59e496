/**
 * What a projector asks a projection store to change. Each change names every
 * key it touches and carries the fields it needs, so that an adapter can apply
 * it without reading anything else (Redis: one slot per agent).
 */
import type { MessageSummaryFields, Priority, Role, TaskEnvelope } from '../events/types';

export interface MessageSummary extends Omit<MessageSummaryFields, 'wakeSuppressed' | 'hasTask'> {
  task: TaskEnvelope | null;
  recipientCount: number;
}

/** The fields an inbox entry filters on, copied into the recipient's own keys. */
export type InboxEntryFields =
  Pick<MessageSummaryFields, 'messageId' | 'from' | 'to' | 'subject' | 'priority' | 'threadId' | 'tags' | 'sentAt'>;

export type ViewChange =
  | { kind: 'agentRegistered'; identity: string; role: Role; registeredAt: string }
  | { kind: 'agentRetired'; identity: string; retiredAt: string }
  | { kind: 'messageRecorded'; summary: MessageSummary }
  | { kind: 'outboxAdded'; sender: string; entry: InboxEntryFields }
  | { kind: 'inboxAdded'; recipient: string; entry: InboxEntryFields; isBroadcast: boolean; wake: boolean }
  | { kind: 'receiptRead'; recipient: string; messageId: string; readAt: string; priority: Priority }
  | { kind: 'inboxArchived'; recipient: string; messageId: string; archivedAt: string };

/** The view changes of one event, at its log position. */
export interface ProjectedEvent {
  position: bigint;
  at: string;
  changes: ViewChange[];
}

export interface WakeEvent {
  type: 'wake/message';
  messageId: string;
  from: string;
  to: string;
  recipient: string;
  subject: string;
  priority: Priority;
  isBroadcast: boolean;
  unreadCount: number;
  position: string;
}
