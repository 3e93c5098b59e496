/**
 * A rebuild run beside a running server (`mailbox projections rebuild`, an operator's act) switches the views to a new
 * generation; the server followed it and its log said nothing, so an operator reading it never saw the views replaced
 * (an admin's register, retire or token rotation each leave an info line). Each node that sees the switch now says it
 * once, at info: what was done, by what, to which views.
 */
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { rebuildProjections } from '../../src/projections/rebuild';
import { type TestServer } from '../support/httpServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedis, type TestRedis } from '../support/redisServer';
import { countProjectorLooks, sendRound, startLoggedRedisServer, withRedisAdmin } from '../support/redisViews';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let server: TestServer | null = null;
let builder: RedisProjectionStore | null = null;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  await server?.close();
  await builder?.close();
  server = null;
  builder = null;
});

test('the server says, once at info, that a rebuild beside it switched its views: to which generation, from which', async () => {
  const ns = `switchlog${process.pid}`;
  const started = await startLoggedRedisServer(redis.url, ns);
  server = started.server;
  const { log, tokens } = started;
  await sendRound(server, tokens);
  const switchLines = () => log.lines.filter((line) => line.adminAction === 'views switched');
  const before = await server.mailbox.projections.binding();
  expect(switchLines()).toEqual([]);

  // What `mailbox projections rebuild` does, from another connection: its own store over the same namespace.
  builder = new RedisProjectionStore(await connectRedis(redis.url, { name: 'rebuilder', timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
    namespace: ns,
  });
  const result = await rebuildProjections(server.mailbox.eventStore, builder.generations(), {
    settleMs: 200,
    dropPreviousAfterMs: null,
  });
  expect(result.previous).toBe(before.generation);
  await waitFor(() => switchLines().length > 0, { timeoutMs: 15_000, everyMs: 50, what: 'the switch said in the log' });
  const [line] = switchLines();
  expect(line).toMatchObject({
    level: 30,
    by: 'mailbox projections rebuild',
    location: `Redis namespace '${ns}'`,
    generation: result.generation,
    previous: before.generation,
    msg:
      `projections: the views in Redis namespace '${ns}' were switched to generation ${result.generation} ` +
      `(from ${before.generation}) by a rebuild run beside this server (mailbox projections rebuild); this node serves them now`,
  });
  // Once: the next looks (each second) find the same generation. The positive signal: two more looks at the views.
  const looks = countProjectorLooks(server);
  await waitFor(() => looks() >= 2, { timeoutMs: 15_000, everyMs: 50, what: 'two more looks at the views' });
  expect(switchLines()).toHaveLength(1);
  const count = await server.call('GET', '/v1/inbox/count', { token: tokens['@b'] });
  expect(count.body.unreadCount).toBe(1);
});

test('Redis losing its data is no switch: views built again in place at the first generation are not said to be a rebuild', async () => {
  // Found walking the stack: Redis killed and restarted empty under a running server (after a rebuild had switched its
  // views to v2), a send while it was down; the projector rebuilt the views in place (v1) before its next look at them,
  // and the log said `were switched to generation mailbox:v1: (from mailbox:v2:) by a rebuild run beside this server`,
  // adminAction "views switched": an operator's act nobody did.
  const ns = `lostnoswitch${process.pid}`;
  const started = await startLoggedRedisServer(redis.url, ns);
  server = started.server;
  const { log, tokens } = started;
  await sendRound(server, tokens);
  const switchLines = () => log.lines.filter((line) => line.adminAction === 'views switched');
  builder = new RedisProjectionStore(await connectRedis(redis.url, { name: 'rebuilder', timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
    namespace: ns,
  });
  const result = await rebuildProjections(server.mailbox.eventStore, builder.generations(), {
    settleMs: 200,
    dropPreviousAfterMs: null,
  });
  await waitFor(() => switchLines().length === 1, { timeoutMs: 15_000, everyMs: 50, what: 'the real switch said' });

  // The projector's looks at the views miss the loss (each one failed while Redis was away): only its applies meet it.
  const views = server.mailbox.projections;
  const look = views.binding.bind(views);
  views.binding = () => Promise.reject(new Error('Redis did not answer (the look missed the loss)'));
  await withRedisAdmin(redis.url, (admin) => admin.flushall());
  await sendRound(server, tokens, 'after the loss');
  await waitFor(async () => (await server!.call('GET', '/v1/inbox/count', { token: tokens['@b'] })).body.unreadCount === 2, {
    timeoutMs: 20_000,
    everyMs: 100,
    what: 'the views built again from the log',
  });
  views.binding = look;
  const looks = countProjectorLooks(server);
  await waitFor(() => looks() >= 2, { timeoutMs: 15_000, everyMs: 50, what: 'two looks at the views built again' });
  expect((await look()).generation).not.toBe(result.generation); // back at the first generation
  expect(switchLines()).toHaveLength(1); // the rebuild's own switch, and nothing since
});
