/**
 * Views in Redis that become another log's (another mailbox took the namespace over). /readyz answered from the
 * projector's verdict alone, which comes at its next look (each second): until then a probe that found the views
 * another log's said 503 "Not ready" with Retry-After, as for an outage a retry mends. Now /readyz is "Operator action
 * needed" (views "foreign", no Retry-After) as soon as a look of the store finds it (its own probe, or any read), a read
 * that finds it has the projector look at once, and a command's answer never says its views will catch up: they are
 * another log's. Real redis-server, two mailboxes on one namespace, three agents each.
 */
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { parseConfig, type MailboxConfigInput } from '../../src/config';
import { startServer, type RunningServer } from '../../src/server';
import { ADMIN_TOKEN, silentLogger, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let admin: Redis;
const servers: RunningServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.close();
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

async function serve(config: MailboxConfigInput): Promise<RunningServer> {
  const server = await startServer(
    parseConfig({
      port: 0,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      dataDir: tempDir(),
      redisUrl: redis.url,
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
      ...config,
    }),
    { logger: silentLogger, print: () => undefined },
  );
  servers.push(server);
  return server;
}

async function call(url: string, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(url + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: JSON.parse(await response.text()) };
}

async function registerAll(url: string): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const identity of ['@ana', '@bo', '@cy']) {
    const { status, body } = await call(url, 'POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(status).toBe(201);
    tokens[identity] = body.token;
  }
  return tokens;
}

const operatorNeededForeign = {
  code: 'UNAVAILABLE',
  error: 'Operator action needed',
  operatorAction: 'mailbox projections rebuild --take-over',
  checks: { projections: { views: 'foreign', viewsProblem: expect.stringContaining('belong to another event log') } },
};

test("taken over before its projector looked: /readyz says operator action needed at once, and a send says its views are another log's", async () => {
  const ns = `takeover-${randomUUID().slice(0, 8)}`;
  const first = await serve({ redisNamespace: ns });
  const log1 = await registerAll(first.url);
  const sent = await call(first.url, 'POST', '/v1/messages', log1['@ana'], { to: '@bo', subject: 'before', body: 'x' });
  expect(sent.status).toBe(201);

  // Its projector has not looked since (stopped: no look comes), and another mailbox takes the namespace over.
  await first.mailbox.runner.stop();
  const second = await serve({ redisNamespace: ns, projectionsOnForeign: 'take-over' });
  await second.mailbox.viewsReady;
  const log2 = await registerAll(second.url);

  const readiness = await call(first.url, 'GET', '/readyz');
  expect(readiness.status).toBe(503);
  expect(readiness.retryAfter).toBeNull();
  expect(readiness.body).toMatchObject(operatorNeededForeign);
  expect(first.mailbox.runner.getStatus().views).toBe('own'); // said before the projector found it

  // Reads refuse the other log's views; a send is durable in its own log and says the views will not show it.
  const listing = await call(first.url, 'GET', '/v1/messages', log1['@bo']);
  expect(listing).toMatchObject({ status: 503, retryAfter: null, body: { error: 'Operator action needed' } });
  const after = await call(first.url, 'POST', '/v1/messages', log1['@cy'], { to: '@bo', subject: 'after', body: 'y' });
  expect(after.status).toBe(201);
  expect(after.body.warnings).toEqual([
    expect.objectContaining({ code: 'VIEWS_LAGGING', message: expect.stringContaining('belong to another event log') }),
  ]);
  expect(after.body.warnings[0].message).not.toContain('once they catch up');
  // The other log's @bo never sees this log's mail.
  const inbox2 = await call(second.url, 'GET', '/v1/messages', log2['@bo']);
  expect(inbox2.body.messages).toEqual([]);
});

test("a read that finds the views another log's: /readyz says so at once, and the projector looks then, not at its next look", async () => {
  const ns = `takeover-${randomUUID().slice(0, 8)}`;
  const first = await serve({ redisNamespace: ns });
  const log1 = await registerAll(first.url);
  await call(first.url, 'POST', '/v1/messages', log1['@ana'], { to: '@bo', subject: 'before', body: 'x' });

  // The active generation recorded as another log's, as a take-over leaves it.
  const [logKey] = await admin.keys(`${ns}:v*:{${ns}}:log`);
  expect(logKey).toBeDefined();
  await admin.set(logKey, 'log-of-another-mailbox');

  const listing = await call(first.url, 'GET', '/v1/messages', log1['@cy']);
  expect(listing).toMatchObject({ status: 503, retryAfter: null, body: { error: 'Operator action needed' } });
  const readiness = await call(first.url, 'GET', '/readyz');
  expect(readiness).toMatchObject({ status: 503, retryAfter: null, body: operatorNeededForeign });
  await waitFor(() => first.mailbox.runner.getStatus().views === 'foreign', {
    what: 'the projector displaced',
    timeoutMs: 10_000,
  });
  const sent = await call(first.url, 'POST', '/v1/messages', log1['@ana'], { to: '@cy', subject: 'after', body: 'y' });
  expect(sent.status).toBe(201);
  expect(sent.body.warnings[0].message).toContain('belong to another event log');
});
