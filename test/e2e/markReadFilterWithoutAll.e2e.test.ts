/**
 * mark_read with a filter of {all: true} and no `all` ({"threadId": "deploy"}, {"from": "@alice"}: "mark this thread
 * read", a model's natural first call) was told "'messageId' (or 'messageIds', or 'all') is required: give exactly
 * one of ...": the field it lacked was `all`, and the message did not say that its filter needs it. It is now told
 * that: field `all`, "'all' is required with 'threadId', which narrows mark_read {all: true}: add "all": true ...". Refused,
 * nothing written, over MCP and HTTP /v1 alike; with all added, the thread is marked for the caller only.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('mark-read-filter-without-all-e2e', ['@alice', '@bob', '@carol']);

const NARROWS =
  'mark_read {all: true}: add "all": true (your unread messages that you have seen), or name the messages with messageId or messageIds';

test.each(['http', 'stdio'])('over MCP (%s), a filter without all is told to add all; nothing is written', async (via) => {
  const threadId = `deploy-${via}`;
  const alice = await mcp.clients.http(mcp.t['@alice']);
  await alice.callTool({ name: 'add_message', arguments: { to: ['@bob', '@carol'], subject: 'deploy', body: 'at 2', threadId } });
  const bob = via === 'http' ? await mcp.clients.http(mcp.t['@bob']) : await mcp.clients.stdio(mcp.t['@bob']);
  await bob.callTool({ name: 'list_messages', arguments: { threadId } }); // seen: {all: true} would mark it
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ threadId }, `'all' is required with 'threadId', which narrows ${NARROWS}`],
    [{ from: '@alice', priority: 'normal' }, `'all' is required with 'from', 'priority', which narrow ${NARROWS}`],
  ];
  for (const [args, said] of cases) {
    const before = await mcp.server.eventCount();
    const result = (await bob.callTool({ name: 'mark_read', arguments: args })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'all', message: `mark_read: ${said}` });
    expect(await mcp.server.eventCount()).toBe(before);
  }
  const unread = async (who: string) =>
    (
      (await (
        await mcp.clients.http(mcp.t[who])
      ).callTool({ name: 'list_messages', arguments: { threadId, status: 'unread' } })) as ToolResult
    ).structuredContent.messages.length;
  expect(await unread('@bob')).toBe(1);
  // As told: the thread is marked read for @bob only.
  const marked = (await bob.callTool({ name: 'mark_read', arguments: { all: true, threadId } })) as ToolResult;
  expect(marked.structuredContent).toMatchObject({ all: true, changed: 1 });
  expect([await unread('@bob'), await unread('@carol')]).toEqual([0, 1]);
});

test('over HTTP /v1 the same', async () => {
  const before = await mcp.server.eventCount();
  const refused = await mcp.server.call('POST', '/v1/messages/read', { token: mcp.t['@bob'], body: { threadId: 'x' } });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({
    field: 'all',
    message: `mark_read: 'all' is required with 'threadId', which narrows ${NARROWS}`,
  });
  expect(await mcp.server.eventCount()).toBe(before);
});
