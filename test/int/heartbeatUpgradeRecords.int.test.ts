/**
 * Heartbeat daemons sharing Redis, upgraded from READ_MODEL_VERSION 6 to 7 (the views of 6 rebuilt as 7, blue/green):
 * the nudge records beside the heartbeat lease are no view and stay, each under the signature the earlier daemon
 * wrote. Version 6 signed the tasks waiting on an agent by a digest of their ids (`|tasks:1:<16 hex>`), version 7 by
 * the log position of the last one to begin waiting: the same set never compared equal, and an agent with tasks
 * waiting was nudged once more, past the cooldown, about mail and tasks it had been nudged about. Such a record is now
 * judged by its time. The nudge decisions read the test's clock; the lease runs on real time, as in heartbeatLease.int.
 */
import { createHash } from 'node:crypto';
import pino from 'pino';
import { connectRedis, type RedisClient } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { leaseKey, RedisLease } from '../../src/adapters/projections/redisLease';
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

/** What a version 6 daemon recorded of a nudge: the unread set, then the tasks waiting by count and digest of their ids. */
const version6Record = (unread: number, newestUnreadId: string, taskIds: string[], at: number) =>
  JSON.stringify({
    signature: `${unread}|${newestUnreadId}|tasks:${taskIds.length}:${createHash('sha256').update(taskIds.sort().join('\n')).digest('hex').slice(0, 16)}`,
    at,
  });

test('records of version 6 daemons: the sets they nudged are not nudged again after the upgrade; new mail is', async () => {
  const namespace = `hbupgrade${process.pid}`;
  let now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', redisUrl: redis.url, redisNamespace: namespace },
    { logger: silent, clock },
  );
  const own = mailbox;
  const { '@s': s } = await registerAgents(own, ['@s', '@a', '@b', '@c']);
  // @a and @b each hold a task and its unread message; @c unread mail alone.
  const task = async (to: string) => (await s.send({ to, subject: `a task for ${to}`, body: 't', task: {} })).messageId;
  const [forA, forB] = [await task('@a'), await task('@b')];
  const forC = (await s.send({ to: '@c', subject: 'for @c', body: 'x' })).messageId;
  // A version 6 daemon nudged all three at 20 min and recorded it beside the lease.
  client = await connectRedis(redis.url, { name: 'heartbeat-upgrade' });
  const nudgedAt = T0 + 20 * MIN;
  await client.hset(`${leaseKey(new RedisKeys(namespace), 'heartbeat')}:records`, {
    '@a': version6Record(1, forA, [forA], nudgedAt),
    '@b': version6Record(1, forB, [forB], nudgedAt),
    '@c': JSON.stringify({ signature: `1|${forC}`, at: nudgedAt }), // no task: the same signature in both versions
  });
  // After it, new mail for @b only.
  now = T0 + 30 * MIN;
  const newForB = (await s.send({ to: '@b', subject: 'more for @b', body: 'y' })).messageId;

  // The upgraded daemon, past the cooldown.
  now = T0 + 100 * MIN;
  const target = new RecordingNudgeTarget();
  heartbeat = await startHeartbeat(own, {
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
    lease: { store: new RedisLease(client, new RedisKeys(namespace), 'heartbeat'), node: 'daemon-7', ttlMs: 600 },
  });
  await waitFor(() => target.nudges.length >= 1, { timeoutMs: 10_000, what: "the nudge of @b's new mail" });
  const seen = await ticks(heartbeat);
  await waitFor(async () => (await ticks(heartbeat!)) >= seen + 3, { timeoutMs: 10_000, what: 'three more ticks' });
  // It was ['@a', '@b']: @a's task and mail, unchanged since its last nudge, nudged once more.
  expect(target.nudges.map((nudge) => [nudge.identity, nudge.newestUnreadId])).toEqual([['@b', newForB]]);
}, 60_000);
