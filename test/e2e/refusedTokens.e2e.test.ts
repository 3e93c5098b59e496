/**
 * A bearer token the mailbox does not know costs a registry read (on EventStoreDB a network read): a client sending
 * made-up tokens in a loop made the server read without end. An address now has 100 refused tokens at once, 10 a
 * second after (MAILBOX_REFUSED_TOKEN_BURST, MAILBOX_REFUSED_TOKENS_PER_SECOND); beyond, an unknown token is answered
 * 429 RATE_LIMITED unread, on every authenticated route (the API, POST /mcp, the wake stream) and on a path that is no
 * route. Known tokens never count and are never refused by it. Time is the test's clock.
 */
import http from 'node:http';
import { AgentDirectory } from '../../src/application/agentDirectory';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;
let nowMs = Date.parse('2026-01-05T10:00:00.000Z');
const registryReads = jest.spyOn(AgentDirectory.prototype, 'current');

beforeAll(async () => {
  server = await startTestServer({}, { clock: { now: () => new Date(nowMs) } });
  t = await server.register(['@a', '@b', '@c']);
  ({ '@audit': auditor } = await server.register(['@audit'], 'auditor'));
});
afterAll(() => server.close());

const garbage = (n: number) => `mbx_made-up-${n}-${'x'.repeat(30)}`;
const send = { to: '@b', subject: 's', body: 'b' };

/** A request from the loopback address `from` (127.0.0.x: each is another client address to the server). */
function callFrom(from: string, method: string, path: string, token: string) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const request = http.request(
      `${server.url}${path}`,
      { method, localAddress: from, headers: { authorization: `Bearer ${token}` } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) }),
        );
      },
    );
    request.on('error', reject).end();
  });
}

test('the first 100 refused tokens of an address answer 401; then 429 unread, on every route; known tokens pass', async () => {
  const events = await server.eventCount();
  const readsBefore = registryReads.mock.calls.length;
  for (let n = 0; n < 100; n += 1) {
    const refused = await server.call('POST', '/v1/messages', { token: garbage(n), body: send });
    expect([n, refused.status, refused.body.code]).toEqual([n, 401, 'UNAUTHENTICATED']);
  }
  const reads = registryReads.mock.calls.length;
  expect(reads - readsBefore).toBe(100); // each was looked up

  const limited = await server.call('POST', '/v1/messages', { token: garbage(100), body: send });
  expect(limited.status).toBe(429);
  expect(limited.headers.get('retry-after')).toBe('1');
  expect(limited.body).toEqual({
    error: 'Too many refused tokens',
    code: 'RATE_LIMITED',
    message:
      'Too many refused bearer tokens from this address (127.0.0.1): more than 100 at once, then 10 a second. This ' +
      'token was not checked and nothing was done; retry after 1 s with a valid token (an agent gets its token when ' +
      'an admin registers it, POST /v1/agents).',
    retryAfterSeconds: 1,
    limitPerSecond: 10,
    burst: 100,
  });
  // MCP over HTTP and the wake stream go through the same check; so does a path that is no route (answered 404 as
  // ever, its token not read).
  const mcp = await server.call('POST', '/mcp', {
    token: garbage(101),
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { accept: 'application/json, text/event-stream' },
  });
  expect([mcp.status, mcp.body.code, mcp.headers.get('retry-after')]).toEqual([429, 'RATE_LIMITED', '1']);
  const wake = await server.call('GET', '/v1/wake', { token: garbage(102) });
  expect([wake.status, wake.body.code, wake.headers.get('retry-after')]).toEqual([429, 'RATE_LIMITED', '1']);
  const noRoute = await server.call('GET', '/v1/nowhere', { token: garbage(103) });
  expect(noRoute.status).toBe(404);
  expect(registryReads.mock.calls.length).toBe(reads); // none of the four tokens was looked up

  // Recorded as every refusal is: in the rejection log with no caller, and the send's in /metrics.
  const log = await server.call('GET', '/v1/audit/rejections?limit=4', { token: auditor });
  expect(log.body.rejections.map((r: any) => [r.agent, r.command, r.code, r.status, r.message.slice(0, 30)])).toEqual([
    [null, 'GET /v1/nowhere', 'NOT_FOUND', 404, expect.any(String)],
    [null, 'GET /v1/wake', 'RATE_LIMITED', 429, 'Too many refused bearer tokens'],
    [null, 'POST /mcp', 'RATE_LIMITED', 429, 'Too many refused bearer tokens'],
    [null, 'send', 'RATE_LIMITED', 429, 'Too many refused bearer tokens'],
  ]);

  // Known tokens from the same address: never refused by it, never counted.
  const own = await server.call('POST', '/v1/messages', { token: t['@a'], body: send });
  expect(own.status).toBe(201);
  const tools = await server.call('POST', '/mcp', {
    token: t['@c'],
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { accept: 'application/json, text/event-stream' },
  });
  expect(tools.status).toBe(200);
  const stream = new AbortController();
  const opened = await fetch(`${server.url}/v1/wake`, {
    headers: { authorization: `Bearer ${t['@b']}` },
    signal: stream.signal,
  });
  expect([opened.status, opened.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/event-stream')]);
  stream.abort();
  expect((await server.call('GET', '/v1/inbox/count', { token: server.adminToken })).status).not.toBe(429);

  // Another client address has its own 100.
  const elsewhere = await callFrom('127.0.0.2', 'GET', '/v1/inbox/count', garbage(104));
  expect([elsewhere.status, elsewhere.body.code]).toEqual([401, 'UNAUTHENTICATED']);

  // 100 ms later one refusal is back: one more made-up token is looked up and refused 401, the next is 429 again.
  nowMs += 100;
  expect((await server.call('GET', '/v1/inbox/count', { token: garbage(105) })).status).toBe(401);
  expect((await server.call('GET', '/v1/inbox/count', { token: garbage(106) })).status).toBe(429);
  // Ten seconds refill the whole burst (and no more): 100 answered 401, the 101st 429.
  nowMs += 60_000;
  const after = [];
  for (let n = 0; n < 101; n += 1) after.push((await server.call('GET', '/v1/inbox/count', { token: garbage(200 + n) })).status);
  expect(after.filter((status) => status === 401)).toHaveLength(100);
  expect(after[100]).toBe(429);

  const metrics = (await server.call('GET', '/metrics')).body as string;
  expect(metrics).toMatch(/mailbox_commands_total\{[^}]*command="send"[^}]*code="RATE_LIMITED"[^}]*\} 1/);
  expect(await server.eventCount()).toBe(events + 1); // only @a's send
});
