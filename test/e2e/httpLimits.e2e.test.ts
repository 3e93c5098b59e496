/**
 * The HTTP surface's own rules: malformed and oversized requests, unknown
 * routes, rate limits, Idempotency-Key, query parameters. Every rejection is
 * the envelope and writes no event.
 */
import http from 'node:http';
import { holdApplies } from '../support/heldApplies';
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe } from './wakeSubscriber';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ maxBodyBytes: 1024, maxRequestBytes: 8192, maxWakeStreamsPerAgent: 2 });
  t = await server.register(['@a', '@b']);
});
afterAll(() => server.close());

async function expectRejected(
  method: string,
  path: string,
  options: Parameters<TestServer['call']>[2],
  status: number,
  code: string,
) {
  const before = await server.eventCount();
  const response = await server.call(method, path, options);
  expect({ status: response.status, code: response.body.code }).toEqual({ status, code });
  expect(response.body).toEqual(expect.objectContaining({ error: expect.any(String), message: expect.any(String) }));
  expect(await server.eventCount()).toBe(before);
  return response.body;
}

const message = { to: '@b', subject: 's', body: 'b' };

test('a body that is not JSON is VALIDATION_FAILED saying so', async () => {
  const body = await expectRejected(
    'POST',
    '/v1/messages',
    { token: t['@a'], rawBody: '{"to": "@b",', headers: { 'content-type': 'application/json' } },
    400,
    'VALIDATION_FAILED',
  );
  expect(body.message).toContain('not valid JSON');
});

test('a missing body is a validation error, not a crash', async () => {
  await expectRejected('POST', '/v1/messages', { token: t['@a'] }, 400, 'VALIDATION_FAILED');
});

test('JSON sent with another content type (curl -d) is understood', async () => {
  const response = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    rawBody: JSON.stringify(message),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(response.status).toBe(201);
});

test('a request over the request limit is 413 PAYLOAD_TOO_LARGE before it is parsed', async () => {
  const body = await expectRejected(
    'POST',
    '/v1/messages',
    { token: t['@a'], body: { ...message, body: 'x'.repeat(10_000) } },
    413,
    'PAYLOAD_TOO_LARGE',
  );
  // its size is its Content-Length: said, and by how much it is over, though not a byte of it was read
  const bytes = Buffer.byteLength(JSON.stringify({ ...message, body: 'x'.repeat(10_000) }));
  expect(body).toMatchObject({ limit: 8192, bytes });
  expect(body.message).toBe(
    `The request is ${bytes} bytes, ${bytes - 8192} over this server's limit of 8192 bytes; it was not read. Shorten the body or link to the content.`,
  );
});

test('a message body over maxBodyBytes is 413 PAYLOAD_TOO_LARGE naming the field', async () => {
  const body = await expectRejected(
    'POST',
    '/v1/messages',
    { token: t['@a'], body: { ...message, body: 'x'.repeat(1025) } },
    413,
    'PAYLOAD_TOO_LARGE',
  );
  expect(body).toMatchObject({ field: 'body', bytes: 1025, limit: 1024 });
});

test('an unknown route is a 404 NOT_FOUND envelope pointing at /docs', async () => {
  const body = await expectRejected('GET', '/v1/nowhere?x=1', { token: t['@a'] }, 404, 'NOT_FOUND');
  expect(body).toMatchObject({ path: '/v1/nowhere', method: 'GET' });
  expect(body.message).toContain('/docs');
});

const id = '0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b';
test.each([
  ['GET', '/v1/message', ['GET /v1/messages']],
  ['GET', '/messages', ['GET /v1/messages']],
  ['POST', `/v1/messages/${id}/mark_read`, ['POST /v1/messages/{id}/read']],
  ['POST', `/v1/tasks/${id}/state`, ['POST /v1/tasks/{id}/claim', 'POST /v1/tasks/{id}/transition']],
  ['POST', '/v1/agents/@b/rotate', ['POST /v1/agents/{identity}/token']],
  ['GET', '/health', ['GET /healthz']],
  // A box's name: its listing first (it named only the count), beside the routes that hold the name.
  ['GET', '/v1/inbox', ['GET /v1/messages', 'GET /v1/inbox/count']],
  ['GET', '/v1/outbox', ['GET /v1/messages?box=outbox']],
  ['GET', '/inbox', ['GET /v1/messages']],
])('%s %s, a guessed route: 404 NOT_FOUND naming the nearest routes', async (method, path, suggestions) => {
  const body = await expectRejected(
    method,
    path,
    { token: t['@a'], body: method === 'GET' ? undefined : message },
    404,
    'NOT_FOUND',
  );
  expect(body).toEqual({
    error: 'Not found',
    code: 'NOT_FOUND',
    message: `There is no route ${method} ${path}; did you mean ${suggestions.join(' or ')}? GET /docs lists every route of this API.`,
    method,
    path,
    suggestions,
  });
});

test.each([
  ['POST', '/v1/messages/send', ['POST /v1/messages', 'POST /v1/messages/read']],
  ['POST', '/v1/messages/markRead', ['POST /v1/messages/read']],
  ['POST', '/v1/messages/archive', ['POST /v1/messages/{id}/archive']],
  ['POST', '/v1/tasks/claim', ['POST /v1/tasks/{id}/claim']],
])(
  '%s %s, a word where a route takes an id: 404 naming the nearest routes, not 405 saying the path takes GET',
  async (method, path, suggestions) => {
    const before = await server.eventCount();
    const response = await server.call(method, path, { token: t['@a'], body: message });
    expect(await server.eventCount()).toBe(before); // a send's body to no route: nothing sent
    expect({ status: response.status, allow: response.headers.get('allow'), body: response.body }).toEqual({
      status: 404,
      allow: null,
      body: {
        error: 'Not found',
        code: 'NOT_FOUND',
        message: `There is no route ${method} ${path}; did you mean ${suggestions.join(' or ')}? GET /docs lists every route of this API.`,
        method,
        path,
        suggestions,
      },
    });
  },
);

test('a path far from every route is a 404 without suggestions', async () => {
  const body = await expectRejected('GET', '/xyz/abc/def', { token: t['@a'] }, 404, 'NOT_FOUND');
  expect(body).toEqual({
    error: 'Not found',
    code: 'NOT_FOUND',
    message: 'There is no route GET /xyz/abc/def; GET /docs lists every route of this API.',
    method: 'GET',
    path: '/xyz/abc/def',
  });
});

// A path that names one item (a message, an agent, a task) also names what can be done with it: the routes beneath it.
const MESSAGE_ACTIONS = [
  'POST /v1/messages/{id}/read',
  'POST /v1/messages/{id}/archive',
  'POST /v1/messages/{id}/unarchive',
  'GET /v1/messages/{id}/delivery',
];
test.each([
  ['PUT', '/v1/messages', 'GET, POST', []],
  ['DELETE', '/v1/messages/0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b', 'GET', MESSAGE_ACTIONS],
  ['PATCH', '/v1/messages/0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b', 'GET', MESSAGE_ACTIONS],
  ['GET', '/v1/messages/0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b/read', 'POST', []],
  ['PATCH', '/v1/agents/@b', 'DELETE', ['POST /v1/agents/{identity}/token']],
  [
    'DELETE',
    '/v1/tasks/0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b',
    'GET',
    ['POST /v1/tasks/{id}/claim', 'POST /v1/tasks/{id}/transition'],
  ],
  ['POST', '/healthz', 'GET', []],
])(
  '%s %s, a route asked with a method it does not take: 405 METHOD_NOT_ALLOWED with Allow: %s',
  async (method, path, allow, actions) => {
    const before = await server.eventCount();
    const response = await server.call(method, path, { token: t['@a'], body: method === 'GET' ? undefined : message });
    const said = actions.length > 0 ? `; what can be done with it: ${actions.join(', ')}` : '';
    expect({ status: response.status, allow: response.headers.get('allow'), body: response.body }).toEqual({
      status: 405,
      allow,
      body: {
        error: 'Method not allowed',
        code: 'METHOD_NOT_ALLOWED',
        message: `${path} takes ${allow}, not ${method}${said}; GET /docs lists every route of this API.`,
        method,
        path,
        allow: allow.split(', '),
        ...(actions.length > 0 ? { suggestions: actions } : {}),
      },
    });
    expect(await server.eventCount()).toBe(before);
  },
);

test('a path id that is not a message id is VALIDATION_FAILED; an unknown one is MESSAGE_NOT_FOUND', async () => {
  await expectRejected('GET', '/v1/messages/not-a-uuid', { token: t['@a'] }, 400, 'VALIDATION_FAILED');
  await expectRejected(
    'POST',
    '/v1/messages/2b1e6c1e-5a8e-4a47-9c39-0c2f1d0c9a11/read',
    { token: t['@a'] },
    404,
    'MESSAGE_NOT_FOUND',
  );
});

test('input a route would ignore is refused: a body on /read, a query on /inbox/count', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: message });
  const body = await expectRejected(
    'POST',
    `/v1/messages/${sent.body.messageId}/read`,
    { token: t['@b'], body: { messageId: sent.body.messageId } },
    400,
    'UNKNOWN_FIELD',
  );
  expect(body.field).toBe('messageId');
  await expectRejected('GET', '/v1/inbox/count?box=outbox', { token: t['@b'] }, 400, 'UNKNOWN_FIELD');
});

// DESIGN: a retry returns the original result. a3709e1 answered it 200 with replayed: true in the body, which clients
// comparing the retry's answer with the original's (201, deep-equal) took for another result.
test('Idempotency-Key: a retry returns the original result (201, the same body) with Idempotent-Replayed: true, and writes nothing; another payload is refused', async () => {
  const headers = { 'idempotency-key': 'deploy-1400' };
  const first = await server.call('POST', '/v1/messages', { token: t['@a'], body: message, headers });
  expect([first.status, first.headers.get('idempotent-replayed')]).toEqual([201, null]);
  const before = await server.eventCount();
  const retry = await server.call('POST', '/v1/messages', { token: t['@a'], body: message, headers });
  expect([retry.status, retry.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
  expect(JSON.stringify(retry.body)).toBe(JSON.stringify(first.body)); // the same fields, in the same order
  expect(await server.eventCount()).toBe(before);
  await expectRejected(
    'POST',
    '/v1/messages',
    { token: t['@a'], body: { ...message, subject: 'other' }, headers },
    422,
    'IDEMPOTENCY_KEY_REUSED',
  );
  await expectRejected(
    'POST',
    '/v1/messages',
    { token: t['@a'], body: { ...message, idempotencyKey: 'other-key' }, headers },
    400,
    'VALIDATION_FAILED',
  );
});

/** POST /v1/messages with the header lines given as they are (fetch would merge a repeated header into one line). */
function postWithRawHeaders(token: string, headerLines: string[], body: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}/v1/messages`,
      {
        method: 'POST',
        headers: [
          'host',
          new URL(server.url).host,
          'authorization',
          `Bearer ${token}`,
          'content-type',
          'application/json',
          ...headerLines,
        ],
      },
      (response) => {
        let data = '';
        response.on('data', (chunk) => (data += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(data) }));
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}

test('Idempotency-Key is read as UTF-8, the key the body field carries; bytes that are not UTF-8 are refused, nothing written', async () => {
  const key = 'déploiement-✓';
  const asBytes = Buffer.from(key, 'utf8').toString('latin1'); // node writes a header string's characters as bytes
  const sent = await postWithRawHeaders(t['@a'], ['idempotency-key', asBytes], { ...message, subject: 'utf8 key' });
  expect(sent.status).toBe(201);
  const before = await server.eventCount();
  // The same key in the body (JSON: UTF-8), as a client sends one a header cannot carry: the same message. It was read
  // as Latin-1 ('dÃ©ploiement-â\u009c\u0093'), another key.
  const viaBody = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { ...message, subject: 'utf8 key', idempotencyKey: key },
  });
  expect([viaBody.status, viaBody.body.messageId, viaBody.headers.get('idempotent-replayed')]).toEqual([
    201,
    sent.body.messageId,
    'true',
  ]);
  const latin1 = await postWithRawHeaders(t['@a'], ['idempotency-key', 'caf\u00e9'], { ...message, subject: 'latin1 key' });
  expect(latin1.status).toBe(400);
  expect(latin1.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'Idempotency-Key' });
  expect(latin1.body.message).toContain('not UTF-8');
  expect(await server.eventCount()).toBe(before);
});

test('Idempotency-Key on a write that does not replay by it: refused, naming the route that does and what to do instead', async () => {
  const key = { 'idempotency-key': 'retry-1' };
  // A registration: its token is shown once, so a retry could not be answered with it (the key was ignored: 409 then).
  const register = await expectRejected(
    'POST',
    '/v1/agents',
    { token: server.adminToken, body: { identity: '@c' }, headers: key },
    400,
    'VALIDATION_FAILED',
  );
  expect(register.field).toBe('Idempotency-Key');
  expect(register.message).toBe(
    'POST /v1/agents does not take an Idempotency-Key header: only POST /v1/messages (a send) replays a retried request ' +
      "by its key; a registration's token is shown once and kept only as a hash, so a retry cannot be answered with it: " +
      'on a retry answered 409 AGENT_EXISTS, give the agent a new token (POST /v1/agents/{identity}/token). ' +
      'Drop the header. Nothing was done.',
  );
  const rotate = await expectRejected(
    'POST',
    '/v1/agents/@b/token',
    { token: server.adminToken, headers: key },
    400,
    'VALIDATION_FAILED',
  );
  expect(rotate.message).toMatch(/^POST \/v1\/agents\/\{identity\}\/token does not take an Idempotency-Key header/);
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: message });
  const read = await expectRejected(
    'POST',
    `/v1/messages/${sent.body.messageId}/read`,
    { token: t['@b'], headers: key },
    400,
    'VALIDATION_FAILED',
  );
  expect(read.message).toContain('retried without it, this request is refused or changes nothing a second time');
  // Reads change nothing: the header is no concern of theirs; the send honors it.
  expect((await server.call('GET', '/v1/inbox/count', { token: t['@b'], headers: key })).status).toBe(200);
  expect((await server.call('POST', '/v1/messages', { token: t['@a'], body: message, headers: key })).status).toBe(201);
});

test('Idempotency-Key given twice: two keys are refused naming both (nothing sent); one key twice is that key', async () => {
  const before = await server.eventCount();
  const twoKeys = await postWithRawHeaders(t['@a'], ['Idempotency-Key', 'twice-1', 'idempotency-key', 'twice-2'], message);
  expect([twoKeys.status, twoKeys.body.code, twoKeys.body.field]).toEqual([400, 'VALIDATION_FAILED', 'Idempotency-Key']);
  expect(twoKeys.body.message).toContain("given 2 times with different keys ('twice-1', 'twice-2')");
  expect(await server.eventCount()).toBe(before);

  const sameKey = ['Idempotency-Key', 'twice-3', 'Idempotency-Key', 'twice-3'];
  const first = await postWithRawHeaders(t['@a'], sameKey, message);
  expect(first.status).toBe(201);
  // The key is 'twice-3' itself (not Node's joined "twice-3, twice-3"): a retry with it once returns the original.
  const retry = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: message,
    headers: { 'idempotency-key': 'twice-3' },
  });
  expect([retry.body, retry.headers.get('idempotent-replayed')]).toEqual([first.body, 'true']);
});

test('GET /v1/messages: tags as CSV, pagination, unknown and inapplicable filters', async () => {
  const tagged = await server.call('POST', '/v1/messages', { token: t['@a'], body: { ...message, tags: ['ops', 'deploy'] } });
  await server.call('POST', '/v1/messages', { token: t['@a'], body: { ...message, tags: ['misc'] } });
  const byTags = await server.call('GET', '/v1/messages?status=all&tags=deploy,ops', { token: t['@b'] });
  expect(byTags.body.messages.map((m: any) => m.messageId)).toEqual([tagged.body.messageId]);
  const page = await server.call('GET', '/v1/messages?status=all&limit=1', { token: t['@b'] });
  expect(page.body.messages).toHaveLength(1);
  const next = await server.call('GET', `/v1/messages?status=all&limit=1&cursor=${page.body.nextCursor}`, { token: t['@b'] });
  expect(next.body.messages[0].messageId).not.toBe(page.body.messages[0].messageId);
  const outbox = await server.call('GET', '/v1/messages?box=outbox&to=@b&limit=200', { token: t['@a'] });
  expect(outbox.body.messages.map((m: any) => m.messageId)).toContain(tagged.body.messageId);

  const inapplicable = await expectRejected(
    'GET',
    '/v1/messages?box=outbox&status=unread',
    { token: t['@a'] },
    400,
    'FILTER_NOT_APPLICABLE',
  );
  expect(inapplicable).toMatchObject({ filter: 'status', box: 'outbox', applicable: expect.arrayContaining(['to']) });
  const unknown = await expectRejected('GET', '/v1/messages?sender=@a', { token: t['@b'] }, 400, 'UNKNOWN_FIELD');
  expect(unknown.field).toBe('sender');
  await expectRejected('GET', '/v1/messages?limit=100000', { token: t['@b'] }, 400, 'VALIDATION_FAILED');
});

test('open wake streams per agent are capped with 429', async () => {
  const streams = [await subscribe(server.url, t['@a']), await subscribe(server.url, t['@a'])];
  const third = await server.call('GET', '/v1/wake', { token: t['@a'] });
  expect(third.status).toBe(429);
  expect(third.body.code).toBe('RATE_LIMITED');
  for (const s of streams) s.close();
});

test('per-agent rate limit: 429 RATE_LIMITED with Retry-After; other agents and the admin are unaffected', async () => {
  const limited = await startTestServer({ rateLimitPerSecond: 0.5, rateLimitBurst: 3 });
  try {
    const tokens = await limited.register(['@x', '@y']);
    for (let i = 0; i < 3; i += 1)
      expect((await limited.call('GET', '/v1/inbox/count', { token: tokens['@x'] })).status).toBe(200);
    const before = await limited.eventCount();
    const refused = await limited.call('POST', '/v1/messages', { token: tokens['@x'], body: message });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 2 });
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(await limited.eventCount()).toBe(before);
    expect((await limited.call('GET', '/v1/inbox/count', { token: tokens['@y'] })).status).toBe(200);
    expect((await limited.call('GET', '/v1/agents', { token: limited.adminToken })).status).toBe(200);
  } finally {
    await limited.close();
  }
});

// A JSON-RPC batch of 100 tool calls counted as one request: 50 requests/s let one agent make 5000 tool calls a second.
test('a JSON-RPC batch at POST /mcp counts each of its messages against the rate limit; one past the burst is refused', async () => {
  // One request per 100 s (the limiter reads the wall clock): at 0.5/s a loaded machine refilled a token between the
  // batch that spent the burst and the request that must be refused.
  const limited = await startTestServer({ rateLimitPerSecond: 0.01, rateLimitBurst: 5 });
  try {
    const tokens = await limited.register(['@x', '@y', '@z']);
    const batch = (token: string, calls: Array<[string, Record<string, unknown>]>) =>
      limited.call('POST', '/mcp', {
        token,
        headers: { accept: 'application/json, text/event-stream' },
        body: calls.map(([name, args], id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })),
      });
    const counts = await batch(
      tokens['@x'],
      Array.from({ length: 5 }, () => ['unread_count', {}]),
    );
    expect(counts.status).toBe(200);
    expect(counts.body).toHaveLength(5); // every call answered
    const next = await limited.call('GET', '/v1/inbox/count', { token: tokens['@x'] });
    expect(next).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } }); // the five used the whole burst

    for (let i = 0; i < 3; i += 1)
      expect((await limited.call('GET', '/v1/inbox/count', { token: tokens['@y'] })).status).toBe(200);
    const before = await limited.eventCount();
    const sends = Array.from({ length: 3 }, (_, i): [string, Record<string, unknown>] => [
      'add_message',
      { to: '@z', subject: `batch ${i}`, body: 'x' },
    ]);
    const refused = await batch(tokens['@y'], sends);
    expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED', requests: 3, burst: 5 } });
    expect(refused.body.message).toContain('this request counts as 3 (a JSON-RPC batch of 3 messages)');
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.retryAfterSeconds));
    const tooBig = await batch(
      tokens['@z'],
      Array.from({ length: 6 }, () => sends[0]),
    );
    expect(tooBig).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', messages: 6, limit: 5 } });
    expect(await limited.eventCount()).toBe(before);
  } finally {
    await limited.close();
  }
});

test('a request that outlives the timeout is 503 UNAVAILABLE that says a send may still apply; the same key then returns it once', async () => {
  // A deadline every other request of the test (register, the retry) meets on a loaded machine; the send waits ten.
  const slow = await startTestServer({ requestTimeoutMs: 1000, awaitProjectionMs: 10_000 });
  try {
    const { '@x': x, '@y': y } = await slow.register(['@x', '@y']);
    // The views stall (their store holds its applies): a send waits awaitProjectionMs for them. Not runner.stop(): a
    // stopped runner answers its waits at once (the views advance no more: close() settles what is under way).
    const held = holdApplies(slow.mailbox.projections);
    const headers = { 'idempotency-key': 'slow-1' };
    const before = await slow.eventCount();
    const timedOut = await slow.call('POST', '/v1/messages', { token: x, body: { ...message, to: '@y' }, headers });
    expect(timedOut.status).toBe(503);
    expect(timedOut.body).toMatchObject({ code: 'UNAVAILABLE', timeoutMs: 1000, retryAfterSeconds: 5 });
    expect(timedOut.headers.get('retry-after')).toBe('5');
    expect(timedOut.body.message).toContain('same Idempotency-Key');
    expect(await slow.eventCount()).toBe(before + 1); // it was applied, as the message warned
    held.release();
    const retried = await slow.call('POST', '/v1/messages', { token: x, body: { ...message, to: '@y' }, headers });
    // The timed-out request wrote it: the retry is a replay (the original 201 and body, and the header), writing nothing.
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(await slow.eventCount()).toBe(before + 1);
    expect((await slow.call('GET', '/v1/messages', { token: y })).body.messages.map((m: any) => m.messageId)).toEqual([
      retried.body.messageId,
    ]);
  } finally {
    await slow.close();
  }
});
