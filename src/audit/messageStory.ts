/**
 * `audit message <id>`: one message's whole story told from its own stream's
 * events only — who sent it, the audience snapshot, and per recipient when it
 * was delivered, read and archived (with the log positions that prove it).
 * Anything in the stream that contradicts the story is listed, never hidden.
 */
import { isBroadcastAddress, namedRecipients } from '../events/addressing';
import type { MessageSent, StoredEvent, TaskEvent } from '../events/types';
import { describeTaskEvent, isTaskEvent } from './taskEventText';
import { oneLine, quoted } from '../support/terminalText';

export interface RecipientStory {
  identity: string;
  deliveredAt: string | null;
  deliveredPosition: string | null;
  readAt: string | null;
  readPosition: string | null;
  archivedAt: string | null;
  archivedPosition: string | null;
  archivedUnread: boolean | null;
  /**
   * Each archive the recipient undid, in log order: when it archived the message and when it brought it back
   * (MessageUnarchived). The fields above tell where the message is now; these keep what the log says happened before.
   */
  unarchived: Array<{ archivedAt: string; archivedPosition: string; unarchivedAt: string; unarchivedPosition: string }>;
}

export interface MessageStory {
  messageId: string;
  streamName: string;
  /** Every event the story is told from: its stream's and its task stream's. */
  events: number;
  /** The streams those events are in (the message's, then its task's when it has one), each with its count. */
  streams: Array<{ streamName: string; events: number }>;
  sent: Omit<MessageSent['data'], 'body' | 'task' | 'requestHash' | 'recipients'> & {
    position: string;
    actor: string;
    commandId: string;
    correlationId: string;
    isBroadcast: boolean;
    bodyBytes: number;
  };
  /** The audience snapshot recorded at send time (direct: the one recipient). */
  audience: string[];
  recipients: RecipientStory[];
  /** When the sender expects the recipients' replies (`expectsReplyBy`, its ReplyRequested), or null. */
  replyDueBy: string | null;
  /** The task the message carried and every change to it (its own stream), or null when it carried none. */
  task: {
    openedAs: string;
    changes: Array<{ position: string; at: string; actor: string; event: TaskEvent['type']; text: string }>;
  } | null;
  anomalies: string[];
}

const blank = (identity: string): RecipientStory => ({
  identity,
  deliveredAt: null,
  deliveredPosition: null,
  readAt: null,
  readPosition: null,
  archivedAt: null,
  archivedPosition: null,
  archivedUnread: null,
  unarchived: [],
});

/** Null when the stream holds no MessageSent (no such message). */
export function messageStory(events: readonly StoredEvent[]): MessageStory | null {
  const sentEvent = events.find((event) => event.type === 'MessageSent');
  if (!sentEvent || sentEvent.type !== 'MessageSent') return null;
  const { body, task: _task, requestHash: _hash, recipients: audience, ...summary } = sentEvent.data;
  const isBroadcast = isBroadcastAddress(summary.to);

  const recipients = new Map(audience.map((identity) => [identity, blank(identity)]));
  const anomalies: string[] = [];
  let replyDueBy: string | null = null;
  const task: MessageStory['task'] = sentEvent.data.task
    ? { openedAs: sentEvent.data.task.state ?? 'Submitted', changes: [] }
    : null;
  const recipient = (identity: string, what: string, position: bigint): RecipientStory => {
    let story = recipients.get(identity);
    if (!story) {
      anomalies.push(`${what} for ${identity} at position ${position}, who is not in the audience`);
      recipients.set(identity, (story = blank(identity)));
    }
    return story;
  };
  for (const named of namedRecipients(summary.to)) {
    const story = recipient(named, 'direct delivery', sentEvent.position);
    story.deliveredAt = summary.sentAt;
    story.deliveredPosition = sentEvent.position.toString();
  }
  for (const event of events) {
    switch (event.type) {
      case 'MessageSent':
        if (event !== sentEvent) anomalies.push(`a second MessageSent at position ${event.position}`);
        break;
      case 'BroadcastDelivered': {
        const story = recipient(event.data.recipient, 'a delivery', event.position);
        story.deliveredAt = event.data.deliveredAt;
        story.deliveredPosition = event.position.toString();
        break;
      }
      case 'ReceiptRead': {
        const story = recipient(event.data.reader, 'a read receipt', event.position);
        if (story.readAt !== null) anomalies.push(`a second read by ${event.data.reader} at position ${event.position}`);
        else Object.assign(story, { readAt: event.data.readAt, readPosition: event.position.toString() });
        break;
      }
      case 'MessageArchived': {
        const story = recipient(event.data.recipient, 'an archive', event.position);
        Object.assign(story, {
          archivedAt: event.data.archivedAt,
          archivedPosition: event.position.toString(),
          archivedUnread: event.data.wasUnread,
        });
        break;
      }
      case 'MessageUnarchived': {
        // Where the message is now: back in the inbox (the archive fields cleared); the archive it undid is kept in
        // `unarchived`, so that the story still tells it (it showed "-", as if the recipient had never archived it).
        const story = recipient(event.data.recipient, 'an unarchive', event.position);
        if (story.archivedAt === null || story.archivedPosition === null)
          anomalies.push(
            `an unarchive by ${event.data.recipient} at position ${event.position} of a message it had not archived`,
          );
        else
          story.unarchived.push({
            archivedAt: story.archivedAt,
            archivedPosition: story.archivedPosition,
            unarchivedAt: event.data.unarchivedAt,
            unarchivedPosition: event.position.toString(),
          });
        Object.assign(story, { archivedAt: null, archivedPosition: null, archivedUnread: null });
        break;
      }
      case 'ReplyRequested':
        // Written beside the MessageSent by a send with expectsReplyBy: once.
        if (replyDueBy !== null) anomalies.push(`a second ReplyRequested at position ${event.position}`);
        else replyDueBy = event.data.dueBy;
        break;
      default:
        if (isTaskEvent(event) && task) {
          const text = describeTaskEvent(event as unknown as TaskEvent, event.metadata.actor);
          const change = { position: event.position.toString(), at: event.metadata.at, actor: event.metadata.actor, text };
          task.changes.push({ ...change, event: event.type as TaskEvent['type'] });
        } else anomalies.push(`unexpected ${event.type} at position ${event.position}`);
    }
  }
  for (const identity of audience) {
    if (recipients.get(identity)!.deliveredAt === null)
      anomalies.push(`${identity} is in the audience but has no delivery event`);
  }
  const streams: MessageStory['streams'] = [];
  for (const event of events) {
    const stream = streams.find((known) => known.streamName === event.streamName);
    if (stream) stream.events++;
    else streams.push({ streamName: event.streamName, events: 1 });
  }
  return {
    messageId: summary.messageId,
    streamName: sentEvent.streamName,
    events: events.length,
    streams,
    sent: {
      ...summary,
      position: sentEvent.position.toString(),
      actor: sentEvent.metadata.actor,
      commandId: sentEvent.metadata.commandId,
      correlationId: sentEvent.metadata.correlationId,
      isBroadcast,
      bodyBytes: Buffer.byteLength(body),
    },
    audience: [...audience],
    recipients: [...recipients.values()],
    replyDueBy,
    task,
    anomalies,
  };
}

/**
 * Rows of cells as lines whose columns start at the same place, two spaces apart (the recipient table was joined
 * by tabs, which a terminal sets at multiples of 8: the header and the rows never lined up).
 */
function alignedColumns(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
}

export function formatMessageStory(story: MessageStory): string {
  const s = story.sent;
  const cell = (at: string | null, position: string | null) => (at === null ? '-' : `${at} (#${position})`);
  // Each stream with its own count: the task's events were counted as the message stream's ("stream <message>, 3
  // events" for a stream that holds one).
  const streams = story.streams.map((part) => `stream ${part.streamName}, ${part.events} event${part.events === 1 ? '' : 's'}`);
  const lines = [
    `message ${story.messageId}  (${streams.join('; ')})`,
    `sent      ${s.sentAt} by ${s.from} to ${s.to}${s.isBroadcast ? ' (broadcast)' : ''}  (#${s.position})`,
    `subject   ${quoted(s.subject)}  priority ${s.priority}  thread ${oneLine(s.threadId)}` +
      `${s.inReplyTo ? `  in reply to ${s.inReplyTo}` : ''}${s.tags.length ? `  tags ${s.tags.map(oneLine).join(',')}` : ''}`,
    `audience  ${story.audience.length} recipient${story.audience.length === 1 ? '' : 's'}: ${story.audience.join(', ') || '(none)'}`,
    ...(story.replyDueBy ? [`replies   due by ${story.replyDueBy}`] : []),
    '',
    ...alignedColumns([
      ['recipient', 'delivered', 'read', 'archived'],
      ...story.recipients.map((r) => [
        r.identity,
        cell(r.deliveredAt, r.deliveredPosition),
        r.readAt === null ? 'unread' : cell(r.readAt, r.readPosition),
        cell(r.archivedAt, r.archivedPosition),
      ]),
    ]),
    // An archive undone leaves no mark in the table (it tells where the message is now): each is told under it.
    ...story.recipients.flatMap((r) =>
      r.unarchived.map(
        (u) =>
          `${r.identity} archived it ${u.archivedAt} (#${u.archivedPosition}), unarchived ${u.unarchivedAt} (#${u.unarchivedPosition})`,
      ),
    ),
  ];
  if (story.task) {
    lines.push('', `task      opened as ${story.task.openedAs}${story.task.changes.length ? '' : ', unchanged since'}`);
    for (const change of story.task.changes)
      lines.push(`  #${change.position}  ${change.at}  ${change.text}  [by ${change.actor}]`);
  }
  if (story.anomalies.length > 0)
    lines.push('', 'ANOMALIES (the log contradicts itself here):', ...story.anomalies.map((a) => `  ${a}`));
  return lines.join('\n');
}
