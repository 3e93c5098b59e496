/** The pure projector: one stored event -> its facts (viewChanges.ts); the read model's rules apply them. No I/O. */
import { directRecipient, isBroadcastAddress, namedRecipients } from '../events/addressing';
import { openingTaskState, taskDeadline } from '../events/taskShapes';
import { canonicalThreadId } from '../events/threadIdCase';
import type { MessageSent, MessageSummaryFields, StoredEvent } from '../events/types';
import type { InboxEntryFields, OpenedTask, ProjectedEvent, ViewChange } from './viewChanges';

/** The task record a message opens: a direct task is its recipient's from the send; a broadcast's or a list's waits for a claim. */
const openedTask = (d: MessageSent['data'], task: NonNullable<MessageSent['data']['task']>): OpenedTask => {
  const direct = directRecipient(d.to);
  return {
    taskId: d.messageId,
    threadId: d.threadId,
    sender: d.from,
    to: d.to,
    subject: d.subject,
    priority: d.priority,
    sentAt: d.sentAt,
    isBroadcast: isBroadcastAddress(d.to), // AGENT:* only (DESIGN section 2): a list's task is open to its audience too
    audience: d.recipients,
    state: openingTaskState(task),
    assignee: direct,
    claimedAt: null,
    leaseExpiresAt: null,
    deadline: taskDeadline(task),
    statusMessage: null,
    reason: null,
    updatedAt: d.sentAt,
    updatedBy: d.from,
    artifactCount: 0,
    lapsedClaimant: null,
    outcomeUnseen: false,
  };
};

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

/** The views hold a message-id thread in lower case, as sends store it now: an older log's as typed was unfilterable. */
function withCanonicalThread<T extends { threadId: string }>(data: T): T {
  const threadId = canonicalThreadId(data.threadId);
  return threadId === data.threadId ? data : { ...data, threadId };
}

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
      const d = withCanonicalThread(event.data);
      // One entry for the sender's outbox and every named recipient's inbox: the views that keep it in memory (the
      // scratch views of audit verify) held two copies of each message's fields, ~7% of their heap.
      const entry = entryOf(d);
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
        { kind: 'outboxAdded', sender: d.from, entry },
        {
          kind: 'ledgerOpened',
          messageId: d.messageId,
          sender: d.from,
          threadId: d.threadId,
          sentAt: d.sentAt,
          recipients: d.recipients,
          // Whether a wake is due is the rules' to decide (ledgerRules.ts): it depends on who is registered at this point.
          wakeSuppressed: d.wakeSuppressed,
          broadcastSender: isBroadcastAddress(d.to) ? d.from : null,
        },
      ];
      // A direct message's and a list's recipients are named here; a broadcast's arrive as BroadcastDelivered, one each.
      for (const recipient of namedRecipients(d.to)) {
        changes.push({ kind: 'inboxAdded', recipient, entry, isBroadcast: false, wakeSuppressed: d.wakeSuppressed });
      }
      if (d.task !== null) changes.push({ kind: 'taskOpened', task: openedTask(d, d.task) });
      return changes;
    }
    case 'BroadcastDelivered': {
      const d = withCanonicalThread(event.data);
      return [
        // A list's recipient is addressed by name: woken as for a direct message (wakes.ts), only AGENT:* is a broadcast.
        {
          kind: 'inboxAdded',
          recipient: d.recipient,
          entry: entryOf(d),
          isBroadcast: isBroadcastAddress(d.to),
          wakeSuppressed: d.wakeSuppressed,
        },
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
    case 'WakeObserved':
      return [
        {
          kind: 'wakeObserved',
          messageId: event.data.messageId,
          recipient: event.data.recipient,
          via: event.data.via,
          at: event.data.observedAt,
        },
      ];
    case 'ReplyRequested':
      return [{ kind: 'replyRequested', messageId: event.data.messageId, dueBy: event.data.dueBy }];
    case 'ReplyOverdue': {
      const d = event.data;
      return [
        {
          kind: 'replyOverdue',
          messageId: d.messageId,
          sender: d.sender,
          waitingOn: d.waitingOn,
          dueBy: d.dueBy,
          at: d.overdueAt,
        },
      ];
    }
    case 'WakeEscalated':
      return [{ kind: 'wakeEscalated', messageId: event.data.messageId, at: event.data.escalatedAt }];
    case 'MessagesSeen': {
      const { recipient, seenAt } = event.data;
      return event.data.messageIds.map((messageId) => ({ kind: 'entrySeen', recipient, messageId, seenAt }));
    }
    case 'MessageUnarchived':
      return [
        {
          kind: 'inboxUnarchived',
          recipient: event.data.recipient,
          messageId: event.data.messageId,
          unarchivedAt: event.data.unarchivedAt,
        },
      ];
    case 'TaskClaimed':
    case 'TaskStateChanged':
    case 'TaskArtifactAdded':
    case 'TaskLeaseRenewed':
    case 'TaskReleased':
    case 'TaskLeaseExpired':
    case 'TaskExpired':
    case 'TaskOutcomeSeen':
      return [
        {
          kind: 'taskChanged',
          event: { type: event.type, data: event.data } as never,
          eventId: event.eventId,
          actor: event.metadata.actor,
          at: event.metadata.at,
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

/** Whether a projected event opens or changes a task (only those move a task's due time: taskTimes.ts). */
export const changesATask = (event: ProjectedEvent): boolean =>
  event.changes.some((change) => change.kind === 'taskOpened' || change.kind === 'taskChanged');
