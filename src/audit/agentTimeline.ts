/**
 * `audit agent <identity>`: what one agent did and what happened to it, from
 * the log — registered, sent, received, read, archived, retired, its task acts — plus who
 * read the messages it sent and what others did to the tasks it held or sent. Pure: feed it the log in order.
 */
import { addresseeText, namesRecipient } from '../events/addressing';
import type { StoredEvent } from '../events/types';
import { taskEventWords } from './taskEventText';
import { oneLine, quoted } from '../support/terminalText';

export type TimelineKind =
  | 'registered'
  | 'retired'
  | 'token_rotated'
  | 'sent'
  | 'received'
  | 'read'
  | 'archived'
  | 'unarchived'
  | 'seen'
  | 'read_by_recipient'
  | 'task'
  | 'woken'
  | 'reply_requested'
  | 'reply_overdue';

export interface TimelineEntry {
  position: string;
  at: string;
  kind: TimelineKind;
  messageId: string | null;
  /**
   * The other party: recipient(s) for sent, sender for received, reader for read_by_recipient, who retired it or gave
   * it a new token, who did it for a task event the agent did not do (null for its own); for a reply asked of the
   * agent or overdue from it, the message's sender; for one it asked, null (requested) or who has not answered (overdue).
   */
  counterpart: string | null;
  /**
   * The message's subject. For a woken, task, reply_requested or reply_overdue entry, the subject of the message or
   * task, when this agent sent or received it (null otherwise); null for registered. It held this tool's words (the
   * role; "via stream"; "task <id> claimed by @b"; "@a expects a reply by <time>"), which are in `detail` now.
   */
  subject: string | null;
  /**
   * This tool's words for what happened: the role, for registered; how the wake came, for woken (`via stream`); what
   * befell the task, by whom, for task (`claimed by @b`, without its id, which is `messageId`); the reply asked or
   * overdue, for reply_requested and reply_overdue (`@a expects a reply by <time>`). Null for the other kinds.
   */
  detail: string | null;
}

/** An entry as a rule draws it: `detail` only where the kind has this tool's words. */
type Drafted = Omit<TimelineEntry, 'detail'> & { detail?: string };

/** Remembers the agent's own messages so that later receipts on them can be shown. */
export class AgentTimeline {
  private readonly sent = new Map<string, string>(); // messageId -> subject
  private readonly received = new Map<string, { from: string; subject: string }>(); // messageId -> its sender and subject
  /** The tasks the agent holds now: a direct task sent to it, or one it claimed and still holds. */
  private readonly holding = new Set<string>();

  constructor(readonly identity: string) {}

  /** The entries this event adds to the agent's timeline (usually none). */
  entriesFor(event: StoredEvent): TimelineEntry[] {
    // `detail` last, null unless the kind has words of this tool's.
    return this.entriesOf(event).map((entry) => ({ ...entry, detail: entry.detail ?? null }));
  }

  private entriesOf(event: StoredEvent): Drafted[] {
    const base = { position: event.position.toString(), at: event.metadata.at };
    const me = this.identity;
    switch (event.type) {
      case 'AgentRegistered':
        return event.data.identity === me
          ? [{ ...base, kind: 'registered', messageId: null, counterpart: null, subject: null, detail: event.data.role }]
          : [];
      // Who retired it or gave it a new token (the admin): the line said only "retired", with nothing after it.
      case 'AgentRetired':
        return event.data.identity === me
          ? [{ ...base, kind: 'retired', messageId: null, counterpart: event.metadata.actor, subject: null }]
          : [];
      case 'AgentTokenRotated':
        return event.data.identity === me
          ? [{ ...base, kind: 'token_rotated', messageId: null, counterpart: event.metadata.actor, subject: null }]
          : [];
      case 'MessageSent': {
        const d = event.data;
        const entries: Drafted[] = [];
        if (d.from === me) {
          this.sent.set(d.messageId, d.subject);
          entries.push({ ...base, kind: 'sent', messageId: d.messageId, counterpart: addresseeText(d.to), subject: d.subject });
        }
        if (namesRecipient(d.to, me)) {
          this.received.set(d.messageId, { from: d.from, subject: d.subject });
          entries.push({ ...base, kind: 'received', messageId: d.messageId, counterpart: d.from, subject: d.subject });
        }
        if (d.task !== undefined && d.task !== null && d.to === me) this.holding.add(d.messageId); // a direct task's holder
        return entries;
      }
      case 'BroadcastDelivered':
        if (event.data.recipient === me)
          this.received.set(event.data.messageId, { from: event.data.from, subject: event.data.subject });
        return event.data.recipient === me
          ? [
              {
                ...base,
                kind: 'received',
                messageId: event.data.messageId,
                counterpart: event.data.from,
                subject: event.data.subject,
              },
            ]
          : [];
      case 'ReceiptRead': {
        const d = event.data;
        if (d.reader === me) return [{ ...base, kind: 'read', messageId: d.messageId, counterpart: null, subject: null }];
        const subject = this.sent.get(d.messageId);
        return subject === undefined
          ? []
          : [{ ...base, kind: 'read_by_recipient', messageId: d.messageId, counterpart: d.reader, subject }];
      }
      case 'MessageArchived':
        return event.data.recipient === me
          ? [{ ...base, kind: 'archived', messageId: event.data.messageId, counterpart: null, subject: null }]
          : [];
      // Wakes and seen marks are written off the request path, in batches (up to MAILBOX_SEEN_FLUSH_MS later, more
      // after an outage): the time is the one the event records, as the delivery ledger shows it, not the batch's.
      case 'WakeObserved':
        return event.data.recipient === me
          ? [
              {
                ...base,
                at: event.data.observedAt,
                kind: 'woken',
                messageId: event.data.messageId,
                counterpart: null,
                subject: this.subjectOf(event.data.messageId),
                detail: `via ${event.data.via}`,
              },
            ]
          : [];
      // A reply asked of the agent, or by it, and one overdue: the timeline showed neither, so an auditor following the
      // agent never saw that a reply was owed (the events name the message, not its recipients).
      case 'ReplyRequested': {
        const { messageId, dueBy } = event.data;
        const sender = this.received.get(messageId)?.from;
        const subject = this.subjectOf(messageId);
        if (this.sent.has(messageId))
          return [
            { ...base, kind: 'reply_requested', messageId, counterpart: null, subject, detail: `asked for replies by ${dueBy}` },
          ];
        return sender === undefined
          ? []
          : [
              {
                ...base,
                kind: 'reply_requested',
                messageId,
                counterpart: sender,
                subject,
                detail: `${sender} expects a reply by ${dueBy}`,
              },
            ];
      }
      case 'ReplyOverdue': {
        const { messageId, sender, waitingOn, dueBy } = event.data;
        const entries: Drafted[] = [];
        const subject = this.subjectOf(messageId);
        if (sender === me)
          entries.push({
            ...base,
            kind: 'reply_overdue',
            messageId,
            counterpart: waitingOn.join(', '),
            subject,
            detail: `replies overdue since ${dueBy}, waiting on ${waitingOn.join(', ')}`,
          });
        if (waitingOn.includes(me))
          entries.push({
            ...base,
            kind: 'reply_overdue',
            messageId,
            counterpart: sender,
            subject,
            detail: `reply to ${sender} overdue since ${dueBy}`,
          });
        return entries;
      }
      case 'WakeEscalated':
        return []; // the heartbeat's act, not the agent's (the nudge it led to is in the delivery ledger)
      case 'MessagesSeen':
        return event.data.recipient === me
          ? event.data.messageIds.map((messageId) => ({
              ...base,
              at: event.data.seenAt,
              kind: 'seen' as const,
              messageId,
              counterpart: null,
              subject: null,
            }))
          : [];
      case 'MessageUnarchived':
        return event.data.recipient === me
          ? [{ ...base, kind: 'unarchived', messageId: event.data.messageId, counterpart: null, subject: null }]
          : [];
      case 'TaskClaimed':
      case 'TaskStateChanged':
      case 'TaskArtifactAdded':
      case 'TaskLeaseRenewed':
      case 'TaskReleased':
      case 'TaskLeaseExpired':
      case 'TaskExpired':
      case 'TaskOutcomeSeen': {
        // What the agent did to a task, and what others did to a task it holds (moved or canceled by its sender or by a
        // retirement, its claim released when it was retired, its lease lapsed, expired) or sent (claimed, moved,
        // released, lapsed, expired): they name who did it and why.
        const actor = event.metadata.actor;
        const { taskId } = event.data;
        const endsClaim = (event.type === 'TaskReleased' || event.type === 'TaskLeaseExpired') && event.data.claimant === me;
        const held = this.holding.has(taskId) || endsClaim;
        if (event.type === 'TaskClaimed' && event.data.claimant === me) this.holding.add(taskId);
        if (endsClaim) this.holding.delete(taskId);
        if (actor !== me && !held && !this.sent.has(taskId)) return [];
        const counterpart = actor === me ? null : actor;
        const detail = taskEventWords(event, actor);
        return [{ ...base, kind: 'task', messageId: taskId, counterpart, subject: this.subjectOf(taskId), detail }];
      }
      default: {
        const unexpected: never = event;
        throw new Error(`No timeline rule for ${(unexpected as StoredEvent).type}`);
      }
    }
  }

  /** The subject of a message (or task) the agent sent or received, as its timeline saw it; null for another. */
  private subjectOf(messageId: string): string | null {
    return this.sent.get(messageId) ?? this.received.get(messageId)?.subject ?? null;
  }
}

const VERB: Record<TimelineKind, string> = {
  registered: 'registered as',
  retired: 'retired by',
  token_rotated: 'got a new token from',
  sent: 'sent to',
  received: 'received from',
  read: 'read',
  archived: 'archived',
  unarchived: 'unarchived',
  seen: 'saw (listed or opened, which does not mark it read)',
  read_by_recipient: 'was read by',
  task: 'task:',
  woken: 'was woken for',
  reply_requested: 'reply asked by',
  reply_overdue: 'reply overdue',
};

/**
 * One timeline line. `positionWidth`: the digits of the widest position in the listing (the log head's, or the
 * widest shown), so that the columns after it stay aligned once positions reach more digits (#9 beside #10).
 */
export function formatTimelineEntry(entry: TimelineEntry, positionWidth = 0): string {
  const parts = [`#${entry.position}`.padEnd(positionWidth + 1), entry.at, entry.kind.padEnd(17)];
  if (entry.kind === 'registered') return [...parts, `${VERB.registered} ${entry.detail}`].join('  ');
  else if ((entry.kind === 'retired' || entry.kind === 'token_rotated') && entry.counterpart !== null)
    parts.push(`${VERB[entry.kind]} ${entry.counterpart}`);
  else if (entry.kind === 'reply_requested' || entry.kind === 'reply_overdue')
    return [...parts, `message ${entry.messageId}`, entry.detail].join('  '); // its words name who, and when
  else if (entry.kind === 'read_by_recipient')
    parts.push(`message ${entry.messageId} ${VERB.read_by_recipient} ${entry.counterpart}`);
  else if (entry.messageId !== null) {
    parts.push(`message ${entry.messageId}`);
    // A task event's words name who did it.
    if (entry.counterpart !== null && entry.kind !== 'task') parts.push(`${VERB[entry.kind]} ${entry.counterpart}`);
  }
  // How the wake came, what befell the task (the task once: its id is the message's): this tool's words, said as
  // words. Quoted, they read as a subject ("via stream"), and a task's reason, quoted within, came out escaped.
  if (entry.detail !== null) parts.push(oneLine(entry.detail));
  else if (entry.subject !== null) parts.push(quoted(entry.subject));
  return parts.join('  ');
}
