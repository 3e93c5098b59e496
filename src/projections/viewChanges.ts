/**
 * The facts of an event, as the projector states them (projector.ts): what
 * happened to which view, before any rule is applied. Each fact names every
 * identity it concerns and carries the fields it needs, so that a store can
 * apply it without reading anything else (Redis: one slot per agent). The
 * rules that turn facts into view changes are in readModel/evolve.ts.
 */
import type { Addressee } from '../events/addressing';
import type { MessageSummaryFields, Priority, Role, TaskEnvelope, TaskEvent, TaskState, WakeVia } from '../events/types';
import type { LedgerHeader } from './readModel/ledger';

export interface MessageSummary extends Omit<MessageSummaryFields, 'wakeSuppressed' | 'hasTask'> {
  task: TaskEnvelope | null;
  recipientCount: number;
}

/** The fields an inbox entry filters on, copied into the recipient's own keys. */
export type InboxEntryFields = Pick<
  MessageSummaryFields,
  'messageId' | 'from' | 'to' | 'subject' | 'priority' | 'threadId' | 'tags' | 'sentAt'
>;

export type ViewChange =
  | { kind: 'agentRegistered'; identity: string; role: Role; registeredAt: string }
  | { kind: 'agentRetired'; identity: string; retiredAt: string }
  | { kind: 'messageRecorded'; summary: MessageSummary }
  | { kind: 'outboxAdded'; sender: string; entry: InboxEntryFields }
  | { kind: 'inboxAdded'; recipient: string; entry: InboxEntryFields; isBroadcast: boolean; wakeSuppressed: boolean }
  | { kind: 'receiptRead'; recipient: string; messageId: string; readAt: string; priority: Priority }
  | { kind: 'inboxArchived'; recipient: string; messageId: string; archivedAt: string }
  | { kind: 'inboxUnarchived'; recipient: string; messageId: string; unarchivedAt: string }
  | { kind: 'entrySeen'; recipient: string; messageId: string; seenAt: string }
  | TaskFact
  | LedgerFact;

/**
 * The delivery ledger's own facts (readModel/ledgerRules.ts): a message's ledger opens with its send (the
 * position is the event's); a wake reached a recipient. Inbox, receipt and seen facts move it too.
 */
export type LedgerFact =
  | ({ kind: 'ledgerOpened' } & Omit<LedgerHeader, 'position' | 'wakeExpected'> & {
        /** The sender suppressed its wakes. */
        wakeSuppressed: boolean;
        /** A broadcast's sender, never woken by its own broadcast (null: not a broadcast). */
        broadcastSender: string | null;
      })
  | { kind: 'wakeObserved'; messageId: string; recipient: string; via: WakeVia; at: string }
  | { kind: 'wakeEscalated'; messageId: string; at: string }
  | { kind: 'replyRequested'; messageId: string; dueBy: string }
  | { kind: 'replyOverdue'; messageId: string; sender: string; waitingOn: string[]; dueBy: string; at: string };

/** What a task record starts as, from the message that carried it (see readModel/taskView.ts). */
export interface OpenedTask {
  taskId: string;
  threadId: string;
  sender: string;
  to: Addressee;
  subject: string;
  priority: Priority;
  sentAt: string;
  isBroadcast: boolean;
  audience: string[];
  state: TaskState;
  assignee: string | null;
  claimedAt: null;
  leaseExpiresAt: null;
  deadline: string | null;
  statusMessage: null;
  reason: null;
  updatedAt: string;
  updatedBy: string;
  artifactCount: 0;
  lapsedClaimant: null;
  outcomeUnseen: false;
}

/** A message opened a task; a task's own stream changed it (the event as logged, with its actor and time). */
export type TaskFact =
  | { kind: 'taskOpened'; task: OpenedTask }
  /** eventId: the event's own id, which names the line it makes in the task's history (taskHistoryLine.ts). */
  | { kind: 'taskChanged'; event: TaskEvent; eventId: string; actor: string; at: string };

/** The facts of one event, at its log position. */
export interface ProjectedEvent {
  position: bigint;
  at: string;
  changes: ViewChange[];
}

export type WakeEvent = MessageWakeEvent | TaskWakeEvent | ReplyOverdueWakeEvent;

/** A reply obligation of a message the recipient (its sender) sent fell due: who has not answered (issue 13). */
export interface ReplyOverdueWakeEvent {
  type: 'wake/reply-overdue';
  messageId: string;
  recipient: string;
  waitingOn: string[];
  dueBy: string;
  position: string;
}

export interface MessageWakeEvent {
  type: 'wake/message';
  messageId: string;
  from: string;
  to: Addressee;
  recipient: string;
  subject: string;
  priority: Priority;
  isBroadcast: boolean;
  unreadCount: number;
  position: string;
}

/** A task changed in a way that is the recipient's turn (readModel/taskWakes.ts). */
export interface TaskWakeEvent {
  type: 'wake/task';
  taskId: string;
  messageId: string;
  recipient: string;
  /** Who made the change. */
  by: string;
  event: TaskEvent['type'];
  state: TaskState;
  assignee: string | null;
  subject: string;
  priority: Priority;
  position: string;
}
