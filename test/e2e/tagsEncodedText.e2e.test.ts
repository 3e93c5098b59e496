/**
 * `tags` sent as the JSON encoding of one text ('"ops"': an MCP client that JSON-encodes every argument, a model that
 * quoted its one tag) was split as comma-separated text and stored as the tag `"ops"`, quotes and all: the filter
 * `tags: "ops"` then never found the message. The list's JSON encoding ('["ops"]') is decoded, so the encoding of
 * anything else (a text, an object) is now refused with the forms, naming what it decodes to, by a send and the filter,
 * MCP and HTTP alike; nothing is written. A tag that merely holds a quote is kept as sent.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('tags-encoded-text-e2e', ['@a', '@b', '@c']);

test('a JSON-encoded text or object for tags is refused teaching the list form; nothing is written', async () => {
  const a = await mcp.clients.http(mcp.t['@a']);
  const before = await mcp.server.eventCount();
  for (const [tags, decoded] of [
    ['"ops"', 'text "ops"'],
    [' "ops" ', 'text "ops"'],
    ['{"tag": "ops"}', 'an object'],
  ]) {
    const result = (await a.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject: 'quoted', body: 'x', tags },
    })) as ToolResult;
    expect([tags, result.isError]).toEqual([tags, true]);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'tags' });
    expect(result.structuredContent.message).toContain(`add_message: 'tags' is the JSON encoding of ${decoded}`);
    expect(result.structuredContent.message).toContain('["review", "urgent"]');
    const listed = await mcp.server.call('GET', `/v1/messages?tags=${encodeURIComponent(tags)}`, { token: mcp.t['@b'] });
    expect(listed).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags' } });
  }
  const http = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: 'quoted', body: 'x', tags: '"ops"' },
  });
  expect(http).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags' } });
  expect(await mcp.server.eventCount()).toBe(before);
  // The positive signal: a tag that holds a quote, not encoded, is kept as sent; the encoded list is decoded.
  for (const [tags, kept] of [
    ['say "hi"', ['say "hi"']],
    ['["ops"]', ['ops']],
  ] as const) {
    const sent = (await a.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject: 'kept', body: 'x', tags },
    })) as ToolResult;
    expect(sent.isError ?? false).toBe(false);
    const read = await mcp.server.call('GET', `/v1/messages/${sent.structuredContent.messageId}`, { token: mcp.t['@c'] });
    expect(read.body.tags).toEqual(kept);
  }
});
