/**
 * A Redis tasks:timed entry whose task record is missing (a Redis changed by hand or partly restored: the apply
 * script writes both together). The sweeper's read skipped it without a word, and it kept a place among the tasks a
 * pass looks at: the sweeper never said why that task never ended, and enough of them would stop every sweep.
 */
import Redis from 'ioredis';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let mailbox: Mailbox | undefined;
let client: Redis | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await mailbox?.close();
  client?.disconnect();
});
afterAll(() => redis.stop());

test('a timed entry without its record is logged once and passed over: the due task behind it is swept', async () => {
  const T0 = Date.parse('2030-01-01T12:00:00.000Z');
  let now = T0;
  const log = recordingLogger('warn');
  const namespace = `dangling${process.pid}`;
  mailbox = await createMailbox(
    {
      eventStoreUrl: 'memory:',
      adminToken: ADMIN_TOKEN,
      logLevel: 'warn',
      redisUrl: redis.url,
      redisNamespace: namespace,
      taskSweepMs: 0,
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS, // time is the injected clock's here, not Redis's deadline
    },
    { logger: log.logger, clock: { now: () => new Date(now) } },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'lost', body: 'x', task: { expiresAt: '2030-01-01T13:00:00.000Z' } });
  await a.send({ to: '@c', subject: 'kept', body: 'x', task: { expiresAt: '2030-01-01T14:00:00.000Z' } });
  const lostTask = (await a.listTasks({ view: 'sent' })).tasks.find((task) => task.subject === 'lost')!.taskId;
  const keptTask = (await a.listTasks({ view: 'sent' })).tasks.find((task) => task.subject === 'kept')!.taskId;

  // The record of the earlier one goes; its timed entry stays.
  client = new Redis(redis.url);
  const [recordsKey] = (await client.keys(`*{${namespace}}:tasks`)) as string[];
  expect(await client.hdel(recordsKey, lostTask)).toBe(1);
  expect(await client.zscore(recordsKey.replace(/:tasks$/, ':tasks:timed'), lostTask)).not.toBeNull();

  now = Date.parse('2030-01-01T15:00:00.000Z'); // both past their expiry
  // One task per pass: the dangling entry, earliest, took that place and the pass looked at nothing.
  expect(await mailbox.sweeper.sweepOnce(1)).toEqual({ looked: 1, changed: 1, failed: 0 });
  expect(await a.getTask(keptTask)).toMatchObject({ mailbox: { state: 'Canceled' } }); // expired by the sweeper
  const told = log.lines.filter((line) => line.taskId === lostTask);
  expect(told).toEqual([
    expect.objectContaining({
      level: 40,
      recordsKey,
      msg: expect.stringMatching(new RegExp(`lists task ${lostTask}, which has no record in .*projections rebuild`)),
    }),
  ]);
  // Once: the next passes meet it again and say nothing more.
  expect(await mailbox.sweeper.sweepOnce(1)).toEqual({ looked: 0, changed: 0, failed: 0 });
  expect(log.lines.filter((line) => line.taskId === lostTask)).toHaveLength(1);
});
