/**
 * A send whose tags repeat one (["ops", "ops"], "ops,ops", '["ops","ops"]') was taken and the tag stored twice: every
 * reader's message showed "tags": ["ops", "ops"], and a label counted per tag counted it twice. A repeated tag is now
 * refused VALIDATION_FAILED naming the repeat (field tags.1) and the entry it repeats, over MCP (HTTP and stdio) and
 * HTTP /v1 alike, and by the `tags` filter, which takes what a send takes; nothing is written. Tags differing in case are two tags (tags match exactly) and are kept.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('tags-repeated-e2e', ['@a', '@b', '@c']);

const REPEAT = '\'tags.1\' repeats "ops" (tags.0): give each tag once';

test.each(['http', 'stdio'])('over MCP (%s), a repeated tag is refused naming it; nothing is written', async (via) => {
  const a = via === 'http' ? await mcp.clients.http(mcp.t['@a']) : await mcp.clients.stdio(mcp.t['@a']);
  const before = await mcp.server.eventCount();
  for (const tags of [['ops', 'ops'], 'ops,ops', 'ops, ops', '["ops","ops"]']) {
    const result = (await a.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject: 'twice', body: 'x', tags },
    })) as ToolResult;
    expect([tags, result.isError]).toEqual([tags, true]);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'tags.1' });
    expect(result.structuredContent.message).toContain(`add_message: ${REPEAT}`);
  }
  expect(await mcp.server.eventCount()).toBe(before);
  // The positive signal: the tags once each (and two that differ in case) are taken, and read back as sent.
  const sent = (await a.callTool({
    name: 'add_message',
    arguments: { to: ['@b', '@c'], subject: `once over ${via}`, body: 'x', tags: ['ops', 'Ops'] },
  })) as ToolResult;
  expect(sent.isError ?? false).toBe(false);
  for (const who of ['@b', '@c']) {
    const read = await mcp.server.call('GET', `/v1/messages/${sent.structuredContent.messageId}`, { token: mcp.t[who] });
    expect(read.body.tags).toEqual(['ops', 'Ops']);
  }
});

test('over HTTP /v1 alike; the third of three names the first', async () => {
  const before = await mcp.server.eventCount();
  const refused = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: 'twice', body: 'x', tags: ['ops', 'db', 'ops'] },
  });
  expect(refused).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.2' } });
  expect(refused.body.message).toContain('\'tags.2\' repeats "ops" (tags.0)');
  expect(await mcp.server.eventCount()).toBe(before);
  // The filter takes what a send takes (one rule): a repeat there is refused alike.
  const listed = await mcp.server.call('GET', '/v1/messages?tags=ops,ops', { token: mcp.t['@b'] });
  expect(listed).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.1' } });
});
