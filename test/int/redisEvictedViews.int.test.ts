/**
 * A Redis that reaches its maxmemory under an evicting policy (set after the mailbox started, as a managed service's
 * parameter group may) drops the mailbox's keys. Found by a swarm run: 6,154 keys evicted under allkeys-lru, and the
 * server said nothing, /readyz stayed ready and the agents' inboxes and counts were served short as if whole
 * (`mailbox audit verify`: thousands of entries missing). Now the server says so once in its log and /readyz is not
 * ready, naming the remedy, until a rebuild replaces the views (or they are rebuilt from nothing: Redis restarted empty).
 */
import { type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import {
  countProjectorLooks,
  liftRedisMemoryLimit,
  limitRedisMemory,
  sendRound,
  startLoggedRedisServer,
  withRedisAdmin,
} from '../support/redisViews';
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
  const started = await startLoggedRedisServer(redis.url, `evicted${process.pid}`);
  server = started.server;
  const { log, tokens } = started;
  await sendRound(server, tokens);
  const evictedLines = () => log.lines.filter((line) => /Redis evicted \d+ keys/.test(String(line.msg)));
  // The positive signal that the server has looked at Redis's eviction count at least once: ready, no such line.
  await waitFor(async () => (await server!.call('GET', '/readyz')).status === 200, {
    timeoutMs: 15_000,
    everyMs: 50,
    what: 'ready before the eviction',
  });
  expect(evictedLines()).toHaveLength(0);

  await withRedisAdmin(redis.url, async (admin) => {
    const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
    // volatile-lru evicts only keys with a time to live, as the fillers are: the views' own keys stay, so that the
    // eviction does not take their checkpoint with it (views then rebuilt from nothing, whole again at once).
    await limitRedisMemory(admin, 'volatile-lru', used + 1024 * 1024);
    const filler = 'f'.repeat(10_000);
    for (let i = 0; i < 400; i++) await admin.set(`filler:${i}`, filler, 'EX', 3600);
    expect(Number(/^evicted_keys:(\d+)/m.exec(await admin.info('stats'))![1])).toBeGreaterThan(0);
    await liftRedisMemoryLimit(admin);
  });

  await waitFor(() => evictedLines().length > 0, { timeoutMs: 15_000, everyMs: 50, what: 'the eviction said in the log' });
  const ready = await server.call('GET', '/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body.checks.projectionStore.ok).toBe(false);
  expect(ready.body.checks.projectionStore.error).toMatch(/^Redis evicted \d+ keys/);
  expect(ready.body.checks.projectionStore.error).toContain('mailbox projections rebuild');
  // Said once, not at each look: a few more of the projector's looks at the views (each second) say nothing more.
  const looks = countProjectorLooks(server);
  await waitFor(() => looks() >= 3, { timeoutMs: 15_000, everyMs: 50, what: 'three more looks at the views' });
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
