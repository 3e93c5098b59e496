/**
 * An empty cursor (`cursor: ""` from a model that fills every field of list_messages or list_tasks, `?cursor=`) was
 * refused as CURSOR_MISMATCH, "This cursor came from another message listing (...) or was altered": it came from no
 * listing, and the model was not told that the first page takes no cursor at all. It is now VALIDATION_FAILED on
 * field cursor, saying to leave it out for the first page and to pass nextCursor back unchanged, the same over
 * POST /mcp, `mailbox mcp` on stdio and HTTP; nothing is written (not even a seen mark), and real cursors page as before.
 */
import { McpSdkClients, type ToolResult } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'empty-cursor-e2e');

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  for (const subject of ['one', 'two', 'three']) {
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@a'],
      body: { to: ['@b', '@c'], subject, body: '.', task: {} },
    });
    expect(sent.status).toBe(201);
  }
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

const EMPTY =
  "'cursor' must not be empty: leave it out for the first page, then pass each page's nextCursor back unchanged " +
  '(a null nextCursor: there is no further page)';

/** The events in the log once the seen marks noted so far are written (a refused listing must have noted none). */
async function settledEventCount(): Promise<number> {
  await server.mailbox.seenMarks.flush();
  return server.eventCount();
}

test.each([
  ['list_messages', { cursor: '' }],
  ['list_messages', { box: 'outbox', cursor: '' }],
  ['list_tasks', { view: 'claimable', cursor: '' }],
])('%s %j over POST /mcp and stdio: refused as empty, teaching the first page; nothing is written', async (tool, args) => {
  for (const via of ['http', 'stdio'] as const) {
    const b = via === 'http' ? await clients.http(t['@b']) : await clients.stdio(t['@b']);
    const before = await settledEventCount();
    const result = (await b.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([via, result.isError]).toEqual([via, true]);
    expect(result.structuredContent).toEqual({
      error: 'Validation failed',
      code: 'VALIDATION_FAILED',
      message: `${tool}: ${EMPTY}`,
      field: 'cursor',
      issues: [{ field: 'cursor', message: EMPTY.replace("'cursor' ", '') }],
    });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
    expect(await settledEventCount()).toBe(before);
  }
});

test('HTTP ?cursor= is refused the same way (400), on messages and on tasks', async () => {
  for (const [path, tool] of [
    ['/v1/messages?cursor=', 'list_messages'],
    ['/v1/tasks?view=claimable&cursor=', 'list_tasks'],
  ]) {
    const before = await settledEventCount();
    const refused = await server.call('GET', path, { token: t['@c'] });
    expect([path, refused.status, refused.body.code, refused.body.field]).toEqual([path, 400, 'VALIDATION_FAILED', 'cursor']);
    expect(refused.body.message).toBe(`${tool}: ${EMPTY}`);
    expect(await settledEventCount()).toBe(before);
  }
});

test('a real cursor still pages, and one of another listing is still CURSOR_MISMATCH', async () => {
  const b = await clients.http(t['@b']);
  const first = (await b.callTool({ name: 'list_messages', arguments: { limit: 2 } })) as ToolResult;
  expect(first.structuredContent.messages.map((m: any) => m.subject)).toEqual(['three', 'two']);
  const cursor = first.structuredContent.nextCursor as string;
  const next = (await b.callTool({ name: 'list_messages', arguments: { limit: 2, cursor } })) as ToolResult;
  expect(next.structuredContent.messages.map((m: any) => m.subject)).toEqual(['one']);
  const other = (await b.callTool({ name: 'list_messages', arguments: { status: 'unread', cursor } })) as ToolResult;
  expect(other.structuredContent.code).toBe('CURSOR_MISMATCH');
});
