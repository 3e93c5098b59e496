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
import { isMailboxError, MailboxError } from './errors';

const NO_TOKEN_MESSAGE =
  'mailbox mcp has no agent token: set MAILBOX_TOKEN in the MCP client\'s "env" for this server ' +
  '(or pass --token); an admin gets one with `mailbox agent add @<identity>`.';

/**
 * What keeps this server from calling the mailbox at all: a URL that is not http(s) (`127.0.0.1:7420` without
 * its scheme is the usual one), or no token. Null when it can call it.
 */
export function stdioRefusal(url: string, token: string | undefined): MailboxError | null {
  try {
    new MailboxHttpClient(url, token); // refuses a URL that is not http(s), at once
  } catch (error) {
    if (isMailboxError(error)) return error;
    throw error;
  }
  return token
    ? null
    : new MailboxError('UNAUTHENTICATED', 'Unauthenticated', NO_TOKEN_MESSAGE, { hint: 'MAILBOX_TOKEN=mbx_...' });
}

/**
 * Refused, the server still speaks MCP (a client whose server exits before `initialize` only says
 * "disconnected", and its user never sees our stderr): it lists the tools and answers every call with the
 * envelope that says what to fix in the client's configuration.
 */
export function refusingAgentApi(refusal: MailboxError): AgentApi {
  const refuse = async (): Promise<never> => {
    throw refusal;
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

/** Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). Refused (stdioRefusal): every tool call says why. */
export async function runStdioMcp(url: string, token: string | undefined, streams: { stdin?: Readable; stdout?: Writable } = {}) {
  const factory = new McpServerFactory((error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`));
  const refusal = stdioRefusal(url, token);
  const server = factory.create(refusal ? refusingAgentApi(refusal) : new MailboxHttpClient(url, token));
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  await server.connect(transport);
  return server;
}
