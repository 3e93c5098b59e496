/**
 * What the read model's rules decide: concrete, store-neutral changes to the
 * views. The rules emit them into a ChangeSink: a store is one (it writes each
 * change as it comes, deciding nothing, allocating nothing per change), and
 * `collect` turns them into ReadModelChange values (evolve, the specs). See
 * evolve.ts for the rules.
 */
import type { Priority } from '../../events/types';
import type { Role } from '../../events/types';
import type { InboxEntryFields, MessageSummary } from '../viewChanges';
import { collectLedgerChanges, replayLedgerChange, type LedgerChange, type LedgerChangeSink } from './ledger';
import { collectTaskChanges, replayTaskChange, type TaskChange, type TaskChangeSink } from './taskView';

/** The task views' changes (taskView.ts) and the delivery ledger's (ledger.ts) are part of every sink. */
export interface ChangeSink extends TaskChangeSink, LedgerChangeSink {
  agentRegistered(identity: string, role: Role, registeredAt: string): void;
  agentRetired(identity: string, retiredAt: string): void;
  messageRecorded(position: bigint, summary: MessageSummary): void;
  /** The identity appears in the views for the first time (it is listed by allHeartbeats from now on). */
  identityHasViews(identity: string): void;
  outboxEntryAdded(sender: string, position: bigint, entry: InboxEntryFields): void;
  inboxEntryAdded(
    recipient: string,
    position: bigint,
    entry: InboxEntryFields,
    isBroadcast: boolean,
    wakeSuppressed: boolean,
  ): void;
  /** The unread count of (identity, priority) moves by one; the total moves with it. */
  unreadMoved(identity: string, priority: Priority, by: 1 | -1): void;
  entryRead(recipient: string, messageId: string, readAt: string): void;
  entryArchived(recipient: string, messageId: string, archivedAt: string): void;
  /**
   * The archived entry is in the recipient's inbox again: its archivedAt is cleared (listings show it
   * under status unread/read/all again, not under archived). The unread count moves separately (unreadMoved).
   */
  entryUnarchived(recipient: string, messageId: string): void;
  /** The entry was returned to its recipient for the first time: its seenAt is set (listings show it). */
  entrySeen(recipient: string, messageId: string, seenAt: string): void;
  /**
   * The recipient's unseen count (entries unread, not archived, never seen; counts report it beside
   * unread) moves by one. One total per identity, not per priority.
   */
  unseenMoved(identity: string, by: 1 | -1): void;
  lastActivityMoved(identity: string, at: string): void;
}

export type ReadModelChange =
  | { kind: 'agentRegistered'; identity: string; role: Role; registeredAt: string }
  | { kind: 'agentRetired'; identity: string; retiredAt: string }
  | { kind: 'messageRecorded'; position: bigint; summary: MessageSummary }
  | { kind: 'identityHasViews'; identity: string }
  | { kind: 'outboxEntryAdded'; sender: string; position: bigint; entry: InboxEntryFields }
  | {
      kind: 'inboxEntryAdded';
      recipient: string;
      position: bigint;
      entry: InboxEntryFields;
      isBroadcast: boolean;
      wakeSuppressed: boolean;
    }
  | { kind: 'unreadMoved'; identity: string; priority: Priority; by: 1 | -1 }
  | { kind: 'entryRead'; recipient: string; messageId: string; readAt: string }
  | { kind: 'entryArchived'; recipient: string; messageId: string; archivedAt: string }
  | { kind: 'entryUnarchived'; recipient: string; messageId: string }
  | { kind: 'entrySeen'; recipient: string; messageId: string; seenAt: string }
  | { kind: 'unseenMoved'; identity: string; by: 1 | -1 }
  | { kind: 'lastActivityMoved'; identity: string; at: string }
  | TaskChange
  | LedgerChange;

/** A sink that records each change as a value, in order. */
export function collect(into: ReadModelChange[]): ChangeSink {
  return {
    agentRegistered: (identity, role, registeredAt) => into.push({ kind: 'agentRegistered', identity, role, registeredAt }),
    agentRetired: (identity, retiredAt) => into.push({ kind: 'agentRetired', identity, retiredAt }),
    messageRecorded: (position, summary) => into.push({ kind: 'messageRecorded', position, summary }),
    identityHasViews: (identity) => into.push({ kind: 'identityHasViews', identity }),
    outboxEntryAdded: (sender, position, entry) => into.push({ kind: 'outboxEntryAdded', sender, position, entry }),
    inboxEntryAdded: (recipient, position, entry, isBroadcast, wakeSuppressed) =>
      into.push({ kind: 'inboxEntryAdded', recipient, position, entry, isBroadcast, wakeSuppressed }),
    unreadMoved: (identity, priority, by) => into.push({ kind: 'unreadMoved', identity, priority, by }),
    entryRead: (recipient, messageId, readAt) => into.push({ kind: 'entryRead', recipient, messageId, readAt }),
    entryArchived: (recipient, messageId, archivedAt) => into.push({ kind: 'entryArchived', recipient, messageId, archivedAt }),
    entryUnarchived: (recipient, messageId) => into.push({ kind: 'entryUnarchived', recipient, messageId }),
    entrySeen: (recipient, messageId, seenAt) => into.push({ kind: 'entrySeen', recipient, messageId, seenAt }),
    unseenMoved: (identity, by) => into.push({ kind: 'unseenMoved', identity, by }),
    lastActivityMoved: (identity, at) => into.push({ kind: 'lastActivityMoved', identity, at }),
    ...collectTaskChanges(into),
    ...collectLedgerChanges(into),
  };
}

/** Plays a recorded change into a sink (a store). */
export function replay(change: ReadModelChange, sink: ChangeSink): void {
  switch (change.kind) {
    case 'agentRegistered':
      return sink.agentRegistered(change.identity, change.role, change.registeredAt);
    case 'agentRetired':
      return sink.agentRetired(change.identity, change.retiredAt);
    case 'messageRecorded':
      return sink.messageRecorded(change.position, change.summary);
    case 'identityHasViews':
      return sink.identityHasViews(change.identity);
    case 'outboxEntryAdded':
      return sink.outboxEntryAdded(change.sender, change.position, change.entry);
    case 'inboxEntryAdded':
      return sink.inboxEntryAdded(change.recipient, change.position, change.entry, change.isBroadcast, change.wakeSuppressed);
    case 'unreadMoved':
      return sink.unreadMoved(change.identity, change.priority, change.by);
    case 'entryRead':
      return sink.entryRead(change.recipient, change.messageId, change.readAt);
    case 'entryArchived':
      return sink.entryArchived(change.recipient, change.messageId, change.archivedAt);
    case 'entryUnarchived':
      return sink.entryUnarchived(change.recipient, change.messageId);
    case 'entrySeen':
      return sink.entrySeen(change.recipient, change.messageId, change.seenAt);
    case 'unseenMoved':
      return sink.unseenMoved(change.identity, change.by);
    case 'lastActivityMoved':
      return sink.lastActivityMoved(change.identity, change.at);
    case 'taskUpserted':
    case 'taskListed':
    case 'taskUnlisted':
    case 'tasksWaitingMoved':
    case 'tasksWaitingBegan':
    case 'historyLineRecorded':
      return replayTaskChange(change, sink);
    case 'ledgerOpened':
    case 'ledgerStageReached':
    case 'replyAwaited':
    case 'repliesSettled':
    case 'wakeNotDue':
    case 'recipientAttended':
    case 'unwokenListed':
    case 'unwokenCleared':
    case 'wakeEscalated':
    case 'replyRequested':
    case 'replyOwed':
    case 'replyOwedCleared':
    case 'repliesMet':
    case 'replyOverdueMarked':
    case 'nudgeObserved':
      return replayLedgerChange(change, sink);
    default: {
      const unexpected: never = change;
      throw new Error(`Unknown read model change ${(unexpected as { kind: string }).kind}`);
    }
  }
}
