/**
 * An identity filter given without its @ (`from: "alice"`, the outbox's `to: "bob"`, mark_read's `from`, get_delivery's
 * `after`) was told the form alone ("'from' must be an identity: @ followed by 1-64 of ..."), while a send's `to: "bob"`
 * is told `suggestions: ["@bob"]`. Each now names the value and the identity meant: '"alice" is not one: did you mean
 * "@alice"?'. Never taken in its place: refused, nothing written (a mark_read narrowed to a sender marks nothing).
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('identity-without-at-e2e', ['@alice', '@bob', '@carol']);
let sentId: string;
beforeAll(async () => {
  sentId = await mcp.sendAs('@alice', { to: 'AGENT:*', subject: 's', body: 'b' });
});

const ID = 'must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt)';
const meant = (typed: string) => `"${typed}" is not one: did you mean "@${typed}"? (the @ is part of the identity)`;
const TO =
  'must be one recipient: an @identity (e.g. @neo-gpt; also matches the lists that include it) or the literal AGENT:* ' +
  '(your broadcasts); not a list or comma-separated text';

test.each(['http', 'stdio'])(
  'over MCP (%s), an identity without its @ is told the one meant; nothing is written',
  async (via) => {
    const bob = via === 'http' ? await mcp.clients.http(mcp.t['@bob']) : await mcp.clients.stdio(mcp.t['@bob']);
    const alice = via === 'http' ? await mcp.clients.http(mcp.t['@alice']) : await mcp.clients.stdio(mcp.t['@alice']);
    await bob.callTool({ name: 'list_messages', arguments: {} }); // seen: a mark_read {all} would now mark it
    const cases: Array<[typeof bob, string, Record<string, unknown>, string, string]> = [
      [bob, 'list_messages', { from: 'alice' }, 'from', `${ID}; ${meant('alice')}`],
      [bob, 'mark_read', { all: true, from: 'alice' }, 'from', `${ID}; ${meant('alice')}`],
      [alice, 'list_messages', { box: 'outbox', to: 'bob' }, 'to', `${TO}; ${meant('bob')}`],
      [alice, 'get_delivery', { messageId: sentId, after: 'bob' }, 'after', `${ID}; ${meant('bob')}`],
      [bob, 'list_messages', { from: 'al ice' }, 'from', `${ID}; "al ice" is not one`],
    ];
    for (const [client, tool, args, field, message] of cases) {
      const before = await mcp.server.eventCount();
      const result = (await client.callTool({ name: tool, arguments: args })) as ToolResult;
      expect([tool, result.isError]).toEqual([tool, true]);
      expect(result.structuredContent).toMatchObject({
        code: 'VALIDATION_FAILED',
        field,
        message: `${tool}: '${field}' ${message}`,
      });
      expect(await mcp.server.eventCount()).toBe(before);
    }
    // The positive signal: the broadcast is still unread for @bob, and the filter as suggested finds it.
    const count = (await bob.callTool({ name: 'unread_count', arguments: {} })) as ToolResult;
    expect(count.structuredContent.unreadCount).toBe(1);
    const listed = (await bob.callTool({ name: 'list_messages', arguments: { from: '@alice' } })) as ToolResult;
    expect(listed.structuredContent.messages.map((m: { messageId: string }) => m.messageId)).toEqual([sentId]);
  },
);

test('over HTTP /v1 the same', async () => {
  const listed = await mcp.server.call('GET', '/v1/messages?from=alice', { token: mcp.t['@carol'] });
  expect(listed.status).toBe(400);
  expect(listed.body.message).toBe(`list_messages: 'from' ${ID}; ${meant('alice')}`);
});
