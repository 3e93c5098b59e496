/**
 * The read model's rules, once (DESIGN section 4): what one fact of an event
 * (see projector.ts) changes in the views, given what the views hold. Pure:
 * the view is only read; the changes go to a sink (see changes.ts).
 *
 * - One entry per recipient: a redelivered inbox fact changes nothing.
 * - Unread counts per priority: +1 when an entry arrives, -1 when it is first read or first archived,
 *   whichever comes first (read-after-archive and archive-after-read move the count once).
 * - Unarchiving an archived entry brings it back to the inbox: +1 unread when it was never read;
 *   an entry not archived (or not the recipient's) changes nothing.
 * - Seen (issue 13): the first seen mark of an entry sets its seenAt; later ones change nothing.
 *   The unseen count is the entries unread, not archived and never seen: +1 with a new entry,
 *   -1 when such an entry is first seen, read or archived, +1 when an unseen unread one is unarchived.
 * - A receipt or archive for an entry the recipient does not have changes no entry, count or activity.
 * - Last activity: the newest of the identity's sent and read times; it never moves back.
 * - Outbox: one entry per message.
 * - Agents: registering (again) makes an agent current; retiring an unknown agent changes nothing.
 * - Every identity a fact addresses (sender, recipient, reader) has views from then on, even when
 *   nothing else changed: the heartbeat lists it, with zero counts.
 */
import type { ViewChange } from '../viewChanges';
import { collect, type ChangeSink, type ReadModelChange } from './changes';
import { evolveLedger } from './ledgerRules';
import { evolveTask } from './taskRules';
import type { ReadModelView } from './view';

/** The changes one fact makes, as values. */
export function evolve(view: ReadModelView, fact: ViewChange, position: bigint): ReadModelChange[] {
  const changes: ReadModelChange[] = [];
  evolveTo(view, fact, position, collect(changes));
  return changes;
}

/** The same rules, each change sent to `sink` as it is decided (a store writes it at once: nothing allocated per change). */
export function evolveTo(view: ReadModelView, fact: ViewChange, position: bigint, sink: ChangeSink): void {
  evolveLedger(view, fact, position, sink); // the delivery ledger (ledgerRules.ts) reads only its own views
  switch (fact.kind) {
    case 'agentRegistered':
      sink.agentRegistered(fact.identity, fact.role, fact.registeredAt);
      return;
    case 'agentRetired':
      if (view.isRegistered(fact.identity)) sink.agentRetired(fact.identity, fact.retiredAt);
      return;
    case 'messageRecorded':
      sink.messageRecorded(position, fact.summary);
      return;
    case 'outboxAdded':
      addressed(view, fact.sender, sink);
      if (view.hasOutboxEntry(fact.sender, fact.entry.messageId)) return;
      sink.outboxEntryAdded(fact.sender, position, fact.entry);
      active(view, fact.sender, fact.entry.sentAt, sink);
      return;
    case 'inboxAdded':
      addressed(view, fact.recipient, sink);
      if (view.entry(fact.recipient, fact.entry.messageId) !== undefined) return;
      sink.inboxEntryAdded(fact.recipient, position, fact.entry, fact.isBroadcast, fact.wakeSuppressed);
      sink.unreadMoved(fact.recipient, fact.entry.priority, 1);
      sink.unseenMoved(fact.recipient, 1);
      return;
    case 'receiptRead': {
      addressed(view, fact.recipient, sink);
      const entry = view.entry(fact.recipient, fact.messageId);
      if (entry === undefined || entry.readAt !== null) return;
      const wasUnread = entry.archivedAt === null;
      const { priority } = entry.fields;
      sink.entryRead(fact.recipient, fact.messageId, fact.readAt);
      if (wasUnread) sink.unreadMoved(fact.recipient, priority, -1);
      if (wasUnread && entry.seenAt === null) sink.unseenMoved(fact.recipient, -1);
      active(view, fact.recipient, fact.readAt, sink);
      return;
    }
    case 'inboxArchived': {
      addressed(view, fact.recipient, sink);
      const entry = view.entry(fact.recipient, fact.messageId);
      if (entry === undefined || entry.archivedAt !== null) return;
      const wasUnread = entry.readAt === null;
      const { priority } = entry.fields;
      sink.entryArchived(fact.recipient, fact.messageId, fact.archivedAt);
      if (wasUnread) sink.unreadMoved(fact.recipient, priority, -1);
      if (wasUnread && entry.seenAt === null) sink.unseenMoved(fact.recipient, -1);
      return;
    }
    case 'inboxUnarchived': {
      addressed(view, fact.recipient, sink);
      const entry = view.entry(fact.recipient, fact.messageId);
      if (entry === undefined || entry.archivedAt === null) return;
      const { priority } = entry.fields;
      sink.entryUnarchived(fact.recipient, fact.messageId);
      if (entry.readAt === null) sink.unreadMoved(fact.recipient, priority, 1);
      if (entry.readAt === null && entry.seenAt === null) sink.unseenMoved(fact.recipient, 1);
      return;
    }
    case 'entrySeen': {
      addressed(view, fact.recipient, sink);
      const entry = view.entry(fact.recipient, fact.messageId);
      if (entry === undefined || entry.seenAt !== null) return;
      sink.entrySeen(fact.recipient, fact.messageId, fact.seenAt);
      if (entry.readAt === null && entry.archivedAt === null) sink.unseenMoved(fact.recipient, -1);
      return;
    }
    case 'taskOpened':
    case 'taskChanged':
      evolveTask(view, fact, position, sink); // taskRules.ts
      return;
    case 'ledgerOpened':
    case 'wakeObserved':
    case 'wakeEscalated':
    case 'replyRequested':
    case 'replyOverdue':
      return; // the ledger's own facts: ledgerRules.ts (above)
    default: {
      const unexpected: never = fact;
      throw new Error(`No read model rule for fact ${(unexpected as { kind: string }).kind}`);
    }
  }
}

function addressed(view: ReadModelView, identity: string, sink: ChangeSink): void {
  if (!view.hasViews(identity)) sink.identityHasViews(identity);
}

function active(view: ReadModelView, identity: string, at: string, sink: ChangeSink): void {
  const last = view.lastActivityAt(identity);
  if (last === null || at > last) sink.lastActivityMoved(identity, at);
}
