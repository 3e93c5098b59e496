/**
 * The API as a generic HTTP client, a proxy or a generated client sees it: a HEAD
 * of an event stream (`curl -I`, a proxy's health check) is answered with the
 * stream's headers and ends; every answer's status is one that the OpenAPI
 * document lists for its operation; a GET's body, a body that starts with a byte
 * order mark, and a query parameter of the operations endpoints are honored or
 * refused, never ignored; OPTIONS names the methods a route really takes.
 */
import http from 'node:http';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { startTestServer, type TestServer } from '../support/httpServer';

type Json = Record<string, any>;
let server: TestServer;
let t: Record<string, string>;
const document = buildOpenApiDocument() as Json;

beforeAll(async () => {
  server = await startTestServer({ maxWakeStreamsPerAgent: 1 });
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

/** One request on its own connection, with a body whatever the method (fetch refuses one on GET and HEAD). */
function raw(
  method: string,
  path: string,
  { token, body, headers = {} }: { token?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: any }> {
  const url = new URL(server.url + path);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent: false,
        headers: {
          ...headers,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
        });
      },
    );
    request.setTimeout(3000, () => request.destroy(new Error(`${method} ${path}: no complete answer within 3 s`)));
    request.on('error', reject);
    request.end(body);
  });
}

/** The statuses the document lists for `method path` (an OpenAPI path template). */
const documented = (method: string, template: string) => Object.keys(document.paths[template][method].responses).map(Number);

describe('HEAD of an event stream', () => {
  test.each([
    ['/v1/wake', () => t['@a']],
    ['/v1/audit/stream', () => server.adminToken],
  ])('HEAD %s answers the stream headers and ends, holding no stream open', async (path, token) => {
    const head = await raw('HEAD', path, { token: token() });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(head.text).toBe('');
  });

  test('HEADs of /v1/wake take no place of the per-agent cap: the GET after them opens', async () => {
    for (let i = 0; i < 3; i++) expect((await raw('HEAD', '/v1/wake', { token: t['@b'] })).status).toBe(200);
    const response = await fetch(`${server.url}/v1/wake`, { headers: { authorization: `Bearer ${t['@b']}` } });
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    } finally {
      await response.body?.cancel();
    }
  });
});

describe('every refusal is a status the document lists for its operation', () => {
  const Z = '00000000-0000-4000-8000-000000000000';
  const big = JSON.stringify({ pad: 'x'.repeat(400_000) }); // over the request limit (4 x 64 KiB + 64 KiB)
  test.each([
    ['get', '/v1/inbox/count?status=read', '/v1/inbox/count', 'a', undefined, 400, 'UNKNOWN_FIELD'],
    ['get', '/v1/inbox/count?x=%ZZ', '/v1/inbox/count', 'a', undefined, 400, 'VALIDATION_FAILED'],
    ['get', '/v1/heartbeat?agent=@a', '/v1/heartbeat', 'admin', undefined, 400, 'UNKNOWN_FIELD'],
    ['get', '/v1/wake?since=3', '/v1/wake', 'a', undefined, 400, 'UNKNOWN_FIELD'],
    ['post', `/v1/messages/${Z}/read`, '/v1/messages/{id}/read', 'a', big, 413, 'PAYLOAD_TOO_LARGE'],
    ['post', `/v1/messages/${Z}/archive`, '/v1/messages/{id}/archive', 'a', big, 413, 'PAYLOAD_TOO_LARGE'],
    ['post', `/v1/messages/${Z}/unarchive`, '/v1/messages/{id}/unarchive', 'a', big, 413, 'PAYLOAD_TOO_LARGE'],
    ['delete', '/v1/agents/@c', '/v1/agents/{identity}', 'admin', big, 413, 'PAYLOAD_TOO_LARGE'],
    ['post', '/v1/agents/@c/token', '/v1/agents/{identity}/token', 'admin', big, 413, 'PAYLOAD_TOO_LARGE'],
    ['post', '/mcp', '/mcp', 'a', big, 413, 'PAYLOAD_TOO_LARGE'],
    ['post', '/mcp', '/mcp', 'a', '{"jsonrpc": ', 400, 'VALIDATION_FAILED'],
    ['get', '/healthz?x=%ZZ', '/healthz', null, undefined, 400, 'VALIDATION_FAILED'],
  ])('%s %s', async (method, path, template, who, body, status, code) => {
    const before = await server.eventCount();
    const token = who === null ? undefined : who === 'admin' ? server.adminToken : t[`@${who}`];
    const answer = await raw(method.toUpperCase(), path, { token, body });
    // POST /mcp answers a body it cannot read as JSON-RPC's Parse error, the envelope in its data.
    const envelope = answer.json?.code !== undefined ? answer.json : answer.json?.error?.data;
    expect({ status: answer.status, code: envelope?.code }).toEqual({ status, code });
    expect(documented(method, template)).toContain(status);
    expect(document.paths[template][method].responses[String(status)].description).toContain(code);
    expect(await server.eventCount()).toBe(before);
  });
});

describe('inputs a generic client sends are honored or refused, never ignored', () => {
  test('a GET with a body (filters put in it) is refused, not answered as if it had been read', async () => {
    await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@c', subject: 'unread one', body: '...' } });
    const before = await server.eventCount();
    const answer = await raw('GET', '/v1/messages', { token: t['@c'], body: JSON.stringify({ status: 'read' }) });
    expect({ status: answer.status, code: answer.json.code, field: answer.json.field }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body',
    });
    expect(answer.json.message).toMatch(/GET \/v1\/messages takes no request body.*query parameters/);
    expect(await server.eventCount()).toBe(before); // not even a seen mark: nothing was listed
    // The same listing without a body, or with an empty one, is served.
    expect((await raw('GET', '/v1/messages?status=read', { token: t['@c'] })).json.messages).toEqual([]);
    expect((await raw('GET', '/v1/messages', { token: t['@c'], body: '' })).status).toBe(200);
  });

  test('a JSON body that starts with a byte order mark is read as the JSON after it', async () => {
    const answer = await raw('POST', '/v1/messages', {
      token: t['@a'],
      body: '\uFEFF' + JSON.stringify({ to: '@b', subject: 'from PowerShell', body: 'saved as UTF-8 with a BOM' }),
    });
    expect(answer.status).toBe(201);
    const got = await server.call('GET', `/v1/messages/${answer.json.messageId}`, { token: t['@b'] });
    expect(got.body).toMatchObject({ from: '@a', to: '@b', subject: 'from PowerShell', body: 'saved as UTF-8 with a BOM' });
  });

  test.each(['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs'])(
    'GET %s?verbose=1 is refused (UNKNOWN_FIELD), as every other route refuses a parameter it does not take',
    async (path) => {
      const answer = await raw('GET', `${path}?verbose=1`);
      expect({ status: answer.status, code: answer.json?.code, field: answer.json?.field }).toEqual({
        status: 400,
        code: 'UNKNOWN_FIELD',
        field: 'verbose',
      });
      expect((await raw('GET', path)).status).toBe(200);
    },
  );

  test('OPTIONS /mcp names POST alone, as GET and DELETE /mcp (405) do', async () => {
    const options = await raw('OPTIONS', '/mcp', { token: t['@a'] });
    expect({ status: options.status, allow: options.headers.allow, code: options.json.code }).toEqual({
      status: 405,
      allow: 'POST',
      code: 'METHOD_NOT_ALLOWED',
    });
    for (const method of ['GET', 'DELETE']) expect((await raw(method, '/mcp', { token: t['@a'] })).headers.allow).toBe('POST');
  });
});
