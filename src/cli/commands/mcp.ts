/**
 * `mailbox mcp`: an MCP server on stdio for clients that only speak stdio. Its
 * tools proxy to a mailbox server's HTTP API with the agent's token, so the
 * answers and errors are the server's own. stdout carries the protocol only.
 */
import type { Command } from 'commander';
import { action, withClientOptions, type ClientOptions } from './clientOptions';
import { MailboxError } from '../../errors';
import { runStdioMcp } from '../../stdioMcp';

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
