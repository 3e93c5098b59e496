/**
 * `mailbox mcp`: an MCP server on stdio for clients that only speak stdio. Its
 * tools proxy to a mailbox server's HTTP API with the agent's token, so the
 * answers and errors are the server's own. stdout carries the protocol only.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import { Option, type Command } from 'commander';
import { MailboxHttpClient } from '../../adapters/http/client/mailboxHttpClient';
import { McpServerFactory } from '../../adapters/mcp/mcpServer';
import type { AgentApi } from '../../adapters/mcp/agentApi';
import { action, DEFAULT_URL, type ClientOptions } from './clientOptions';
import { MailboxError } from '../../errors';

const NO_TOKEN_MESSAGE = 'mailbox mcp has no agent token: set MAILBOX_TOKEN in the MCP client\'s "env" for this server ' +
  '(or pass --token); an admin gets one with `mailbox agent add @<identity>`.';

/**
 * Without a token the server still speaks MCP (a client that gets no answer to `initialize` only
 * says "disconnected"): it lists the tools and answers every call with the UNAUTHENTICATED envelope.
 */
export function unauthenticatedAgentApi(): AgentApi {
  const refuse = async (): Promise<never> => {
    throw new MailboxError('UNAUTHENTICATED', 'Unauthenticated', NO_TOKEN_MESSAGE, { hint: 'MAILBOX_TOKEN=mbx_...' });
  };
  return { send: refuse, listMessages: refuse, getMessage: refuse, markRead: refuse, archive: refuse, listAgents: refuse, unreadCount: refuse };
}

/** Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). No token: every tool call is refused. */
export async function runStdioMcp(url: string, token: string | undefined, streams: { stdin?: Readable; stdout?: Writable } = {}) {
  const factory = new McpServerFactory((error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`));
  const server = factory.create(token ? new MailboxHttpClient(url, token) : unauthenticatedAgentApi());
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  await server.connect(transport);
  return server;
}

export function registerMcpCommand(program: Command): void {
  // No --json: stdout carries the MCP protocol only.
  program.command('mcp')
    .addOption(new Option('--url <url>', 'mailbox server URL').env('MAILBOX_URL').default(DEFAULT_URL))
    .addOption(new Option('--token <token>', 'the agent\'s bearer token').env('MAILBOX_TOKEN'))
    .description('run an MCP server on stdio that talks to a mailbox server (for stdio-only MCP clients)')
    .addHelpText('after', '\nExample client configuration:\n' +
      '  {"command": "mailbox", "args": ["mcp"], "env": {"MAILBOX_URL": "http://127.0.0.1:7420", "MAILBOX_TOKEN": "mbx_..."}}')
    .action(action(async (options: ClientOptions) => {
      const server = await runStdioMcp(options.url, options.token);
      process.stderr.write(options.token ? `mailbox mcp: serving MCP on stdio for ${options.url}\n`
        : `mailbox mcp: ${NO_TOKEN_MESSAGE} Serving MCP anyway: every tool call answers UNAUTHENTICATED.\n`);
      await new Promise<void>((resolve) => {
        server.onclose = resolve;
        process.stdin.once('end', resolve);
      });
    }));
}
