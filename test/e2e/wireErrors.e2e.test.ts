/**
 * Every answer is the envelope `{error, code, message}` with a documented code,
 * down to the requests that never reach a route: a URL that does not decode, a
 * path parameter over the router's limit, and wire-level client errors that
 * node's parser refuses (sent here over raw sockets). None writes an event.
 */
import net from 'node:net';
import { ERROR_STATUS } from '../../src/errors';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let port: number;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  port = Number(new URL(server.url).port);
});
afterAll(() => server.close());

/** Writes `raw` on a fresh socket and resolves with the parsed status line and JSON body of the answer. */
function rawRequest(raw: string | Buffer): Promise<{ status: number; headers: string; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined); // the server may reset after answering
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      try {
        resolve({ status, headers: head, body: JSON.parse(rest.join('\r\n\r\n')) });
      } catch {
        reject(new Error(`not a JSON answer: ${JSON.stringify(text)}`));
      }
    });
    socket.setTimeout(5000, () => socket.destroy());
    socket.end(raw);
  });
}

function expectEnvelope(status: number, body: any, expected: { status: number; code: string }) {
  expect({ status, code: body.code }).toEqual(expected);
  expect(
    Object.keys(body)
      .filter((key) => ['error', 'code', 'message'].includes(key))
      .sort(),
  ).toEqual(['code', 'error', 'message']);
  expect(body).not.toHaveProperty('statusCode');
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  expect(ERROR_STATUS[body.code as keyof typeof ERROR_STATUS]).toBe(status); // a documented code with its own status
}

describe('URL errors fastify raises before routing', () => {
  test.each([
    ['authenticated', true],
    ['unauthenticated', false],
  ])('a path that does not decode (%s) is 400 MALFORMED_REQUEST', async (_label, authenticated) => {
    const before = await server.eventCount();
    const { status, body } = await server.call('GET', '/v1/messages/%ff', { token: authenticated ? t['@a'] : null });
    expectEnvelope(status, body, { status: 400, code: 'MALFORMED_REQUEST' });
    expect(body.message).toMatch(/percent-encod/);
    expect(await server.eventCount()).toBe(before);
  });

  test('a path id over 100 characters is 414 URI_TOO_LONG', async () => {
    const before = await server.eventCount();
    const { status, body } = await server.call('POST', `/v1/messages/${'a'.repeat(101)}/read`, { token: t['@a'] });
    expectEnvelope(status, body, { status: 414, code: 'URI_TOO_LONG' });
    expect(await server.eventCount()).toBe(before);
  });
});

describe('the URL and header limits (16 KiB each)', () => {
  /** `count` tags of `length` characters each, as a query string. */
  const tagsQuery = (count: number, length: number) =>
    Array.from({ length: count }, (_, i) => `tags=${String(i).padStart(length, 't')}`).join('&');

  test('a 20 KB query string is 414 URI_TOO_LONG naming the URL limit and what to do, and writes nothing', async () => {
    const before = await server.eventCount();
    const path = `/v1/messages?${tagsQuery(32, 620)}`;
    expect(path.length).toBeGreaterThan(20_000);
    const { status, body } = await server.call('GET', path, { token: t['@a'] });
    expectEnvelope(status, body, { status: 414, code: 'URI_TOO_LONG' });
    expect(body.message).toBe(
      `The request URL is ${path.length} characters; the limit is 16384 (16 KiB). Use fewer or shorter query parameters: ` +
        'fewer filters at once (e.g. several listings of a few tags each), or shorter values.',
    );
    expect(body).toMatchObject({ length: path.length, limit: 16384 });
    expect(await server.eventCount()).toBe(before);
  });

  test('so is a long query string on a write, unauthenticated too: the limit is met before anything else', async () => {
    const before = await server.eventCount();
    const { status, body } = await server.call('POST', `/v1/messages?${'x'.repeat(17_000)}`, {
      token: null,
      body: { to: '@b', subject: 's', body: 'b' },
    });
    expectEnvelope(status, body, { status: 414, code: 'URI_TOO_LONG' });
    expect(await server.eventCount()).toBe(before);
  });

  test('a URL within the limit is served, with headers within theirs (16 KB of tags, 15 KB of headers)', async () => {
    // 32 tags (the most a filter takes) of 57 characters (at most 64) that each take 9 bytes in a URL: 16 KB of query.
    const tag = (i: number) => encodeURIComponent(`${String(i).padStart(2, '0')}${'两'.repeat(55)}`);
    const path = `/v1/messages?${Array.from({ length: 32 }, (_, i) => `tags=${tag(i)}`).join('&')}`;
    expect(path.length).toBeGreaterThan(16_000);
    expect(path.length).toBeLessThanOrEqual(16_384);
    const { status, body } = await server.call('GET', path, {
      token: t['@a'],
      headers: { 'x-filler': 'f'.repeat(15_000) },
    });
    expect({ status, messages: body.messages }).toEqual({ status: 200, messages: [] });
  });

  test('headers over 16 KiB with a short URL are 431 HEADERS_TOO_LARGE naming their size and limit', async () => {
    const { status, body } = await server.call('GET', '/v1/inbox/count', {
      token: t['@a'],
      headers: { 'x-filler': 'f'.repeat(17 * 1024) },
    });
    expectEnvelope(status, body, { status: 431, code: 'HEADERS_TOO_LARGE' });
    expect(body.message).toMatch(/^The request headers are \d+ bytes; the limit is 16384 \(16 KiB in all\); send fewer/);
  });

  test("a URL past node's own limit on the whole head still hears of the URL limit", async () => {
    const answer = await rawRequest(`GET /v1/messages?${'x'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectEnvelope(answer.status, answer.body, { status: 431, code: 'HEADERS_TOO_LARGE' });
    expect(answer.body.message).toContain('a URL of at most 16 KiB');
    expect(answer.body.message).toContain('fewer or shorter query parameters');
  });
});

describe('wire-level client errors (raw sockets)', () => {
  const auth = () => `Authorization: Bearer ${t['@a']}\r\n`;
  const cases: Array<[string, () => string, number, string]> = [
    [
      'headers over 16 KB',
      () => `GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    [
      "a head past node's limit (40 KB of headers)",
      () => `GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Big: ${'a'.repeat(40 * 1024)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['a garbage request line', () => 'THIS IS NOT HTTP\r\n\r\n', 400, 'MALFORMED_REQUEST'],
    [
      'a bad chunked body',
      () =>
        `POST /v1/messages HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\n` +
        'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
      'MALFORMED_REQUEST',
    ],
    [
      'Content-Length with Transfer-Encoding',
      () =>
        `POST /v1/messages HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\n` +
        'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      400,
      'MALFORMED_REQUEST',
    ],
    [
      'an HTTP/1.1 request without a Host header (a send: it writes nothing)',
      () =>
        `POST /v1/messages HTTP/1.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: 37\r\n\r\n` +
        '{"to":"@b","subject":"s","body":"b"}\n',
      400,
      'MALFORMED_REQUEST',
    ],
    [
      'a control character in a header',
      () => `GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Bad: a\u0001b\r\n\r\n`,
      400,
      'MALFORMED_REQUEST',
    ],
  ];
  test.each(cases)('%s: the envelope with its code, and no event', async (_label, request, status, code) => {
    const before = await server.eventCount();
    const answer = await rawRequest(request());
    expectEnvelope(answer.status, answer.body, { status, code });
    expect(answer.headers.toLowerCase()).toContain('content-type: application/json');
    expect(await server.eventCount()).toBe(before);
  });

  test('without a Host header the answer says to send one; HTTP/1.0 needs none', async () => {
    const noHost = await rawRequest(`GET /v1/inbox/count HTTP/1.1\r\n${auth()}\r\n`);
    expect(noHost.body.message).toContain('needs a Host header');
    const http10 = await rawRequest(`GET /v1/inbox/count HTTP/1.0\r\n${auth()}\r\n`);
    expect(http10.status).toBe(200);
  });

  test('the server keeps serving after them', async () => {
    expect((await server.call('GET', '/v1/inbox/count', { token: t['@b'] })).status).toBe(200);
  });
});
