/**
 * A write with a query string is refused, not applied without it: no write route read its query, so
 * `POST /v1/messages?to=@c` with the body `{"to": "@b", ...}` was 201 and reached @b alone, and
 * `POST /v1/messages/{id}/read?messageId=<another>` marked the id of the path. Now every POST and DELETE with a
 * query parameter is 400 UNKNOWN_FIELD naming it, with zero events; three agents, so that each copy is seen.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let messageId: string;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: ['@b', '@c'], subject: 's', body: 'b' } });
  messageId = sent.body.messageId;
});
afterAll(() => server.close());

async function refused(method: string, urlPath: string, token: string, body?: unknown) {
  const before = await server.eventCount();
  const response = await server.call(method, urlPath, { token, body });
  expect([response.status, response.body.code]).toEqual([400, 'UNKNOWN_FIELD']);
  expect(await server.eventCount()).toBe(before);
  return response.body;
}

const unread = async (identity: string) => (await server.call('GET', '/v1/inbox/count', { token: t[identity] })).body.unread;

test('a send with ?to=@c is refused naming the parameter; nobody receives anything', async () => {
  const body = await refused('POST', '/v1/messages?to=@c&priority=high', t['@a'], { to: '@b', subject: 'q', body: 'x' });
  expect(body).toEqual({
    error: 'Unknown field',
    code: 'UNKNOWN_FIELD',
    message:
      "POST /v1/messages takes no query parameters ('to', 'priority'): a write's input is its path and its JSON body, " +
      'never the query string; give the field in the body, or drop it. Nothing was done.',
    field: 'to',
    fields: ['to', 'priority'],
    allowed: [],
  });
  expect([await unread('@b'), await unread('@c')]).toEqual([1, 1]);
});

test.each([
  ['POST /v1/messages/{id}/read', 'POST', () => `/v1/messages/${messageId}/read?messageId=x`, '@b'],
  ['POST /v1/messages/{id}/archive', 'POST', () => `/v1/messages/${messageId}/archive?undo=1`, '@b'],
  ['POST /v1/messages/read', 'POST', () => '/v1/messages/read?all=true', '@c'],
  ['DELETE /v1/agents/{identity}', 'DELETE', () => '/v1/agents/@c?reason=x', 'admin'],
])('%s with a query parameter changes nothing for anyone', async (route, method, urlPath, who) => {
  const token = who === 'admin' ? server.adminToken : t[who];
  const body = await refused(
    method,
    urlPath(),
    token,
    route === 'POST /v1/messages/read' ? { messageIds: [messageId] } : undefined,
  );
  expect(body.message.startsWith(`${route} takes no query parameters`)).toBe(true);
  expect([await unread('@b'), await unread('@c')]).toEqual([1, 1]);
  const agents = (await server.call('GET', '/v1/agents', { token: t['@a'] })).body.agents as Array<{ retired: boolean }>;
  expect(agents.every((agent) => !agent.retired)).toBe(true);
});

test('the refusal is in the rejection log; a write without a query, and reads with theirs, are as before', async () => {
  const rejections = await server.call('GET', '/v1/audit/rejections', { token: server.adminToken });
  expect(rejections.body.rejections).toEqual(
    expect.arrayContaining([expect.objectContaining({ code: 'UNKNOWN_FIELD', command: 'send', agent: '@a' })]),
  );
  expect((await server.call('POST', `/v1/messages/${messageId}/read?`, { token: t['@b'] })).status).toBe(200);
  expect((await server.call('GET', '/v1/messages?status=unread', { token: t['@c'] })).body.messages).toHaveLength(1);
  expect([await unread('@b'), await unread('@c')]).toEqual([0, 1]);
});
