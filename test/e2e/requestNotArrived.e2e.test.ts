/**
 * A request whose body was still arriving when the request timeout (MAILBOX_REQUEST_TIMEOUT_MS) closed it was answered
 * 408 REQUEST_TIMEOUT, yet recorded in the rejections and /metrics as 400 VALIDATION_FAILED "aborted"; and node closed
 * it 60 to 90 s after it began for a timeout of 30 s (it gave a request whose headers had arrived its 60 s headers
 * timeout, and looked for late requests every 30 s). It is now closed when due and recorded as what the client got; a
 * request whose client closed the connection before its body arrived is recorded as that (499, answered to nobody).
 * Neither writes an event.
 */
import net from 'node:net';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

// Long enough for the test's own requests (registering, reading records) on a loaded machine: they have it too.
const TIMEOUT_MS = 1000;

/** Opens a connection to `server` and sends a send's headers and the start of its body, for `token`. */
function startSlowSend(server: TestServer, token: string) {
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(answer)));
  socket.write(
    `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"to": "@b", ',
  );
  return { socket, closed };
}

async function newestRejection(server: TestServer, what: string): Promise<Record<string, unknown>> {
  let newest: Record<string, unknown> | undefined;
  await waitFor(
    async () => {
      const { body } = await server.call('GET', '/v1/audit/rejections?limit=1', { token: server.adminToken });
      newest = body.rejections[0];
      return newest !== undefined;
    },
    { what },
  );
  return newest!;
}

const metricLines = async (server: TestServer, pattern: RegExp) =>
  String((await server.call('GET', '/metrics')).body)
    .split('\n')
    .filter((line) => pattern.test(line));

test('a body still arriving at the request timeout is closed when due, and recorded as the 408 its client got', async () => {
  const server = await startTestServer({ requestTimeoutMs: TIMEOUT_MS });
  try {
    const { '@a': a } = await server.register(['@a', '@b', '@c']);
    const before = await server.eventCount();
    const started = performance.now();
    const { socket, closed } = startSlowSend(server, a);
    const trickle = setInterval(() => socket.writable && socket.write(' '), 50); // never the whole body in time
    const answer = await closed;
    clearInterval(trickle);
    const elapsed = performance.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    const told = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(told).toMatchObject({ code: 'REQUEST_TIMEOUT', timeoutMs: TIMEOUT_MS });
    expect(told.message).toContain(`within ${TIMEOUT_MS} ms`);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 3000); // node's own check came 60 s and more after the start

    expect(await newestRejection(server, 'the timed-out send recorded')).toEqual(
      expect.objectContaining({
        agent: '@a',
        command: 'send',
        surface: 'http',
        code: 'REQUEST_TIMEOUT',
        status: 408,
        message: told.message,
      }),
    );
    expect(await metricLines(server, /^mailbox_commands_total\{command="send".*outcome="rejected"/)).toEqual([
      'mailbox_commands_total{command="send",surface="http",outcome="rejected",code="REQUEST_TIMEOUT"} 1',
    ]);
    // Every request answered is in the duration histogram with its status: this one was left out.
    expect(
      await metricLines(server, /^mailbox_http_request_duration_seconds_count\{method="POST",route="\/v1\/messages"/),
    ).toEqual(['mailbox_http_request_duration_seconds_count{method="POST",route="/v1/messages",status="408"} 1']);
    expect(await server.eventCount()).toBe(before);
  } finally {
    await server.close();
  }
});

test('a client that closes the connection before its body arrived is recorded as that, not as a refusal it never got', async () => {
  const server = await startTestServer();
  try {
    const { '@a': a } = await server.register(['@a', '@b', '@c']);
    const before = await server.eventCount();
    const arrived = new Promise((resolve) => server.http.app.server.once('request', resolve));
    const { socket } = startSlowSend(server, a);
    await arrived; // the server has the request and reads its body
    socket.destroy();

    expect(await newestRejection(server, 'the abandoned send recorded')).toEqual(
      expect.objectContaining({ agent: '@a', command: 'send', code: 'CLIENT_CLOSED_REQUEST', status: 499 }),
    );
    expect((await newestRejection(server, 'the record')).message).toContain('closed before the whole request arrived');
    expect(await metricLines(server, /^mailbox_commands_total\{command="send".*outcome="rejected"/)).toEqual([
      'mailbox_commands_total{command="send",surface="http",outcome="rejected",code="CLIENT_CLOSED_REQUEST"} 1',
    ]);
    // Abandoned, answered to nobody: in the duration histogram all the same, as nginx logs it (499).
    expect(
      await metricLines(server, /^mailbox_http_request_duration_seconds_count\{method="POST",route="\/v1\/messages"/),
    ).toEqual(['mailbox_http_request_duration_seconds_count{method="POST",route="/v1/messages",status="499"} 1']);
    expect(await server.eventCount()).toBe(before);
  } finally {
    await server.close();
  }
});

test('a wake stream its client leaves is in the duration histogram once, with the 200 it was sent', async () => {
  const server = await startTestServer();
  try {
    const { '@a': a } = await server.register(['@a', '@b', '@c']);
    const leaving = new AbortController();
    const stream = await fetch(`${server.url}/v1/wake`, {
      headers: { authorization: `Bearer ${a}`, accept: 'text/event-stream' },
      signal: leaving.signal,
    });
    expect(stream.status).toBe(200);
    leaving.abort();
    const counted = () => metricLines(server, /^mailbox_http_request_duration_seconds_count\{method="GET",route="\/v1\/wake"/);
    await waitFor(async () => (await counted()).length > 0, { what: 'the stream counted' });
    // A request after it, answered: the stream is counted once, not again when its response closes.
    expect((await server.call('GET', '/v1/inbox/count', { token: a })).status).toBe(200);
    expect(await counted()).toEqual([
      'mailbox_http_request_duration_seconds_count{method="GET",route="/v1/wake",status="200"} 1',
    ]);
  } finally {
    await server.close();
  }
});
