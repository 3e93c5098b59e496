/**
 * Wake streams under revocation and under a crowd, on both wake buses (in
 * process and Redis pub/sub): retiring an agent ends its open streams at once
 * with a final `revoked` event, and nothing reaches them afterwards, while
 * other agents' streams carry on; the per-agent cap holds under 48
 * concurrent opens (exactly the cap open, the rest 429 in the envelope).
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { startRedis, type TestRedis } from '../support/redisServer';
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe } from './wakeSubscriber';

const CAP = 16;

describe.each([
  ['in-process wake bus', false],
  ['Redis wake bus', true],
])('%s', (_label, useRedis) => {
  let redis: TestRedis | null = null;
  let server: TestServer;
  let t: Record<string, string>;

  beforeAll(async () => {
    redis = useRedis ? await startRedis() : null;
    server = await startTestServer({
      maxWakeStreamsPerAgent: CAP,
      ...(redis ? { redisUrl: redis.url, redisNamespace: `revoke-${randomUUID().slice(0, 8)}`, redisTimeoutMs: 5000 } : {}),
    });
    t = await server.register(['@r', '@s', '@crowd', '@sender']);
  });
  afterAll(async () => {
    await server.close();
    await redis?.stop();
  });

  const send = async (to: string) => {
    const { status, body } = await server.call('POST', '/v1/messages', {
      token: t['@sender'],
      body: { to, subject: `to ${to}`, body: 'x' },
    });
    expect(status).toBe(201);
    return body.messageId as string;
  };

  test('retiring @r ends its two open streams with `revoked`; a later send reaches neither; @s carries on', async () => {
    const [r1, r2, s] = [
      await subscribe(server.url, t['@r']),
      await subscribe(server.url, t['@r']),
      await subscribe(server.url, t['@s']),
    ];
    for (const stream of [r1, r2, s]) await stream.next((e) => e.event === 'sync');
    const before = await send('@r');
    await r1.next((e) => e.event === 'wake' && e.data.messageId === before);

    const retired = await server.call('DELETE', '/v1/agents/@r', { token: server.adminToken });
    expect(retired.status).toBe(200);
    for (const stream of [r1, r2]) {
      const revoked = await stream.next((e) => e.event === 'revoked', 2000);
      expect(revoked.data).toMatchObject({ identity: '@r' });
      await stream.ended; // the server closed it
      expect(stream.events[stream.events.length - 1].event).toBe('revoked');
    }

    const after = await send('@r');
    const toS = await send('@s');
    await s.next((e) => e.event === 'wake' && e.data.messageId === toS); // positive signal: wakes after the send were delivered
    for (const stream of [r1, r2]) expect(stream.wakes().map((w) => w.messageId)).not.toContain(after);
    expect(s.events.some((e) => e.event === 'revoked')).toBe(false);
    // And @r cannot come back on its old token.
    expect((await fetch(`${server.url}/v1/wake`, { headers: { authorization: `Bearer ${t['@r']}` } })).status).toBe(401);
    s.close();
  });

  test(`48 concurrent opens by one agent: exactly ${CAP} streams open, the rest 429 RATE_LIMITED in the envelope`, async () => {
    // Raw sockets, all connected first and then written in one go, so that the server reads 48 requests at once.
    const sockets = await Promise.all(
      Array.from(
        { length: 48 },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => resolve(socket));
            socket.on('error', reject);
          }),
      ),
    );
    const answers = sockets.map(
      (socket) =>
        new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (chunk) => {
            text += chunk.toString();
            // An open stream: its head and the sync event; a refusal: the whole JSON body (the server closes after it).
            if (/^HTTP\/1\.1 200/.test(text) ? text.includes('event: sync') : text.includes('}')) resolve(text);
          });
          socket.on('close', () => resolve(text));
        }),
    );
    // On Redis, hold every open in the middle (Redis paused: the subscribe and the count wait for it), so that all
    // 48 are in flight at once; a cap checked before the wait but counted after it let all 48 through.
    redis?.pause!();
    for (const socket of sockets)
      socket.write(`GET /v1/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t['@crowd']}\r\n\r\n`);
    try {
      if (redis) {
        // Refusals need no Redis: they arrive while it is paused (bounded wait: the old code answered none of them).
        const refusals = answers.map((answer) => answer.then((text) => text.startsWith('HTTP/1.1 429')));
        const until = Date.now() + 3000;
        while (
          Date.now() < until &&
          (await Promise.all(refusals.map((r) => Promise.race([r, false])))).filter(Boolean).length < 48 - CAP
        ) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        redis.resume!();
      }
      const texts = await Promise.all(answers);
      const statuses = texts.map((text) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]));
      expect(statuses.filter((s) => s === 200)).toHaveLength(CAP);
      expect(statuses.filter((s) => s === 429)).toHaveLength(48 - CAP);
      for (const refused of texts.filter((text) => text.startsWith('HTTP/1.1 429'))) {
        const body = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
        expect(body).toMatchObject({ code: 'RATE_LIMITED', error: expect.any(String), message: expect.any(String), limit: CAP });
        expect(refused.toLowerCase()).toContain('retry-after: 5');
      }
    } finally {
      redis?.resume!();
      for (const socket of sockets) socket.destroy();
    }
    // Closed streams free their slots.
    const until = Date.now() + 5000;
    let status = 0;
    while (Date.now() < until && status !== 200) {
      const abort = new AbortController();
      const again = await fetch(`${server.url}/v1/wake`, {
        headers: { authorization: `Bearer ${t['@crowd']}` },
        signal: abort.signal,
      });
      status = again.status;
      abort.abort();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
  });
});
