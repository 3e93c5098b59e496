/**
 * `mailbox mcp`'s composition: an MCP server on stdio whose tools proxy to a
 * mailbox server's HTTP API with the agent's token, so the answers and errors
 * are the server's own. The two adapters meet only here.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import { MailboxHttpClient } from './adapters/http/client/mailboxHttpClient';
import { McpServerFactory } from './adapters/mcp/mcpServer';
import type { AgentApi } from './application/agentApi';
import { MailboxError } from './errors';

export const NO_TOKEN_MESSAGE =
  'mailbox mcp has no agent token: set MAILBOX_TOKEN in the MCP client\'s "env" for this server ' +
  '(or pass --token); an admin gets one with `mailbox agent add @<identity>`.';

/**
 * Without a token the server still speaks MCP (a client that gets no answer to `initialize` only
 * says "disconnected"): it lists the tools and answers every call with the UNAUTHENTICATED envelope.
 */
export function unauthenticatedAgentApi(): AgentApi {
  const refuse = async (): Promise<never> => {
    throw new MailboxError('UNAUTHENTICATED', 'Unauthenticated', NO_TOKEN_MESSAGE, { hint: 'MAILBOX_TOKEN=mbx_...' });
  };
  return {
    send: refuse,
    listMessages: refuse,
    getMessage: refuse,
    getDelivery: refuse,
    markRead: refuse,
    archive: refuse,
    unarchive: refuse,
    listAgents: refuse,
    unreadCount: refuse,
    claimTask: refuse,
    updateTask: refuse,
    listTasks: refuse,
    getTask: refuse,
  };
}

/** Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). No token: every tool call is refused. */
export async function runStdioMcp(url: string, token: string | undefined, streams: { stdin?: Readable; stdout?: Writable } = {}) {
  const factory = new McpServerFactory((error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`));
  const server = factory.create(token ? new MailboxHttpClient(url, token) : unauthenticatedAgentApi());
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  await server.connect(transport);
  return server;
}
