/**
 * The read model's rules, once (DESIGN section 4): what one fact of an event
 * (see projector.ts) changes in the views, given what the views hold. Pure.
 *
 * - One entry per recipient: a redelivered inbox fact changes nothing.
 * - Unread counts per priority: +1 when an entry arrives, -1 when it is first read or first archived,
 *   whichever comes first (read-after-archive and archive-after-read move the count once).
 * - A receipt or archive for an entry the recipient does not have changes no entry, count or activity.
 * - Last activity: the newest of the identity's sent and read times; it never moves back.
 * - Outbox: one entry per message.
 * - Agents: registering (again) makes an agent current; retiring an unknown agent changes nothing.
 * - Every identity a fact addresses (sender, recipient, reader) has views from then on, even when
 *   nothing else changed: the heartbeat lists it, with zero counts.
 */
import type { ViewChange } from '../viewChanges';
import type { ReadModelChange } from './changes';
import type { ReadModelView } from './view';

export function evolve(view: ReadModelView, fact: ViewChange, position: bigint): ReadModelChange[] {
  switch (fact.kind) {
    case 'agentRegistered':
      return [{ kind: 'agentRegistered', identity: fact.identity, role: fact.role, registeredAt: fact.registeredAt }];
    case 'agentRetired':
      return view.isRegistered(fact.identity) ? [{ kind: 'agentRetired', identity: fact.identity, retiredAt: fact.retiredAt }] : [];
    case 'messageRecorded':
      return [{ kind: 'messageRecorded', summary: fact.summary }];
    case 'outboxAdded': {
      const changes = addressed(view, fact.sender);
      if (view.hasOutboxEntry(fact.sender, fact.entry.messageId)) return changes;
      changes.push({ kind: 'outboxEntryAdded', sender: fact.sender, position, entry: fact.entry });
      active(view, fact.sender, fact.entry.sentAt, changes);
      return changes;
    }
    case 'inboxAdded': {
      const changes = addressed(view, fact.recipient);
      if (view.entry(fact.recipient, fact.entry.messageId) !== undefined) return changes;
      changes.push(
        { kind: 'inboxEntryAdded', recipient: fact.recipient, position, entry: fact.entry, isBroadcast: fact.isBroadcast,
          wakeSuppressed: fact.wakeSuppressed },
        { kind: 'unreadMoved', identity: fact.recipient, priority: fact.entry.priority, by: 1 });
      return changes;
    }
    case 'receiptRead': {
      const changes = addressed(view, fact.recipient);
      const entry = view.entry(fact.recipient, fact.messageId);
      if (entry === undefined || entry.readAt !== null) return changes;
      changes.push({ kind: 'entryRead', recipient: fact.recipient, messageId: fact.messageId, readAt: fact.readAt });
      if (entry.archivedAt === null) changes.push({ kind: 'unreadMoved', identity: fact.recipient, priority: entry.priority, by: -1 });
      active(view, fact.recipient, fact.readAt, changes);
      return changes;
    }
    case 'inboxArchived': {
      const changes = addressed(view, fact.recipient);
      const entry = view.entry(fact.recipient, fact.messageId);
      if (entry === undefined || entry.archivedAt !== null) return changes;
      changes.push({ kind: 'entryArchived', recipient: fact.recipient, messageId: fact.messageId, archivedAt: fact.archivedAt });
      if (entry.readAt === null) changes.push({ kind: 'unreadMoved', identity: fact.recipient, priority: entry.priority, by: -1 });
      return changes;
    }
    default: {
      const unexpected: never = fact;
      throw new Error(`No read model rule for fact ${(unexpected as { kind: string }).kind}`);
    }
  }
}

function addressed(view: ReadModelView, identity: string): ReadModelChange[] {
  return view.hasViews(identity) ? [] : [{ kind: 'identityHasViews', identity }];
}

function active(view: ReadModelView, identity: string, at: string, changes: ReadModelChange[]): void {
  const last = view.lastActivityAt(identity);
  if (last === null || at > last) changes.push({ kind: 'lastActivityMoved', identity, at });
}
