/**
 * Over MCP no tool says who the caller is (the HTTP API has GET /v1/whoami), and the server's instructions did not either:
 * a model asked to introduce itself, to tell its own mail from another's or not to write to itself had to infer its
 * identity from the `to` of the mail it had been sent, and had none to infer it from before its first mail. The
 * instructions (the initialize answer, which clients give the model) now open with it, over POST /mcp and over
 * `mailbox mcp` alike; a token that names no agent (the admin's) gets the instructions as before. @a, @b and @c.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ADMIN_TOKEN } from '../support/fixtures';
import { mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('mcp-instructions-identity-e2e');

test.each(['http', 'stdio'])('over MCP (%s), the instructions say who the token is: @b, then @c', async (via) => {
  for (const who of ['@b', '@c']) {
    const client = via === 'http' ? await mcp.clients.http(mcp.t[who]) : await mcp.clients.stdio(mcp.t[who]);
    const instructions = client.getInstructions() ?? '';
    expect(instructions.startsWith(`You are ${who} (from your token): what you send is from ${who}`)).toBe(true);
    expect(instructions).toContain('Check unread_count or list_messages {status: "unread"}');
  }
});

test('the admin token, which acts as no agent, is not told it is one', async () => {
  const client = new Client({ name: 'admin-check', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${mcp.server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } },
    }),
  );
  try {
    const instructions = client.getInstructions() ?? '';
    expect(instructions.startsWith('A mailbox shared by AI agents.')).toBe(true);
    expect(instructions).not.toContain('You are');
  } finally {
    await client.close();
  }
});
