/**
 * Requests node's HTTP parser refuses before they are requests (a garbage request line, a head over node's limit,
 * Content-Length with Transfer-Encoding, headers not in within the request timeout) are answered on the raw socket
 * (400, 431, 408), and were counted nowhere: an operator watching mailbox_http_request_duration_seconds saw nothing
 * while clients got 400s and 431s. Each is now counted once, under method and route "(unparsed)" with the status its
 * client got; what the client sent never becomes a label (a hundred different garbage lines make one series). A bad
 * chunked body, refused by the parser after its request reached its route, was counted 499 (answered to nobody): it is
 * counted under its route with the 400 its client got; a head its client closed the connection in the middle of is
 * counted 499 (closed by its client), as a request of a route is. None writes an event.
 */
import net from 'node:net';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

// A short request timeout for the 408 case; long enough for the test's own requests on a loaded machine.
const TIMEOUT_MS = 2000;

let server: TestServer;
let port: number;
let tokens: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer({ requestTimeoutMs: TIMEOUT_MS });
  tokens = await server.register(['@a', '@b', '@c']);
  port = Number(new URL(server.url).port);
});
afterAll(() => server.close());

/** Writes `raw` on a fresh socket (ending it unless `keepOpen`) and resolves with the status line's code once closed. */
function rawRequest(raw: string, keepOpen = false): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined); // the server may reset after answering
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0)));
    socket.setTimeout(30_000, () => socket.destroy());
    if (keepOpen) socket.write(raw);
    else socket.end(raw);
  });
}

/** The request-duration counts /metrics serves, by their labels ({method,route,status} as written). */
async function counts(): Promise<Map<string, number>> {
  const { status, body } = await server.call('GET', '/metrics');
  expect(status).toBe(200);
  const found = new Map<string, number>();
  for (const [, labels, value] of String(body).matchAll(/^mailbox_http_request_duration_seconds_count\{(.*)\} (\S+)$/gm))
    found.set(labels, Number(value));
  return found;
}

const unparsed = (status: number) => `method="(unparsed)",route="(unparsed)",status="${status}"`;

/** What changed between two readings of the counts (series that grew, by how much), the readings' own GET /metrics aside. */
const grown = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries(
    [...after]
      .filter(([labels, n]) => n !== (before.get(labels) ?? 0) && !labels.includes('route="/metrics"'))
      .map(([l, n]) => [l, n - (before.get(l) ?? 0)]),
  );

const auth = () => `Authorization: Bearer ${tokens['@a']}\r\n`;

test('a garbage request line and a head over the limit are counted as (unparsed), with the 400 and 431 their clients got', async () => {
  const events = await server.eventCount();
  const before = await counts();
  expect(await rawRequest('THIS IS NOT HTTP\r\n\r\n')).toBe(400);
  expect(await rawRequest(`GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Big: ${'a'.repeat(40 * 1024)}\r\n\r\n`)).toBe(
    431,
  );
  expect(
    await rawRequest(
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\n` +
        'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    ),
  ).toBe(400);
  expect(grown(before, await counts())).toEqual({
    [unparsed(400)]: 2,
    [unparsed(431)]: 1,
  });
  expect(await server.eventCount()).toBe(events);
});

test('what a refused request names never becomes a label: many different garbage lines are one series', async () => {
  const before = await counts();
  for (let i = 0; i < 20; i++) expect(await rawRequest(`GARBAGE-${i} /path-${i}?q=${i} NOT/HTTP\r\n\r\n`)).toBe(400);
  const after = await counts();
  expect(grown(before, after)).toEqual({ [unparsed(400)]: 20 });
  const text = String((await server.call('GET', '/metrics')).body);
  expect(text).not.toContain('GARBAGE');
  expect(text).not.toContain('path-1');
});

test('headers not in within the request timeout: counted as (unparsed) with the 408 its client got', async () => {
  const before = await counts();
  // The start of a head, never its end: node answers 408 at the request timeout.
  expect(await rawRequest(`GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Slow: `, true)).toBe(408);
  const after = await counts();
  expect(grown(before, after)).toEqual({ [unparsed(408)]: 1 });
  // Timed from the connection's opening: at least the request timeout (its sum says so).
  const sum = Number(
    new RegExp(`^mailbox_http_request_duration_seconds_sum\\{${unparsed(408).replace(/[()]/g, '\\$&')}\\} (\\S+)$`, 'm').exec(
      String((await server.call('GET', '/metrics')).body),
    )?.[1],
  );
  expect(sum).toBeGreaterThanOrEqual((TIMEOUT_MS - 100) / 1000);
});

test('a connection that sends nothing (a TCP health check, a preconnect) made no request: its close is counted nowhere', async () => {
  const before = await counts();
  // Nothing written: node closes it at the request timeout (the close is the positive signal), answering 408 or not.
  await rawRequest('', true);
  // A request of the same kind after it, so that the counts read below are known to be read after the close.
  expect(await rawRequest(`GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Slow: `, true)).toBe(408);
  const after = await counts();
  expect(grown(before, after)).toEqual({ [unparsed(408)]: 1 });
});

test('a bad chunked body, refused after its request reached its route, is counted there with its 400, not as 499', async () => {
  const events = await server.eventCount();
  const before = await counts();
  const status = await rawRequest(
    `POST /v1/messages HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\n` +
      'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
  );
  expect(status).toBe(400);
  expect(grown(before, await counts())).toEqual({
    'method="POST",route="/v1/messages",status="400"': 1,
  });
  expect(await server.eventCount()).toBe(events);
});

test('a head its client closed the connection in the middle of is counted as (unparsed) 499, closed by its client', async () => {
  const before = await counts();
  await rawRequest(`GET /v1/inbox/count HTTP/1.1\r\nHost: x\r\n${auth()}X-Half: `); // ended before the head's end
  await waitFor(async () => (await counts()).get(unparsed(499)) === (before.get(unparsed(499)) ?? 0) + 1, {
    what: 'the closed request counted',
    timeoutMs: 20_000,
  });
  expect(grown(before, await counts())).toEqual({ [unparsed(499)]: 1 });
});
