/**
 * `mailbox mcp`: an MCP server on stdio for clients that only speak stdio. Its
 * tools proxy to a mailbox server's HTTP API with the agent's token, so the
 * answers and errors are the server's own. stdout carries the protocol only.
 */
import { Option, type Command } from 'commander';
import { action, DEFAULT_URL, type ClientOptions } from './clientOptions';

export function registerMcpCommand(program: Command): void {
  // No --json: stdout carries the MCP protocol only.
  program
    .command('mcp')
    .addOption(new Option('--url <url>', 'mailbox server URL').env('MAILBOX_URL').default(DEFAULT_URL))
    .addOption(new Option('--token <token>', "the agent's bearer token").env('MAILBOX_TOKEN'))
    .description('run an MCP server on stdio that talks to a mailbox server (for stdio-only MCP clients)')
    .addHelpText(
      'after',
      '\nExample client configuration:\n' +
        '  {"command": "mailbox", "args": ["mcp"], "env": {"MAILBOX_URL": "http://127.0.0.1:7420", "MAILBOX_TOKEN": "mbx_..."}}',
    )
    .action(
      action(async (options: ClientOptions) => {
        const { checkServer, runStdioMcp, startLine } = await import('../../stdioMcp'); // the MCP SDK: loaded by this command only
        // One GET /v1/whoami: whom the server takes the token for (the start line) and its limits (the tools' schemas).
        const check = checkServer(options.url, options.token);
        const server = await runStdioMcp(options.url, options.token, {}, check);
        process.stderr.write(`mailbox mcp: ${startLine(options.url, await check)}\n`);
        await new Promise<void>((resolve) => {
          server.onclose = resolve;
          process.stdin.once('end', resolve);
        });
      }),
    );
}
