/**
 * The console's live flow: one line per event of the ordered log, in words an
 * operator reads (who did what to which message), and the filter it is asked
 * for (agent, thread, type). Pure: the stream that feeds it is in auditStream.ts.
 */
import { addresseeText } from '../events/addressing';
import type { StoredEvent, TaskEvent } from '../events/types';

export interface FlowEntry {
  position: string;
  type: string;
  at: string;
  /** Who caused it: an @identity, or 'admin'. */
  actor: string;
  /** Every identity the event concerns (actor, sender, recipient, subject of a registry event). */
  agents: string[];
  messageId?: string;
  threadId?: string;
  from?: string;
  to?: string;
  subject?: string;
  priority?: string;
  /** A broadcast's audience size at send time (direct: 1). */
  audienceSize?: number;
  /** The state a send's task opened in (absent: the send opens no task). */
  taskOpenedAs?: string;
  recipient?: string;
  identity?: string;
  role?: string;
  /** The messages of a seen mark (one event may mark several; the thread filter keeps it when one is in the thread). */
  messageIds?: string[];
  /** A task or delivery ledger event in words (a task's id is its message's: `messageId`). */
  detail?: string;
}

export interface FlowFilter {
  agent?: string;
  threadId?: string;
  /** Event types to keep; empty or absent: all. */
  types?: readonly string[];
}

const unique = (values: Array<string | undefined>): string[] => [...new Set(values.filter((v): v is string => !!v))];

export function flowEntryOf(event: StoredEvent): FlowEntry {
  const base = { position: event.position.toString(), type: event.type, at: event.metadata.at, actor: event.metadata.actor };
  switch (event.type) {
    case 'AgentRegistered':
      return { ...base, agents: unique([event.data.identity]), identity: event.data.identity, role: event.data.role };
    case 'AgentRetired':
    case 'AgentTokenRotated':
      return { ...base, agents: unique([event.data.identity]), identity: event.data.identity };
    case 'MessageSent': {
      const { messageId, threadId, from, to, subject, priority, recipients } = event.data;
      return {
        ...base,
        agents: unique([from, ...(typeof to === 'string' ? (to.startsWith('@') ? [to] : []) : to)]),
        messageId,
        threadId,
        from,
        to: addresseeText(to),
        subject,
        priority,
        audienceSize: recipients.length,
        // A send that opens a task reads as a plain message without it: the claim after it was the first sign.
        ...(event.data.task ? { taskOpenedAs: event.data.task.state ?? 'Submitted' } : {}),
      };
    }
    case 'BroadcastDelivered': {
      const { messageId, threadId, from, to, subject, priority, recipient } = event.data;
      return {
        ...base,
        agents: unique([from, recipient]),
        messageId,
        threadId,
        from,
        to: addresseeText(to),
        subject,
        priority,
        recipient,
      };
    }
    case 'ReceiptRead':
      return { ...base, agents: unique([event.data.reader]), messageId: event.data.messageId, recipient: event.data.reader };
    case 'MessageArchived':
    case 'MessageUnarchived': // its own row names the message too, or the console shows an unarchive of nothing
      return {
        ...base,
        agents: unique([event.data.recipient]),
        messageId: event.data.messageId,
        recipient: event.data.recipient,
      };
    case 'TaskClaimed':
    case 'TaskStateChanged':
    case 'TaskArtifactAdded':
    case 'TaskLeaseRenewed':
    case 'TaskReleased':
    case 'TaskLeaseExpired':
    case 'TaskExpired':
    case 'TaskOutcomeSeen': {
      const claimant = 'claimant' in event.data ? event.data.claimant : undefined;
      return {
        ...base,
        agents: unique([actorIdentity(base.actor), claimant]),
        messageId: event.data.taskId,
        detail: taskDetail(event, base.actor),
      };
    }
    // The delivery ledger's events (issue 13), written off the request path by the server or the heartbeat: they name
    // the agent and the message they concern, or an agent's flow never showed it woken or seeing its mail, a thread's
    // none of them, and the console's row said only the type and 'system:wake-streams'.
    case 'WakeObserved': {
      const { messageId, recipient, via, observedAt } = event.data;
      return { ...base, agents: [recipient], messageId, recipient, detail: `woken via ${via} at ${observedAt}` };
    }
    case 'MessagesSeen': {
      const { recipient, messageIds, seenAt } = event.data;
      const n = messageIds.length;
      return {
        ...base,
        agents: [recipient],
        recipient,
        messageIds,
        ...(n === 1 ? { messageId: messageIds[0] } : {}),
        detail: `saw ${n} message${n === 1 ? '' : 's'} at ${seenAt} (listed or opened, which does not mark ${n === 1 ? 'it' : 'them'} read)`,
      };
    }
    case 'WakeEscalated': {
      const { messageId, recipients, slaMs } = event.data;
      return {
        ...base,
        agents: unique(recipients),
        messageId,
        detail: `woke nobody within ${slaMs} ms: escalated; due a wake: ${recipients.join(', ') || 'nobody'} (a retired, opted-out or unregistered one is not nudged)`,
      };
    }
    case 'ReplyRequested':
      return {
        ...base,
        agents: unique([actorIdentity(base.actor)]),
        messageId: event.data.messageId,
        detail: `every recipient's reply expected by ${event.data.dueBy}`,
      };
    case 'ReplyOverdue': {
      const { messageId, sender, waitingOn, dueBy } = event.data;
      return {
        ...base,
        agents: unique([sender, ...waitingOn]),
        messageId,
        detail: `reply overdue since ${dueBy}, waiting on ${waitingOn.join(', ')}`,
      };
    }
    default: {
      // Every type has its words above; an event of a type this version does not know shows by who caused it.
      const unexpected: never = event;
      return { ...base, agents: unique([actorIdentity((unexpected as StoredEvent).metadata.actor)]) };
    }
  }
}

/**
 * The agents an entry concerns that its event does not name: a reply request names only its message, and was shown
 * under its sender alone, so an auditor following a recipient's flow (?agent=@c) never saw that a reply was asked of
 * it. It concerns the message's recipients too (its audience at send time), looked up by `recipientsOf`.
 */
export async function withConcernedAgents(
  entry: FlowEntry,
  event: StoredEvent,
  recipientsOf: (messageId: string) => Promise<readonly string[]>,
): Promise<FlowEntry> {
  if (event.type !== 'ReplyRequested') return entry;
  entry.agents = unique([...entry.agents, ...(await recipientsOf(event.data.messageId))]);
  return entry;
}

const actorIdentity = (actor: string): string | undefined => (actor.startsWith('@') ? actor : undefined);

/** What a task event did, in a few words (the actor and the task's message are beside it in the row). */
function taskDetail(event: TaskEvent, actor: string): string {
  switch (event.type) {
    case 'TaskClaimed':
      return `task claimed by ${event.data.claimant}${event.data.leaseExpiresAt ? ` (lease to ${event.data.leaseExpiresAt})` : ''}`;
    case 'TaskStateChanged': {
      const { from, to, reason, note } = event.data;
      const why = [reason && `reason: ${reason}`, note && `note: ${note}`].filter(Boolean).join('; ');
      return `task ${from} -> ${to}${why ? ` (${why})` : ''}`;
    }
    case 'TaskArtifactAdded':
      return `task artifact ${event.data.artifact.name ?? event.data.artifact.artifactId} added`;
    case 'TaskLeaseRenewed':
      return `task lease of ${event.data.claimant} renewed to ${event.data.leaseExpiresAt}`;
    case 'TaskReleased':
      // Released by someone else than its claimant: the claimant was retired (its release is the retirement's).
      return event.data.claimant === actor
        ? `task released by ${event.data.claimant} (${event.data.from} -> Submitted, claimable again)`
        : `task released from ${event.data.claimant}, who was retired (${event.data.from} -> Submitted, claimable again)`;
    case 'TaskLeaseExpired':
      return `task lease of ${event.data.claimant} lapsed (${event.data.from} -> Submitted, claimable again)`;
    case 'TaskExpired':
      return `task expired at its deadline (${event.data.from} -> ${event.data.to}, reason "expired")`;
    case 'TaskOutcomeSeen':
      return `task outcome (${event.data.state}) seen by its sender`;
  }
}

/**
 * Does the entry pass the filter? `threadOf` names the thread of a message whose
 * entry does not carry it (reads and archives): the caller looks it up.
 */
export async function passesFilter(
  entry: FlowEntry,
  filter: FlowFilter,
  threadOf: (messageId: string) => Promise<string | null>,
): Promise<boolean> {
  if (filter.types?.length && !filter.types.includes(entry.type)) return false;
  if (filter.agent !== undefined && !entry.agents.includes(filter.agent)) return false;
  if (filter.threadId !== undefined) {
    // A seen mark of several messages is in the thread when one of them is.
    const messageIds = entry.messageIds ?? (entry.messageId === undefined ? [] : [entry.messageId]);
    let thread: string | null = entry.threadId ?? null;
    for (const messageId of thread === null ? messageIds : []) {
      thread = await threadOf(messageId);
      if (thread === filter.threadId) break;
    }
    if (thread !== filter.threadId) return false;
    entry.threadId = thread;
  }
  return true;
}
