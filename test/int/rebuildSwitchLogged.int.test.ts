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

/** A server on namespace `ns` (kept in `server`), a round of mail sent, and its log's lines saying a switch. */
async function serverWithMail(ns: string) {
  const started = await startLoggedRedisServer(redis.url, ns);
  server = started.server;
  await sendRound(server, started.tokens);
  const switchLines = () => started.log.lines.filter((line) => line.adminAction === 'views switched');
  return { live: started.server, tokens: started.tokens, switchLines };
}

/** What `mailbox projections rebuild` does, from another connection: its own store over the same namespace. */
async function rebuildBeside(ns: string) {
  builder = new RedisProjectionStore(await connectRedis(redis.url, { name: 'rebuilder', timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
    namespace: ns,
  });
  return rebuildProjections(server!.mailbox.eventStore, builder.generations(), { settleMs: 200, dropPreviousAfterMs: null });
}

test('the server says, once at info, that a rebuild beside it switched its views: to which generation, from which', async () => {
  const ns = `switchlog${process.pid}`;
  const { live, tokens, switchLines } = await serverWithMail(ns);
  const before = await live.mailbox.projections.binding();
  expect(switchLines()).toEqual([]);

  const result = await rebuildBeside(ns);
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
  const looks = countProjectorLooks(live);
  await waitFor(() => looks() >= 2, { timeoutMs: 15_000, everyMs: 50, what: 'two more looks at the views' });
  expect(switchLines()).toHaveLength(1);
  const count = await live.call('GET', '/v1/inbox/count', { token: tokens['@b'] });
  expect(count.body.unreadCount).toBe(1);
});

test('Redis losing its data is no switch: views built again in place at the first generation are not said to be a rebuild', async () => {
  // Found walking the stack: Redis killed and restarted empty under a running server (after a rebuild had switched its
  // views to v2), a send while it was down; the projector rebuilt the views in place (v1) before its next look at them,
  // and the log said `were switched to generation mailbox:v1: (from mailbox:v2:) by a rebuild run beside this server`,
  // adminAction "views switched": an operator's act nobody did.
  const ns = `lostnoswitch${process.pid}`;
  const { live, tokens, switchLines } = await serverWithMail(ns);
  const result = await rebuildBeside(ns);
  await waitFor(() => switchLines().length === 1, { timeoutMs: 15_000, everyMs: 50, what: 'the real switch said' });

  // The projector's looks at the views miss the loss (each one failed while Redis was away): only its applies meet it.
  const views = live.mailbox.projections;
  const look = views.binding.bind(views);
  views.binding = () => Promise.reject(new Error('Redis did not answer (the look missed the loss)'));
  await withRedisAdmin(redis.url, (admin) => admin.flushall());
  await sendRound(live, tokens, 'after the loss');
  await waitFor(async () => (await live.call('GET', '/v1/inbox/count', { token: tokens['@b'] })).body.unreadCount === 2, {
    timeoutMs: 20_000,
    everyMs: 100,
    what: 'the views built again from the log',
  });
  views.binding = look;
  const looks = countProjectorLooks(live);
  await waitFor(() => looks() >= 2, { timeoutMs: 15_000, everyMs: 50, what: 'two looks at the views built again' });
  expect((await look()).generation).not.toBe(result.generation); // back at the first generation
  expect(switchLines()).toHaveLength(1); // the rebuild's own switch, and nothing since
});
