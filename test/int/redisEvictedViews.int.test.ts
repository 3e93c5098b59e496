/**
 * A Redis that reaches its maxmemory under an evicting policy (set after the mailbox started, as a managed service's
 * parameter group may) drops the mailbox's keys. Found by a swarm run: 6,154 keys evicted under allkeys-lru, and the
 * server said nothing, /readyz stayed ready and the agents' inboxes and counts were served short as if whole
 * (`mailbox audit verify`: thousands of entries missing). Now the server says so once in its log and /readyz is not
 * ready, naming the remedy, until a rebuild replaces the views (or they are rebuilt from nothing: Redis restarted empty).
 */
import Redis from 'ioredis';
import { recordingLogger } from '../support/recordingLogger';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let server: TestServer | null = null;
const ownRedis = process.env.REDIS_URL ? it.skip : it; // the test sets this server's memory limit

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await server?.close();
  await redis.stop();
});

ownRedis('keys evicted under the views: one log line, and /readyz not ready naming the remedy', async () => {
  const log = recordingLogger();
  server = await startTestServer(
    { redisUrl: redis.url, redisNamespace: `evicted${process.pid}`, redisTimeoutMs: REDIS_TEST_TIMEOUT_MS },
    { logger: log.logger },
  );
  const tokens = await server.register(['@a', '@b', '@c']);
  for (const [from, to] of [
    ['@a', '@b'],
    ['@b', '@c'],
    ['@c', '@a'],
  ]) {
    const sent = await server.call('POST', '/v1/messages', { token: tokens[from], body: { to, subject: 'hi', body: 'x' } });
    expect(sent.status).toBe(201);
  }
  const evictedLines = () => log.lines.filter((line) => /Redis evicted \d+ keys/.test(String(line.msg)));
  // The positive signal that the server has looked at Redis's eviction count at least once: ready, no such line.
  await waitFor(async () => (await server!.call('GET', '/readyz')).status === 200, {
    timeoutMs: 15_000,
    everyMs: 50,
    what: 'ready before the eviction',
  });
  expect(evictedLines()).toHaveLength(0);

  const admin = new Redis(redis.url);
  try {
    const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
    // volatile-lru evicts only keys with a time to live, as the fillers are: the views' own keys stay, so that the
    // eviction does not take their checkpoint with it (views then rebuilt from nothing, whole again at once).
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    await admin.config('SET', 'maxmemory', String(used + 1024 * 1024));
    const filler = 'f'.repeat(10_000);
    for (let i = 0; i < 400; i++) await admin.set(`filler:${i}`, filler, 'EX', 3600);
    expect(Number(/^evicted_keys:(\d+)/m.exec(await admin.info('stats'))![1])).toBeGreaterThan(0);
    await admin.config('SET', 'maxmemory', '0');
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
  } finally {
    admin.disconnect();
  }

  await waitFor(() => evictedLines().length > 0, { timeoutMs: 15_000, everyMs: 50, what: 'the eviction said in the log' });
  const ready = await server.call('GET', '/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body.checks.projectionStore.ok).toBe(false);
  expect(ready.body.checks.projectionStore.error).toMatch(/^Redis evicted \d+ keys/);
  expect(ready.body.checks.projectionStore.error).toContain('mailbox projections rebuild');
  // Said once, not at each look: a few more of the projector's looks at the views (each second) say nothing more.
  const views = server.mailbox.projections;
  const binding = views.binding.bind(views);
  let looks = 0;
  views.binding = () => binding().finally(() => (looks += 1));
  await waitFor(() => looks >= 3, { timeoutMs: 15_000, everyMs: 50, what: 'three more looks at the views' });
  expect((await server.call('GET', '/readyz')).status).toBe(503);
  expect(evictedLines()).toHaveLength(1);
  expect(evictedLines()[0].level).toBe(40);

  // Views rebuilt from nothing (here Redis restarted empty) miss nothing evicted before: ready again, exact counts.
  await redis.restartEmpty!();
  await waitFor(async () => (await server!.call('GET', '/readyz')).status === 200, {
    timeoutMs: 30_000,
    everyMs: 100,
    what: 'ready once the views are rebuilt from the log',
  });
  for (const identity of ['@a', '@b', '@c']) {
    const counted = await server.call('GET', '/v1/inbox/count', { token: tokens[identity] });
    expect({ identity, status: counted.status, unread: counted.body.unreadCount }).toEqual({ identity, status: 200, unread: 1 });
  }
  expect(evictedLines()).toHaveLength(1);
});
