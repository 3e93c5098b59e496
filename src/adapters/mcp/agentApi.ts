/**
 * What an agent can do, as the MCP tools see it. Two implementations: in this
 * process (POST /mcp, on the library layer) and over HTTP (`mailbox mcp`, stdio).
 * Inputs are passed through unparsed: the command layer validates them.
 */
import type { SendResult, ReadResult, BulkReadResult, ArchiveResult } from '../../application/mailboxCommands';
import type { InboxCount, MessageDetail } from '../../application/mailboxQueries';
import type { Actor } from '../../commands/roles';
import type { Mailbox } from '../../mailbox';
import type { AgentView, MessagePage } from '../../projections/projectionStore';
import type { MailboxMetrics } from '../http/metrics';

export interface AgentApi {
  send(input: unknown): Promise<SendResult>;
  listMessages(query: unknown): Promise<MessagePage>;
  getMessage(messageId: string): Promise<MessageDetail>;
  markRead(input: unknown): Promise<ReadResult | BulkReadResult>;
  archive(messageId: string): Promise<ArchiveResult>;
  listAgents(): Promise<{ agents: AgentView[] }>;
  unreadCount(): Promise<InboxCount>;
}

export function inProcessAgentApi(mailbox: Mailbox, actor: Actor, metrics: MailboxMetrics, onSent?: (result: SendResult) => void): AgentApi {
  const { commands, queries } = mailbox;
  return {
    send: async (input) => {
      const sent = await metrics.command('send', 'mcp', () => commands.send(actor, input));
      onSent?.(sent);
      return sent;
    },
    listMessages: (query) => queries.listMessages(actor, query),
    getMessage: (messageId) => queries.getMessage(actor, { messageId }),
    markRead: (input) => metrics.command('mark_read', 'mcp', () => commands.markRead(actor, input)),
    archive: (messageId) => metrics.command('archive', 'mcp', () => commands.archive(actor, { messageId })),
    listAgents: () => queries.listAgents(),
    unreadCount: () => queries.unreadCount(actor),
  };
}
