/**
 * A task the mailbox expired at its deadline is dated at the deadline in the task listings (updatedAt), before and
 * after the sweep, as get_task and the refusals say. The views of an earlier mailbox dated it at the sweep's time: a
 * data dir whose views that rule built is rebuilt at start, with a log line saying why, not served as it stands (nor
 * reported by `audit verify` as drift). SQLite views (their schema) and Redis views (the read model's rules version)
 * alike. On an injected clock, the sweeper run by hand: @s sends, @b holds a direct task, @c claims a broadcast's.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { RedisTaskKeys } from '../../src/adapters/projections/redisTaskViews';
import { VIEWS_SCHEMA_VERSION } from '../../src/adapters/projections/sqliteViews/sqliteViewsSchema';
import { runVerify } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import type { MailboxConfigInput } from '../../src/config';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { READ_MODEL_VERSION } from '../../src/projections/readModel/readModelVersion';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { capture } from '../support/auditCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedis, type TestRedis } from '../support/redisServer';

const T0 = Date.parse('2030-05-01T12:00:00.000Z');
const DEADLINE = new Date(T0 + 30_000).toISOString();
const SWEPT = new Date(T0 + 90_000).toISOString();
let at = T0;
const clock = { now: () => new Date(at) };

let mailbox: Mailbox | null = null;
afterEach(async () => {
  await mailbox?.close();
  mailbox = null;
});

/** @s's sent listing: each task's updatedAt and updatedBy. */
const sentDates = async (open: Mailbox) =>
  (await open.asActor({ identity: '@s', role: 'agent' }).listTasks({ view: 'sent' })).tasks.map(
    ({ state, updatedAt, updatedBy }) => ({ state, updatedAt, updatedBy }),
  );
const EXPIRED = { state: 'Canceled', updatedAt: DEADLINE, updatedBy: 'sweeper' };

/** Two tasks that expire at DEADLINE (a direct one @b works on, a broadcast's @c claimed), swept at SWEPT. */
async function expiredAndSwept(config: MailboxConfigInput): Promise<void> {
  at = T0;
  mailbox = await createMailbox(config, { logger: pino({ level: 'silent' }), clock });
  const { '@s': s, '@b': b, '@c': c } = await registerAgents(mailbox, ['@s', '@b', '@c']);
  const direct = await s.send({ to: '@b', subject: 'direct', body: 'x', task: { expiresAt: DEADLINE } });
  await b.updateTask({ taskId: direct.messageId, to: 'Working' });
  const broadcast = await s.send({ to: 'AGENT:*', subject: 'open', body: 'x', task: { budget: { deadline: DEADLINE } } });
  await c.claimTask(broadcast.messageId);
  at = Date.parse(DEADLINE) + 1_000; // past the deadline, not swept: the read says the deadline
  expect(await sentDates(mailbox)).toEqual([EXPIRED, EXPIRED]);
  at = Date.parse(SWEPT);
  expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 2, failed: 0 });
  expect(await sentDates(mailbox)).toEqual([EXPIRED, EXPIRED]); // the sweep's time before
  await mailbox.close();
  mailbox = null;
}

/** A mailbox of this version on the data dir, its log lines recorded; its views ready. */
async function reopened(config: MailboxConfigInput) {
  const { logger, messages } = recordingLogger();
  mailbox = await createMailbox(config, { logger, clock });
  await mailbox.viewsReady;
  return { open: mailbox, messages };
}

/** `audit verify` of the mailbox's log against its views: the exit code and the differences. */
async function verify(open: Mailbox) {
  const out = capture();
  const { code, report } = await runVerify(
    eventStoreSource(open.eventStore),
    open.projections,
    { json: true, progress: false },
    { stdout: out.stream, stderr: capture().stream, env: {} },
  );
  return { code, differences: report.differences };
}

/** The task records as the rules before dated an expiry: at the sweep's time. */
const datedAtSweep = (json: string): string => {
  const record = JSON.parse(json) as { state: string; updatedAt: string };
  return JSON.stringify(record.state === 'Canceled' ? { ...record, updatedAt: SWEPT } : record);
};

test('a SQLite views file of the rule before (an expiry dated at its sweep) is rebuilt at start, saying why', async () => {
  const dataDir = tempDir('expiry-dated-sqlite-');
  const config = { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' as const, taskSweepMs: 0 };
  await expiredAndSwept(config);

  const file = path.join(dataDir, 'views.sqlite');
  const db = openSqliteDatabase(file);
  const active = (db.prepare("SELECT value FROM views_meta WHERE key = 'active'").get() as { value: string }).value;
  const rows = db.prepare(`SELECT task_id, record FROM ${active}_tasks`).all() as Array<{ task_id: string; record: string }>;
  for (const row of rows)
    db.prepare(`UPDATE ${active}_tasks SET record = ? WHERE task_id = ?`).run(datedAtSweep(row.record), row.task_id);
  db.prepare("UPDATE views_meta SET value = '15' WHERE key = 'schema'").run();
  db.close();

  const { open, messages } = await reopened(config);
  expect(messages()).toContain(
    `projections: SQLite views file dropped (its tables are of views schema 15, this mailbox reads schema ${VIEWS_SCHEMA_VERSION}): ` +
      'building the views from the whole log (the log is the truth); wake bus: in process',
  );
  expect(await sentDates(open)).toEqual([EXPIRED, EXPIRED]);
  expect(await verify(open)).toEqual({ code: 0, differences: [] });
});

describe('on Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => (redis = await startRedis()));
  afterAll(() => redis.stop());

  test('views of the rules before (version 8: an expiry dated at its sweep) are rebuilt at start, saying why', async () => {
    const namespace = `expiry${process.pid}`;
    const config = {
      dataDir: tempDir('expiry-dated-redis-'),
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent' as const,
      taskSweepMs: 0,
      redisUrl: redis.url,
      redisNamespace: namespace,
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
    };
    await expiredAndSwept(config);

    const keys = new RedisKeys(namespace);
    const client = new Redis(redis.url);
    try {
      const prefix = (await client.get(keys.active)) ?? keys.defaultPrefix;
      const recordsKey = new RedisTaskKeys(keys).records(prefix);
      for (const [taskId, json] of Object.entries(await client.hgetall(recordsKey)))
        await client.hset(recordsKey, taskId, datedAtSweep(json));
      await client.set(keys.rulesOf(prefix), '8');
    } finally {
      client.disconnect();
    }

    const { open, messages } = await reopened(config);
    await open.rulesRebuilt;
    expect(messages()).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          `were built by the read model's rules of version 8, this mailbox's are version ${READ_MODEL_VERSION}: rebuilding them`,
        ),
        expect.stringContaining(`rebuilt the views with the rules of version ${READ_MODEL_VERSION}`),
      ]),
    );
    expect(await sentDates(open)).toEqual([EXPIRED, EXPIRED]);
    expect(await verify(open)).toEqual({ code: 0, differences: [] });
  });
});
