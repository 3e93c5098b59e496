/** Human-readable lines for the client commands (--json prints the API's objects instead). */
import type { MessageDetail } from '../../application/mailboxQueries';
import type { ClientWakeEvent } from '../../adapters/http/client/mailboxHttpClient';
import type { AgentView, ListedMessage, MessagePage } from '../../projections/projectionStore';
import { addresseeText } from '../../events/addressing';
import { oneLine, textBlock } from '../../support/terminalText';

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-');
const flag = (priority: string) => (priority === 'normal' ? '' : `[${priority}] `);

export function formatAgents(agents: AgentView[]): string {
  if (agents.length === 0) return 'no agents registered yet (mailbox agent add @name)';
  return agents
    .map(
      (a) =>
        `${a.identity.padEnd(24)} ${a.role.padEnd(8)} registered ${when(a.registeredAt)}` +
        `${a.retired ? `  retired ${when(a.retiredAt)}` : ''}`,
    )
    .join('\n');
}

const messageLine = (m: ListedMessage, outbox: boolean) =>
  `${outbox || m.readAt ? ' ' : '*'} ${when(m.sentAt)}  ${m.from} -> ${addresseeText(m.to)}  ${flag(m.priority)}${oneLine(m.subject)}  (${m.messageId})`;

/**
 * Inbox lines start with * when unread; the outbox has no read state of its own (receipts: mailbox read <id>).
 * `filtered`: the count is the whole inbox's, not the list's; said so, it read as the list's ("2 unread" above
 * "(no messages match)").
 */
export function formatPage(page: MessagePage, outbox = false, filtered = false): string {
  const header = outbox
    ? `sent messages (your inbox: ${page.unreadCount} unread)`
    : `${page.unreadCount} unread${filtered ? ' in your whole inbox (the list below is filtered)' : ''}`;
  const lines = [header, ...page.messages.map((m) => messageLine(m, outbox))];
  if (page.messages.length === 0) lines.push('(no messages match)');
  if (page.nextCursor) lines.push(`more: --cursor ${page.nextCursor}`);
  return lines.join('\n');
}

export function formatMessage(m: MessageDetail): string {
  const header = [
    `message  ${m.messageId}`,
    `from     ${m.from}`,
    `to       ${addresseeText(m.to)}`,
    `subject  ${oneLine(m.subject)}`,
    `sent     ${when(m.sentAt)}   priority ${m.priority}   thread ${oneLine(m.threadId)}`,
    // Your own copy's read state (a sender's or auditor's view has every recipient's, in receipts): `mailbox read <id>`
    // and `mailbox read <id> --peek` printed the same text, so nothing said whether it was marked read.
    ...(m.receipts ? [] : [`read     ${m.readAt ? when(m.readAt) : 'no: still unread'}`]),
    ...(m.inReplyTo ? [`reply to ${m.inReplyTo}`] : []),
    ...(m.tags.length ? [`tags     ${m.tags.map(oneLine).join(', ')}`] : []),
    ...(m.task ? [`task     ${oneLine(JSON.stringify(m.task))}`] : []),
    ...(m.receipts
      ? [`receipts ${m.receipts.map((r) => `${r.recipient} ${r.readAt ? `read ${when(r.readAt)}` : 'unread'}`).join(', ')}`]
      : []),
  ];
  return `${header.join('\n')}\n\n${textBlock(m.body)}\n`;
}

export function formatWakeEvent(event: ClientWakeEvent): string {
  switch (event.event) {
    case 'sync':
      return `sync: ${event.data.unreadCount} unread (high ${event.data.byPriority.high}, normal ${event.data.byPriority.normal}, low ${event.data.byPriority.low})`;
    case 'wake': {
      const w = event.data;
      if (w.type === 'wake/task')
        return `task: ${w.taskId} ${w.state} (${w.event} by ${w.by})  ${flag(w.priority)}${oneLine(w.subject)}`;
      if (w.type === 'wake/reply-overdue')
        return `reply overdue: ${w.messageId} (due ${w.dueBy}), waiting on ${w.waitingOn.join(', ')}`;
      return `wake: ${w.from} -> ${addresseeText(w.to)}  ${flag(w.priority)}${oneLine(w.subject)}  (${w.messageId})  ${w.unreadCount} unread`;
    }
    case 'shutdown':
      return `server closed the stream: ${event.data.reason}`;
    case 'revoked':
      return `stream revoked: ${event.data.reason} (this token no longer works)`;
  }
}
