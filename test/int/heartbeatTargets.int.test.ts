/**
 * Nudge targets against real endpoints on loopback: a webhook server that
 * fails before it succeeds, a command hook process, and a real redis-server.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Redis from 'ioredis';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';

const silent = pino({ level: 'silent' });
const SECRET = 'webhook-secret-for-tests-0123';

interface Received {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A webhook receiver that answers the given statuses in turn (then 200). */
async function webhookServer(statuses: number[]) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const status = statuses[received.length] ?? 200;
      received.push({ status, body, headers: request.headers });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/nudge`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('heartbeat nudge targets', () => {
  let mailbox: Mailbox;
  let heartbeat: Heartbeat | undefined;

  beforeEach(async () => {
    mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silent });
  });
  afterEach(async () => {
    await heartbeat?.stop();
    heartbeat = undefined;
    await mailbox.close();
  });

  /** @a writes to @b and @c; both have been idle forever (never sent or read). */
  async function mailForBandC() {
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'for b', body: 'x' });
    await a.send({ to: '@c', subject: 'for c', body: 'y' });
  }

  // A hook that cannot run refused the start and left the targets it was given open (`mailbox heartbeat`'s nudge
  // publisher, a Redis connection), while a metrics port that cannot be listened on closed them.
  test('a start refused (a hook that cannot run, a metrics port in use) closes the targets it was given', async () => {
    const closed: string[] = [];
    const given = (name: string) => ({
      name,
      appliesTo: () => true,
      deliver: async () => 'delivered' as const,
      close: async () => void closed.push(name),
    });
    await expect(
      startHeartbeat(mailbox, { settings: { hook: '/no/such/hook', metricsPort: null }, targets: [given('a')], logger: silent }),
    ).rejects.toThrow(/the hook's command '\/no\/such\/hook' does not exist/);
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      await expect(
        startHeartbeat(mailbox, { settings: { metricsPort: port }, targets: [given('b')], logger: silent }),
      ).rejects.toThrow(/in use/);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    expect(closed).toEqual(['a', 'b']);
  });

  test('a webhook that fails twice then succeeds receives the nudge once, signed with HMAC-SHA256', async () => {
    const hook = await webhookServer([500, 503]);
    try {
      heartbeat = await startHeartbeat(mailbox, {
        logger: silent,
        schedule: false,
        settings: {
          wakeGraceMs: 0,
          metricsPort: null,
          webhookSecret: SECRET,
          webhookBackoffMs: 5,
          webhookAttempts: 5,
          agents: { '@b': { webhook: hook.url } },
        },
      });
      await mailForBandC();
      await heartbeat.tick();
      await heartbeat.settled();

      expect(hook.received.map((r) => r.status)).toEqual([500, 503, 200]); // only @b has a webhook
      const accepted = hook.received.filter((r) => r.status === 200);
      expect(accepted).toHaveLength(1);
      const nudge = JSON.parse(accepted[0].body);
      expect(nudge).toMatchObject({ type: 'heartbeat/nudge', identity: '@b', unread: 1 });
      expect(new Set(hook.received.map((r) => r.headers['x-mailbox-nudge-id']))).toEqual(new Set([nudge.nudgeId]));
      for (const request of hook.received) {
        const timestamp = request.headers['x-mailbox-timestamp'] as string;
        const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${request.body}`).digest('hex')}`;
        expect(request.headers['x-mailbox-signature']).toBe(expected);
      }
      expect((await heartbeat.metrics.retries.get()).values[0]).toMatchObject({ labels: { target: 'webhook' }, value: 2 });

      await heartbeat.tick(); // same unread set: nothing more
      await heartbeat.settled();
      expect(hook.received).toHaveLength(3);
    } finally {
      await hook.close();
    }
  });

  test('a webhook that takes the connection but does not answer in time is reported as slow, naming the timeout and its setting', async () => {
    const requests: http.ServerResponse[] = [];
    const slow = http.createServer((_request, response) => requests.push(response)); // never answers
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/nudge`;
    try {
      heartbeat = await startHeartbeat(mailbox, {
        logger: silent,
        schedule: false,
        settings: {
          wakeGraceMs: 0,
          metricsPort: null,
          webhookSecret: SECRET,
          webhookTimeoutMs: 150,
          webhookBackoffMs: 5,
          agents: { '@b': { webhook: url } },
        },
      });
      await mailForBandC();
      const report = await heartbeat.settledReport(await heartbeat.tick());
      expect(requests.length).toBeGreaterThan(0); // it was reached
      const failure = report.failed!.find((f) => f.identity === '@b')!;
      expect(failure.error).toBe(
        `webhook ${url} did not answer within 150 ms (MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT): a slow or stuck receiver, or a host that never answers the connection`,
      );
    } finally {
      for (const response of requests) response.destroy();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  test('a webhook answering 404 is not retried, and the nudge is tried again at the next tick', async () => {
    const hook = await webhookServer([404]);
    try {
      heartbeat = await startHeartbeat(mailbox, {
        logger: silent,
        schedule: false,
        settings: {
          wakeGraceMs: 0,
          metricsPort: null,
          webhookSecret: SECRET,
          webhookBackoffMs: 5,
          agents: { '@b': { webhook: hook.url } },
        },
      });
      await mailForBandC();
      await heartbeat.tick();
      await heartbeat.settled();
      expect(hook.received.map((r) => r.status)).toEqual([404]);
      await heartbeat.tick();
      await heartbeat.settled();
      expect(hook.received.map((r) => r.status)).toEqual([404, 200]);
    } finally {
      await hook.close();
    }
  });

  test('the command hook gets the nudge on stdin and in its environment; arguments are never run by a shell', async () => {
    const dir = tempDir('mailbox-hook-');
    const script = path.join(dir, 'hook.js');
    const canary = path.join(dir, 'pwned');
    fs.writeFileSync(
      script,
      `
      const fs = require('fs');
      let input = '';
      process.stdin.on('data', (c) => (input += c));
      process.stdin.on('end', () => fs.appendFileSync(process.argv[2], JSON.stringify({
        stdin: JSON.parse(input), identity: process.env.MAILBOX_NUDGE_IDENTITY, unread: process.env.MAILBOX_NUDGE_UNREAD,
        unreadCount: process.env.MAILBOX_NUDGE_UNREAD_COUNT,
        adminToken: process.env.MAILBOX_ADMIN_TOKEN ?? null, arg: process.argv[3] }) + '\\n'));
    `,
    );
    const out = path.join(dir, 'nudges.jsonl');
    process.env.MAILBOX_ADMIN_TOKEN = ADMIN_TOKEN; // must not leak into the hook
    try {
      heartbeat = await startHeartbeat(mailbox, {
        logger: silent,
        schedule: false,
        settings: {
          wakeGraceMs: 0,
          metricsPort: null,
          optOut: ['@c'],
          hook: [process.execPath, script, out, `$(touch ${canary}); touch ${canary}`],
        },
      });
      await mailForBandC();
      await heartbeat.tick();
      await heartbeat.settled();
    } finally {
      delete process.env.MAILBOX_ADMIN_TOKEN;
    }
    const lines = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      identity: '@b',
      unread: '1',
      unreadCount: '1', // the count under the name the other payloads give it, beside unread
      adminToken: null,
      arg: `$(touch ${canary}); touch ${canary}`,
      stdin: { type: 'heartbeat/nudge', identity: '@b', unread: 1, unreadCount: 1 },
    });
    expect(fs.existsSync(canary)).toBe(false);
  });

  describe('Redis channel', () => {
    let redis: TestRedis;
    let subscriber: Redis;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis.stop();
    });
    afterEach(async () => {
      subscriber?.disconnect();
    });

    test('nudges are published on mailbox:heartbeat:<identity>; a nudge nobody hears is reported as unheard', async () => {
      subscriber = new Redis(redis.url);
      const messages: Array<{ channel: string; nudge: Record<string, unknown> }> = [];
      await subscriber.subscribe('mailbox:heartbeat:@b');
      subscriber.on('message', (channel, text) => messages.push({ channel, nudge: JSON.parse(text) }));
      heartbeat = await startHeartbeat(mailbox, {
        logger: silent,
        schedule: false,
        settings: { wakeGraceMs: 0, metricsPort: null, redisUrl: redis.url },
      });
      await mailForBandC();
      await heartbeat.tick();
      await heartbeat.settled();
      for (let i = 0; i < 100 && messages.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));

      expect(messages).toEqual([
        {
          channel: 'mailbox:heartbeat:@b',
          nudge: expect.objectContaining({ type: 'heartbeat/nudge', identity: '@b', unread: 1 }),
        },
      ]);
      const outcomes = (await heartbeat.metrics.deliveries.get()).values.map((v) => [v.labels.outcome, v.value]);
      expect(outcomes.sort()).toEqual([
        ['delivered', 1],
        ['unheard', 1],
      ]); // @c has no subscriber
    });
  });
});
