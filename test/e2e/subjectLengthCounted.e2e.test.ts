/**
 * A subject's limit is 200 characters, counted as characters (code points), and the refusal counted another way: 201
 * emoji were refused "'subject' must be at most 200 characters long (it has 402)", which read as a miscount (or as a
 * limit of 100 emoji). It now says "(it has 201)", over MCP and HTTP alike; nothing is written, and 200 emoji are taken.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('subject-length-counted-e2e', ['@a', '@b', '@c']);

test('201 emoji are refused as 201 characters; 200 are kept as sent', async () => {
  const a = await mcp.clients.http(mcp.t['@a']);
  const before = await mcp.server.eventCount();
  const refused = (await a.callTool({
    name: 'add_message',
    arguments: { to: ['@b', '@c'], subject: '🚀'.repeat(201), body: 'x' },
  })) as ToolResult;
  expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'subject' });
  expect(refused.structuredContent.message).toBe("add_message: 'subject' must be at most 200 characters long (it has 201)");
  const http = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: `a${'🚀'.repeat(200)}`, body: 'x' },
  });
  expect([http.status, http.body.message]).toEqual([
    400,
    "add_message: 'subject' must be at most 200 characters long (it has 201)",
  ]);
  expect(await mcp.server.eventCount()).toBe(before);
  const kept = await mcp.sendAs('@a', { to: ['@b', '@c'], subject: '🚀'.repeat(200), body: 'x' });
  const read = await mcp.server.call('GET', `/v1/messages/${kept}`, { token: mcp.t['@c'] });
  expect(read.body.subject).toBe('🚀'.repeat(200));
});
