/**
 * A heartbeat daemon on Redis (the heartbeat lease, the nudge records its holders keep beside it) whose Redis restarts
 * empty: the records are gone, the views are rebuilt from the log, and the log still says whom the daemon nudged and
 * when (each delivered nudge is a WakeObserved). An unread set nudged before the restart is not nudged again after it.
 * The nudge decisions read the test's clock; the lease runs on real time, as in heartbeatLease.int.
 */
import pino from 'pino';
import { connectRedis, type RedisClient } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { RedisLease } from '../../src/adapters/projections/redisLease';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { ADMIN_TOKEN, registerAgents } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

const MIN = 60_000;
const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const silent = pino({ level: 'silent' });

let redis: TestRedis;
let client: RedisClient | undefined;
let mailbox: Mailbox | undefined;
let heartbeat: Heartbeat | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await heartbeat?.stop();
  await mailbox?.close();
  await client?.quit();
  await redis.stop();
});

const ticks = async (daemon: Heartbeat) =>
  (await daemon.metrics.registry.getSingleMetric('mailbox_heartbeat_ticks_total')!.get()).values[0]?.value ?? 0;

test('Redis restarted empty: the unread sets nudged before are not nudged again; new mail is', async () => {
  if (!redis.restartEmpty) return; // REDIS_URL: not our instance to restart
  const namespace = `hblost${process.pid}`;
  let now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', redisUrl: redis.url, redisNamespace: namespace },
    { logger: silent, clock },
  );
  client = await connectRedis(redis.url, { name: 'heartbeat-records-lost' });
  const target = new RecordingNudgeTarget('webhook');
  heartbeat = await startHeartbeat(mailbox, {
    targets: [target],
    logger: silent,
    clock,
    settings: {
      intervalMs: 20,
      idleMs: 10 * MIN,
      cooldownMs: 60 * MIN,
      wakeGraceMs: MIN,
      metricsPort: null,
      wakeSlaMs: 24 * 60 * MIN, // no unwoken escalation: the test counts the unread-set nudges
    },
    lease: { store: new RedisLease(client, new RedisKeys(namespace), 'heartbeat'), node: 'daemon-alone', ttlMs: 600 },
  });
  const own = mailbox;
  const { '@s': s, '@t': t } = await registerAgents(own, ['@s', '@a', '@b', '@c', '@t']);
  for (const to of ['@a', '@b', '@c']) await s.send({ to, subject: `for ${to}`, body: 'x' });
  // @t holds a task whose message it read: a task waiting on it, nothing unread (its nudge is about tasks alone).
  await t.markRead({ messageId: (await s.send({ to: '@t', subject: 'a task', body: 't', task: {} })).messageId });
  now = T0 + 20 * MIN; // @a, @b and @c are idle with unread mail, @t with its task
  const nudged = () => target.nudges.map((nudge) => nudge.identity);
  await waitFor(() => nudged().length >= 4, { timeoutMs: 10_000, what: 'four nudges' });
  await waitFor(async () => (await own.projections.lastNudges()).size === 4, {
    timeoutMs: 10_000,
    what: 'the four nudges recorded in the log and the views',
  });
  expect([...nudged()].sort()).toEqual(['@a', '@b', '@c', '@t']);

  // Redis loses everything: the lease, its nudge records, the views (rebuilt from the log by the mailbox's projector).
  await redis.restartEmpty();
  // Past the cooldown: nothing arrived and nothing was read, so each unread set is the one already nudged.
  now = T0 + 100 * MIN;
  // The positive signal: new mail for @d (registered after the restart, so the views were rebuilt) is nudged.
  await registerAgents(own, ['@d']);
  await s.send({ to: '@d', subject: 'for @d', body: 'y' });
  now = T0 + 120 * MIN;
  await waitFor(() => nudged().includes('@d'), { timeoutMs: 20_000, what: "the daemon's nudge of @d after the restart" });
  const seen = await ticks(heartbeat);
  await waitFor(async () => (await ticks(heartbeat!)) >= seen + 3, { timeoutMs: 10_000, what: 'three more ticks' });
  // It was ['@a', '@b', '@c', '@a', '@b', '@c', '@d'] (in some order): every idle agent nudged again, its set unchanged
  // (and @t, whose nudge about its task alone the log did not record, once more even with the records kept).
  expect([...nudged()].sort()).toEqual(['@a', '@b', '@c', '@d', '@t']);
}, 60_000);
