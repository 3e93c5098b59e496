/**
 * Authentication and roles over HTTP: 401 without a valid token, 403 for the
 * wrong role, auditors read everything and write nothing. No rejection writes an event.
 */
import http from 'node:http';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;
let dm: string;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  ({ '@audit': auditor } = await server.register(['@audit'], 'auditor'));
  dm = (await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'private' } })).body
    .messageId;
});
afterAll(() => server.close());

async function expectRejected(method: string, path: string, token: string | null, status: number, code: string, body?: unknown) {
  const before = await server.eventCount();
  const response = await server.call(method, path, { token, body });
  expect({ path, status: response.status, code: response.body.code }).toEqual({ path, status, code });
  expect(typeof response.body.message).toBe('string');
  expect(await server.eventCount()).toBe(before);
  return response;
}

// Three entries per row: with fewer, jest would pass its `done` callback as the body.
const agentRoutes: Array<[string, string, unknown]> = [
  ['POST', '/v1/messages', { to: '@b', subject: 's', body: 'b' }],
  ['GET', '/v1/messages', undefined],
  ['GET', '/v1/inbox/count', undefined],
  ['GET', '/v1/agents', undefined],
  ['POST', '/v1/agents', { identity: '@new' }],
  ['GET', '/v1/audit/events', undefined],
  ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
];

test.each(agentRoutes)('%s %s without a token is 401 UNAUTHENTICATED with WWW-Authenticate', async (method, path, body) => {
  const response = await expectRejected(method, path, null, 401, 'UNAUTHENTICATED', body);
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="agent-mailbox"');
});

test.each(['not-a-token', 'mbx_forged', `${'x'.repeat(40)}`])('an invalid token %s is 401', async (token) => {
  await expectRejected('POST', '/v1/messages', token, 401, 'UNAUTHENTICATED', { to: '@b', subject: 's', body: 'b' });
});

test.each([
  ['GET', '/v1/wake?token=', 'token'],
  ['GET', '/v1/messages?status=unread&access_token=', 'access_token'],
  ['GET', '/v1/inbox/count?api_key=', 'api_key'],
])('%s %s<the token> and no header: 401 saying the query parameter is never read as a token', async (method, path, field) => {
  const response = await expectRejected(method, `${path}${t['@b']}`, null, 401, 'UNAUTHENTICATED');
  expect(response.body).toEqual({
    error: 'Unauthenticated',
    code: 'UNAUTHENTICATED',
    message:
      `A bearer token is required in the Authorization header; the query parameter '${field}' is never read as one (a ` +
      "URL is kept in logs, proxies and histories): send 'Authorization: Bearer <token>' instead. Nothing was done.",
    hint: 'Send Authorization: Bearer <token>',
    field,
  });
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="agent-mailbox"');
});

test('a malformed Authorization header is 401 and says what is expected', async () => {
  const response = await server.call('GET', '/v1/inbox/count', { headers: { authorization: `Basic ${t['@a']}` } });
  expect(response.status).toBe(401);
  expect(response.body.message).toContain('Bearer');
});

// `curl -H "Authorization: Bearer $ALICE"` with ALICE unset or empty (the README's walkthrough run a second time), a token
// pasted without its scheme, or another scheme: each was told only "The Authorization header must be 'Bearer <token>'.",
// and its user looked for a wrong token where there was none. Each now says what is wrong, never showing the token;
// the same on a send, the wake stream and POST /mcp, and nothing is written.
test.each([
  ['Bearer', "is 'Bearer' with no token after it (sent as 'Bearer $TOKEN' while TOKEN was unset or empty?)"],
  ['Bearer   ', "is 'Bearer' with no token after it"],
  ['<token>', "holds one word and no 'Bearer ' before it (not shown: it may be a token)"],
  ['Basic <token>', "uses 'Basic'; this server takes only 'Authorization: Bearer <token>'"],
  ['Bearer <token> <token>', "holds 2 words after 'Bearer'; a token is one word, without spaces"],
])('Authorization: %j is 401 saying what is wrong with it, never the token', async (form, said) => {
  const header = form.replaceAll('<token>', t['@a']);
  const before = await server.eventCount();
  const send = { to: '@b', subject: 's', body: 'b' };
  for (const [method, path, body] of [
    ['POST', '/v1/messages', send],
    ['GET', '/v1/wake', undefined],
    ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ] as const) {
    const response = await server.call(method, path, {
      headers: { authorization: header, accept: 'application/json, text/event-stream' },
      body,
    });
    expect([path, response.status, response.body.code]).toEqual([path, 401, 'UNAUTHENTICATED']);
    expect(response.body.message).toContain(`The Authorization header ${said}`);
    expect(response.body.message).toContain("'Authorization: Bearer <token>'");
    expect(JSON.stringify(response.body)).not.toContain(t['@a']);
  }
  expect(await server.eventCount()).toBe(before);
});

/** A request with the header lines given, as sent (fetch would join two Authorization headers into one). */
function rawRequest(method: string, path: string, headers: Array<[string, string]>, body?: string) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = http.request(`${server.url}${path}`, { method, headers: headers.flat() }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
    });
    request.on('error', reject).end(body);
  });
}

// Node keeps only the first of two Authorization headers: the request was answered as @b, @a's token dropped unseen.
test.each([
  ['POST', '/v1/messages', JSON.stringify({ to: '@c', subject: 's', body: 'b' })],
  ['GET', '/v1/inbox/count', undefined],
  [
    'POST',
    '/mcp',
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'unread_count', arguments: {} } }),
  ],
])('%s %s with two Authorization headers is 401, whichever tokens they carry, and writes nothing', async (method, path, body) => {
  for (const second of [t['@a'], t['@b'], 'mbx_unknown']) {
    const before = await server.eventCount();
    const response = await rawRequest(
      method,
      path,
      [
        ['host', new URL(server.url).host],
        ['authorization', `Bearer ${t['@b']}`],
        ['authorization', `Bearer ${second}`],
        ['content-type', 'application/json'],
        ['accept', 'application/json, text/event-stream'],
      ],
      body,
    );
    expect(response).toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED' } });
    expect(response.body.message).toContain('2 Authorization headers; send exactly one');
    expect(await server.eventCount()).toBe(before);
  }
});

test('wrong roles are 403 FORBIDDEN', async () => {
  await expectRejected('POST', '/v1/agents', t['@a'], 403, 'FORBIDDEN', { identity: '@intruder' });
  await expectRejected('DELETE', '/v1/agents/@b', t['@a'], 403, 'FORBIDDEN');
  await expectRejected('GET', '/v1/audit/events', t['@a'], 403, 'FORBIDDEN');
  await expectRejected('GET', '/v1/heartbeat', t['@a'], 403, 'FORBIDDEN');
  await expectRejected('POST', '/v1/messages', server.adminToken, 403, 'FORBIDDEN', { to: '@b', subject: 's', body: 'b' });
  await expectRejected('POST', '/v1/messages', auditor, 403, 'FORBIDDEN', { to: '@b', subject: 's', body: 'b' });
  await expectRejected('POST', `/v1/messages/${dm}/read`, auditor, 403, 'FORBIDDEN');
  await expectRejected('POST', '/v1/agents', auditor, 403, 'FORBIDDEN', { identity: '@x' });
});

test('an auditor reads any message and the event log, and writes nothing', async () => {
  const message = await server.call('GET', `/v1/messages/${dm}`, { token: auditor });
  expect(message.status).toBe(200);
  expect(message.body).toMatchObject({ body: 'private', receipts: [{ recipient: '@b', readAt: null, archivedAt: null }] });
  const log = await server.call('GET', '/v1/audit/events?limit=2', { token: auditor });
  expect(log.body.events.map((e: any) => e.type)).toEqual(['AgentRegistered', 'AgentRegistered']);
  const next = await server.call('GET', `/v1/audit/events?after=${log.body.nextAfter}&limit=1000`, { token: auditor });
  // The next page starts with the log's third event (positions increase; they need not be consecutive, e.g. EventStoreDB).
  expect(next.body.events[0].position).toBe(String((await server.mailbox.eventStore.readAll(null, 3))[2].position));
  expect(next.body.events.length + 2).toBe(await server.eventCount());
  const heartbeat = await server.call('GET', '/v1/heartbeat', { token: auditor });
  expect(heartbeat.body.agents.find((h: any) => h.identity === '@b')).toMatchObject({ unread: 1 });
});

// A page from past the head answered 200 {events: [], nextAfter: <that position>}: a reader paging on from it skipped,
// unseen, every event up to it as the log grew (GET /v1/audit/stream refused the same position).
test('GET /v1/audit/events from past the log head is 404 naming the head; from the head itself an empty page', async () => {
  const head = (await server.mailbox.eventStore.headPosition())!.toString();
  const atHead = await server.call('GET', `/v1/audit/events?after=${head}`, { token: auditor });
  expect(atHead).toMatchObject({ status: 200, body: { events: [], nextAfter: head } });
  const past = (BigInt(head) + 1000n).toString();
  const refused = await server.call('GET', `/v1/audit/events?after=${past}`, { token: auditor });
  expect(refused).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'after', after: past, head } });
  expect(refused.body.message).toContain(`paging on from it would skip every event up to ${past}`);
});

test('admin registers (token shown once, stored hashed), lists and retires; a retired token is 401', async () => {
  const created = await server.call('POST', '/v1/agents', { token: server.adminToken, body: { identity: '@temp' } });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({
    identity: '@temp',
    role: 'agent',
    token: expect.stringMatching(/^mbx_/),
    registeredAt: expect.any(String),
  });
  const log = JSON.stringify((await server.call('GET', '/v1/audit/events?limit=1000', { token: server.adminToken })).body);
  expect(log).not.toContain(created.body.token);
  await expectRejected('POST', '/v1/agents', server.adminToken, 409, 'AGENT_EXISTS', { identity: '@temp' });
  const listed = await server.call('GET', '/v1/agents', { token: t['@c'] });
  expect(listed.body.agents).toContainEqual(
    expect.objectContaining({ identity: '@temp', retired: false, registeredAt: expect.any(String) }),
  );
  const retired = await server.call('DELETE', '/v1/agents/@temp', { token: server.adminToken });
  expect(retired.body).toEqual({
    identity: '@temp',
    retiredAt: expect.any(String),
    changed: true,
    releasedTasks: [],
    canceledTasks: [],
  });
  await expectRejected('GET', '/v1/inbox/count', created.body.token, 401, 'UNAUTHENTICATED');
  await expectRejected('DELETE', '/v1/agents/@nobody', server.adminToken, 404, 'AGENT_NOT_FOUND');
});
