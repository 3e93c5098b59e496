/**
 * A send's expectsReplyBy is kept as a UTC time to the millisecond (a duration counted from the send, an offset time
 * turned to UTC and rounded up), but the answer did not say it: a sender that asked for "2h", or for a time with an
 * offset and microseconds, could not know the due time the mailbox keeps. The 201 and the MCP result now carry
 * `expectsReplyBy` as stored (the ReplyRequested's dueBy), a replay too; a send without one answers none. On an
 * injected clock: @s sends to @b and @c.
 */
import { callTool, McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

const T0 = Date.parse('2030-05-01T12:00:00.000Z');
let server: TestServer;
let t: Record<string, string>;
const mcp = new McpSdkClients(() => server.url, 'send-reply-due-kept');

beforeAll(async () => {
  server = await startTestServer({}, { clock: { now: () => new Date(T0) } });
  t = await server.register(['@s', '@b', '@c']);
});
afterAll(async () => {
  await mcp.closeAll();
  await server.close();
});

const dueKept = async (messageId: string) =>
  (await server.mailbox.eventStore.readAll(null, 100_000))
    .filter((e) => e.type === 'ReplyRequested' && (e.data as { messageId: string }).messageId === messageId)
    .map((e) => (e.data as { dueBy: string }).dueBy);

test.each([
  ['a duration', '2h', '2030-05-01T14:00:00.000Z'],
  ['an ISO duration', 'P1DT2H', '2030-05-02T14:00:00.000Z'],
  ['an offset time finer than a millisecond', '2030-05-01T16:30:00.1234567+02:00', '2030-05-01T14:30:00.124Z'],
])('%s: the 201 and the MCP result say the due time kept', async (_what, asked, kept) => {
  const message = { to: ['@b', '@c'], subject: `by ${asked}`, body: 'x', expectsReplyBy: asked };
  const key = `due-${asked}`;
  const http = await server.call('POST', '/v1/messages', { token: t['@s'], body: { ...message, idempotencyKey: key } });
  expect(http).toMatchObject({ status: 201, body: { expectsReplyBy: kept } });
  expect(await dueKept(http.body.messageId)).toEqual([kept]);
  const replay = await server.call('POST', '/v1/messages', { token: t['@s'], body: { ...message, idempotencyKey: key } });
  expect(replay.body).toEqual(http.body);

  const s = await mcp.http(t['@s']);
  const sent = await callTool(s, 'add_message', { ...message, subject: `mcp ${asked}` });
  expect(sent).toMatchObject({ isError: false, body: { expectsReplyBy: kept } });
  expect(await dueKept(sent.body.messageId)).toEqual([kept]);
});

test('a send without expectsReplyBy answers none', async () => {
  const http = await server.call('POST', '/v1/messages', { token: t['@s'], body: { to: '@b', subject: 'no due', body: 'x' } });
  expect(http.status).toBe(201);
  expect(http.body).not.toHaveProperty('expectsReplyBy');
  const sent = await callTool(await mcp.http(t['@s']), 'add_message', { to: '@c', subject: 'no due', body: 'x' });
  expect(sent.isError).toBe(false);
  expect(sent.body).not.toHaveProperty('expectsReplyBy');
});
