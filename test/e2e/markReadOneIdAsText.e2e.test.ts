/**
 * mark_read with one message id given as text in messageIds ("messageIds": "<id>", a model that read "several message
 * ids" and had one) was refused with the array form alone: "the plain string "<id>" is not one". It is now also told
 * the two forms that take one id: "messageId": "<id>", or "messageIds": ["<id>"]. Refused, nothing written, over MCP
 * and HTTP /v1 alike; either form then marks the message read for the caller only (@bob, not @carol).
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('mark-read-one-id-as-text-e2e', ['@alice', '@bob', '@carol']);

test('one id as text in messageIds is refused naming messageId and the one-entry array; nothing is written', async () => {
  const id = await mcp.sendAs('@alice', { to: ['@bob', '@carol'], subject: 'deploy', body: 'at 2' });
  const bob = await mcp.clients.http(mcp.t['@bob']);
  const said = `for one id, send "messageId": "${id}", or "messageIds": ["${id}"]`;

  let before = await mcp.server.eventCount();
  const result = (await bob.callTool({ name: 'mark_read', arguments: { messageIds: id } })) as ToolResult;
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'messageIds' });
  expect(result.structuredContent.message).toContain(`the plain string "${id}" is not one: ${said}.`);
  const http = await mcp.server.call('POST', '/v1/messages/read', { token: mcp.t['@bob'], body: { messageIds: id } });
  expect(http.status).toBe(400);
  expect(http.body.message).toContain(said);
  // Comma-separated ids are told they are not split, as before, and not given the one-id forms.
  const two = await mcp.server.call('POST', '/v1/messages/read', { token: mcp.t['@bob'], body: { messageIds: `${id},${id}` } });
  expect(two.body.message).toContain('(comma-separated text is not split).');
  expect(two.body.message).not.toContain('for one id');
  expect(await mcp.server.eventCount()).toBe(before);

  const marked = (await bob.callTool({ name: 'mark_read', arguments: { messageIds: [id] } })) as ToolResult;
  expect(marked.isError).toBeFalsy();
  before = await mcp.server.eventCount();
  const unread = async (who: string) =>
    (await mcp.server.call('GET', '/v1/inbox/count', { token: mcp.t[who] })).body.unreadCount as number;
  expect([await unread('@bob'), await unread('@carol')]).toEqual([0, 1]);
  expect(await mcp.server.eventCount()).toBe(before);
});
