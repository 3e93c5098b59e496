/**
 * list_messages answers unreadCount beside its page, and that count is the caller's whole inbox's: an outbox listing,
 * or one narrowed to a sender that matched nothing, said `{"messages": [], "unreadCount": 2}`, and its tool description
 * ("with unreadCount and nextCursor") did not say whose count it was, so a model read two unread messages from that
 * sender that the page had not shown. The description now says it: "unreadCount (your whole inbox's, whatever the box
 * and filters)", as the count is.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('list-unread-count-scope-e2e', ['@alice', '@bob', '@carol']);
beforeAll(async () => {
  await mcp.sendAs('@alice', { to: '@bob', subject: 'one', body: 'b' });
  await mcp.sendAs('@alice', { to: ['@bob', '@carol'], subject: 'two', body: 'b' });
  await mcp.sendAs('@bob', { to: '@carol', subject: 'three', body: 'b' });
});

test.each(['http', 'stdio'])('over MCP (%s), the description says whose count it is, and the count is that', async (via) => {
  const bob = via === 'http' ? await mcp.clients.http(mcp.t['@bob']) : await mcp.clients.stdio(mcp.t['@bob']);
  const { tools } = await bob.listTools();
  expect(tools.find((tool) => tool.name === 'list_messages')?.description).toContain(
    "with nextCursor and unreadCount (your whole inbox's, whatever the box and filters)",
  );
  const count = ((await bob.callTool({ name: 'unread_count', arguments: {} })) as ToolResult).structuredContent;
  expect(count.unreadCount).toBe(2);
  const fromCarol = ((await bob.callTool({ name: 'list_messages', arguments: { from: '@carol' } })) as ToolResult)
    .structuredContent;
  expect([fromCarol.messages, fromCarol.unreadCount]).toEqual([[], 2]);
  const outbox = ((await bob.callTool({ name: 'list_messages', arguments: { box: 'outbox' } })) as ToolResult).structuredContent;
  expect(outbox.messages.map((m: { subject: string }) => m.subject)).toEqual(['three']);
  expect(outbox.unreadCount).toBe(2);
});
