/**
 * Every answer carries `X-Content-Type-Options: nosniff`, so that no browser
 * reads an answer as another type than the one it declares (a JSON message
 * body holding markup taken for HTML): JSON answers and error envelopes, the
 * event streams, the MCP endpoint, the /docs and /console pages, and the
 * answers written on the raw socket to requests that never reach a route.
 */
import net from 'node:net';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b']);
});
afterAll(() => server.close());

const NOSNIFF = 'nosniff';

test.each([
  ['a JSON answer', 'GET', '/v1/inbox/count', true],
  ['an error envelope (401)', 'GET', '/v1/inbox/count', false],
  ['a route that is not one (404)', 'GET', '/v1/nothing-here', true],
  ['a path that does not decode (400, before routing)', 'GET', '/v1/messages/%ff', true],
  ['a send (201)', 'POST', '/v1/messages', true],
  ['/healthz', 'GET', '/healthz', false],
  ['/metrics', 'GET', '/metrics', false],
  ['/openapi.json', 'GET', '/openapi.json', false],
  ['/docs', 'GET', '/docs', false],
  ['/console', 'GET', '/console', false],
])('%s carries X-Content-Type-Options: nosniff', async (_label, method, path, authenticated) => {
  const body = method === 'POST' ? { to: '@b', subject: 's', body: '<script>alert(1)</script>' } : undefined;
  const { headers } = await server.call(method, path, { token: authenticated ? t['@a'] : null, body });
  expect(headers.get('x-content-type-options')).toBe(NOSNIFF);
});

test('an MCP answer carries it', async () => {
  const { status, headers } = await server.call('POST', '/mcp', {
    token: t['@a'],
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
  expect(status).toBe(200);
  expect(headers.get('x-content-type-options')).toBe(NOSNIFF);
});

test('an event stream (GET /v1/wake) carries it', async () => {
  const controller = new AbortController();
  const response = await fetch(`${server.url}/v1/wake`, {
    headers: { authorization: `Bearer ${t['@a']}` },
    signal: controller.signal,
  });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  expect(response.headers.get('x-content-type-options')).toBe(NOSNIFF);
  controller.abort();
});

test('an answer written on the raw socket (headers too large) carries it', async () => {
  const port = Number(new URL(server.url).port);
  const head = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')[0]));
    socket.end(`GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
  });
  expect(head).toMatch(/^HTTP\/1\.1 431 /);
  expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
});
