/**
 * `mailbox mcp`'s composition: an MCP server on stdio whose tools proxy to a
 * mailbox server's HTTP API with the agent's token, so the answers and errors
 * are the server's own. The two adapters meet only here.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import { MailboxHttpClient } from './adapters/http/client/mailboxHttpClient';
import { McpServerFactory } from './adapters/mcp/mcpServer';

/** Serves MCP on the given streams (stdin/stdout by default; tests pass in-memory pipes). */
export async function runStdioMcp(url: string, token: string, streams: { stdin?: Readable; stdout?: Writable } = {}) {
  const factory = new McpServerFactory((error) => process.stderr.write(`mailbox mcp: tool failed: ${String(error)}\n`));
  const server = factory.create(new MailboxHttpClient(url, token));
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  await server.connect(transport);
  return server;
}
