/**
 * `mailbox mcp`: an MCP server on stdio for clients that only speak stdio. Its
 * tools proxy to a mailbox server's HTTP API with the agent's token, so the
 * answers and errors are the server's own. stdout carries the protocol only.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { MailboxHttpClient } from '../../adapters/http/client/mailboxHttpClient';
import { McpServerFactory } from '../../adapters/mcp/mcpServer';
import { action, withClientOptions, type ClientOptions } from './clientOptions';
import { MailboxError } from '../../errors';

/** Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). */
export async function runStdioMcp(url: string, token: string, streams: { stdin?: Readable; stdout?: Writable } = {}) {
  const factory = new McpServerFactory((error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`));
  const server = factory.create(new MailboxHttpClient(url, token));
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  await server.connect(transport);
  return server;
}

export function registerMcpCommand(program: Command): void {
  withClientOptions(program.command('mcp'))
    .description('run an MCP server on stdio that talks to a mailbox server (for stdio-only MCP clients)')
    .addHelpText('after', '\nExample client configuration:\n' +
      '  {"command": "mailbox", "args": ["mcp"], "env": {"MAILBOX_URL": "http://127.0.0.1:7420", "MAILBOX_TOKEN": "mbx_..."}}')
    .action(action(async (options: ClientOptions) => {
      if (!options.token) {
        throw new MailboxError('UNAUTHENTICATED', 'Unauthenticated', 'mailbox mcp needs an agent token: --token <token> or MAILBOX_TOKEN.');
      }
      const server = await runStdioMcp(options.url, options.token);
      process.stderr.write(`mailbox mcp: serving MCP on stdio for ${options.url}\n`);
      await new Promise<void>((resolve) => {
        server.onclose = resolve;
        process.stdin.once('end', resolve);
      });
    }));
}
