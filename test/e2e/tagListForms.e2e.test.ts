/**
 * One rule for a list of tags, a send's `tags` and the `tags` filter alike, over MCP and HTTP /v1: a list, that list
 * JSON-encoded, or comma-separated text (`ops, db`), and no tag holds a comma. Before, add_message {tags: "ops,db"} was
 * refused ("comma-separated text is not split") while list_messages {tags: "ops,db"} split it into ops and db, and a
 * send of the one tag "ops,db" (["ops,db"]) was taken: listing by the very text it was sent with matched nothing, the
 * filter silently asking for other tags than the message carried. A tag with a comma is now refused by both, naming it
 * (field tags.0) and teaching the forms; nothing is written.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('tag-list-forms-e2e');

const subjectsOf = (messages: Array<{ subject: string }>) => messages.map((m) => m.subject);

test.each(['http', 'stdio'])(
  'over MCP (%s), comma-separated tags are the list a send keeps and a filter finds, for each recipient',
  async (via) => {
    const a = via === 'http' ? await mcp.clients.http(mcp.t['@a']) : await mcp.clients.stdio(mcp.t['@a']);
    const subject = `ops and db over ${via}`;
    const sent = (await a.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject, body: 'x', tags: `ops-${via}, db` },
    })) as ToolResult;
    expect(sent.isError ?? false).toBe(false);
    for (const who of ['@b', '@c']) {
      const reader = via === 'http' ? await mcp.clients.http(mcp.t[who]) : await mcp.clients.stdio(mcp.t[who]);
      const read = (await reader.callTool({
        name: 'get_message',
        arguments: { messageId: sent.structuredContent.messageId },
      })) as ToolResult;
      expect(read.structuredContent.tags).toEqual([`ops-${via}`, 'db']);
      for (const tags of [`ops-${via},db`, `db, ops-${via}`, [`ops-${via}`, 'db'], JSON.stringify([`ops-${via}`])]) {
        const listed = (await reader.callTool({ name: 'list_messages', arguments: { tags } })) as ToolResult;
        expect([who, tags, subjectsOf(listed.structuredContent.messages)]).toEqual([who, tags, [subject]]);
      }
    }
  },
);

test('over HTTP /v1, a send and the filter take the same forms', async () => {
  const sent = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: ['@b', '@c'], subject: 'over http', body: 'x', tags: 'deploy-2030,ops/eu' },
  });
  expect(sent.status).toBe(201);
  for (const who of ['@b', '@c']) {
    for (const query of ['tags=deploy-2030,ops/eu', 'tags=deploy-2030&tags=ops/eu', `tags=${encodeURIComponent('["ops/eu"]')}`]) {
      const page = await mcp.server.call('GET', `/v1/messages?${query}`, { token: mcp.t[who] });
      expect([who, query, subjectsOf(page.body.messages)]).toEqual([who, query, ['over http']]);
    }
  }
});

const COMMA =
  '\'tags.0\' holds a comma at index 3: a comma separates tags ("ops,db" as text is the tags ["ops","db"]), so no tag ' +
  'holds one: send several tags as a list, or write one with another character such as - or /; a tag is 1-64 ' +
  'characters of printable text without a comma';

test('a tag with a comma is refused by a send and a filter, MCP and HTTP alike, teaching the forms; nothing is written', async () => {
  const a = await mcp.clients.http(mcp.t['@a']);
  const before = await mcp.server.eventCount();
  for (const [tool, args] of [
    ['add_message', { to: '@b', subject: 'one tag with a comma', body: 'x', tags: ['ops,db'] }],
    ['add_message', { to: '@b', subject: 'one tag with a comma', body: 'x', tags: '["ops,db"]' }],
    ['list_messages', { box: 'outbox', tags: ['ops,db'] }],
  ] as const) {
    const result = (await a.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([tool, result.isError]).toEqual([tool, true]);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'tags.0' });
    expect(result.structuredContent.message).toContain(`${tool}: ${COMMA}`);
  }
  const sent = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: 'one tag with a comma', body: 'x', tags: ['ops,db'] },
  });
  expect(sent).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.0' } });
  expect(sent.body.message).toContain(COMMA);
  const listed = await mcp.server.call('GET', `/v1/messages?box=outbox&tags=ops,db&tags=x`, { token: mcp.t['@a'] });
  expect(listed).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.0' } });
  // Two commas in a row leave an empty tag between them: named, with the form.
  const empty = (await a.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 's', body: 'x', tags: 'ops,,db' },
  })) as ToolResult;
  expect(empty.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'tags.1' });
  expect(empty.structuredContent.message).toMatch(/^add_message: 'tags.1' must not be empty: a tag is 1-64 characters/);
  expect(await mcp.server.eventCount()).toBe(before);
  // The positive signal: the same send with the tags as a list is taken, and @b's inbox holds no refused one.
  const taken = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: 'two tags', body: 'x', tags: ['ops', 'db'] },
  });
  expect(taken.status).toBe(201);
  const inbox = await mcp.server.call('GET', '/v1/messages?tags=ops,db', { token: mcp.t['@b'] });
  expect(subjectsOf(inbox.body.messages)).not.toContain('one tag with a comma');
  expect(subjectsOf(inbox.body.messages)).toContain('two tags');
});
