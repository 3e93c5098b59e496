/**
 * A `task` given as a string that is almost JSON ('{"state":"Submitted"', its closing brace missing) was refused
 * saying 'the plain string ... is not one', as if it were prose: the caller was not told it had sent JSON that does
 * not parse, nor where. It is now told the string looks like JSON but does not parse, in the parser's words with its
 * position, beside the valid form (an object, or that object JSON-encoded as one string). A list of message ids given
 * as an almost-JSON array string alike. Over HTTP and MCP; nothing is written. Three agents.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('almost-json-refused-e2e', ['@alice', '@bob', '@carol']);

const said = (text: string, opens: '{' | '[') =>
  `the string ${JSON.stringify(text)} looks like JSON but does not parse: Expected ',' or '${opens === '{' ? '}' : ']'}' ` +
  `after ${opens === '{' ? 'property value' : 'array element'} in JSON at position ${text.length}, where the text ends ` +
  '(a closing bracket or brace missing?).';

/** Each answer refuses `field` with its valid form, then says the text looks like JSON but does not parse. */
function expectTaught(bodies: any[], field: string, kind: 'object' | 'array', text: string) {
  for (const body of bodies) {
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', field });
    expect(body.message).toContain(`or that ${kind} JSON-encoded as one string; ${text}`);
    expect(body.message).not.toContain('plain string');
  }
}

test('a task given as almost-JSON text is told it does not parse, where, and the valid form; nothing is written', async () => {
  const task = '{"state":"Submitted"';
  const alice = await mcp.clients.http(mcp.t['@alice']);
  const before = await mcp.server.eventCount();
  const overMcp = (await alice.callTool({
    name: 'add_message',
    arguments: { to: ['@bob', '@carol'], subject: 'port it', body: 'x', task },
  })) as ToolResult;
  expect(overMcp.isError).toBe(true);
  const overHttp = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@alice'],
    body: { to: ['@bob', '@carol'], subject: 'port it', body: 'x', task },
  });
  expect(overHttp.status).toBe(400);
  expectTaught([overMcp.structuredContent, overHttp.body], 'task', 'object', said(task, '{'));
  expect(await mcp.server.eventCount()).toBe(before);
});

test('message ids given as almost-JSON array text are told it does not parse, where, and the valid form; nothing is written', async () => {
  const id = await mcp.sendAs('@alice', { to: ['@bob', '@carol'], subject: 'deploy', body: 'at 2' });
  const messageIds = `["${id}"`;
  const bob = await mcp.clients.http(mcp.t['@bob']);
  const before = await mcp.server.eventCount();
  const overMcp = (await bob.callTool({ name: 'mark_read', arguments: { messageIds } })) as ToolResult;
  expect(overMcp.isError).toBe(true);
  const overHttp = await mcp.server.call('POST', '/v1/messages/read', { token: mcp.t['@bob'], body: { messageIds } });
  expect(overHttp.status).toBe(400);
  expectTaught([overMcp.structuredContent, overHttp.body], 'messageIds', 'array', said(messageIds, '['));
  expect(await mcp.server.eventCount()).toBe(before);
  const unread = async (who: string) =>
    (await mcp.server.call('GET', '/v1/inbox/count', { token: mcp.t[who] })).body.unreadCount as number;
  expect([await unread('@bob'), await unread('@carol')]).toEqual([1, 1]);
});
