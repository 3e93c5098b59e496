/**
 * `audit verify` compares the task of each task history line (readModel/taskRules.ts historyLineRecorded: the index by
 * which a line's id, given as a message's or a task's, is named as that task's; SQLite views table task_lines, Redis
 * hash tasks:lines). Before, no comparison read it: a line deleted, pointed at another task or forged by hand verified
 * as OK (and the summary did not say the lines were left out). Now each shows as a `taskLines` difference, exit 1, and
 * the summary counts the lines compared.
 */
import path from 'node:path';
import Redis from 'ioredis';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { runAuditCli as audit } from '../support/auditCli';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { verifyProjections } from '../../src/audit/verify/verifyProjections';
import { eventStoreSource } from '../../src/audit/logSource';
import { ADMIN_TOKEN, memoryMailbox, registerAgents, silentLogger, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

/** Three tasks among @a, @b and @c whose moves make six history lines: T1's claim, Working and Completed; T2's two; T3's one. */
async function populateTasks(mailbox: Mailbox) {
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const t1 = (await a.send({ to: 'AGENT:*', subject: 'for anyone', body: 'x', task: {} })).messageId;
  await b.claimTask(t1);
  await b.updateTask({ taskId: t1, to: 'Working' });
  await b.updateTask({ taskId: t1, to: 'Completed', artifacts: [{ parts: [{ kind: 'text', text: 'done' }] }] });
  const t2 = (await a.send({ to: '@c', subject: 'for c', body: 'x', task: {} })).messageId;
  await c.updateTask({ taskId: t2, to: 'Working' });
  await c.updateTask({ taskId: t2, to: 'Failed', reason: 'the build is broken' });
  const t3 = (await c.send({ to: '@a', subject: 'for a', body: 'x', task: {} })).messageId;
  await a.updateTask({ taskId: t3, to: 'Working' });
  return { t1, t2, t3 };
}

const linesOf = (differences: Array<{ view: string }>) => differences.filter((d) => d.view === 'taskLines');

test('the library: every line compared and counted (memory views)', async () => {
  const mailbox = await memoryMailbox();
  try {
    await populateTasks(mailbox);
    const report = await verifyProjections(eventStoreSource(mailbox.eventStore), mailbox.projections);
    expect(report).toMatchObject({ ok: true, historyLinesCompared: 6, differences: [] });
    // The live views as a damaged store would serve them: a line gone, one naming another task, one no event made.
    const real = mailbox.projections;
    const lines = (await real.taskHistoryLines(null, 100)).lines;
    expect(lines).toHaveLength(6);
    const [gone, moved] = lines;
    const damaged = new Proxy(real, {
      get(target, property, receiver) {
        if (property === 'taskOfHistoryLine')
          return async (eventId: string) => (eventId === gone.eventId ? null : target.taskOfHistoryLine(eventId));
        if (property !== 'taskHistoryLines') return Reflect.get(target, property, receiver) as unknown;
        return async () => ({
          lines: [
            { eventId: moved.eventId, taskId: lines[5].taskId },
            ...lines.slice(2),
            { eventId: 'a-line-no-event-made', taskId: moved.taskId },
          ],
          next: null,
        });
      },
    });
    const drifted = await verifyProjections(eventStoreSource(mailbox.eventStore), damaged);
    expect(drifted.ok).toBe(false);
    expect(linesOf(drifted.differences)).toEqual([
      {
        view: 'taskLines',
        identity: '@a',
        messageId: moved.taskId,
        field: `history line ${moved.eventId}`,
        expected: moved.taskId,
        actual: lines[5].taskId,
      },
      {
        view: 'taskLines',
        identity: '@a',
        messageId: moved.taskId,
        field: 'history line a-line-no-event-made',
        expected: 'absent',
        actual: moved.taskId,
      },
      {
        view: 'taskLines',
        identity: '@a',
        messageId: gone.taskId,
        field: `history line ${gone.eventId}`,
        expected: gone.taskId,
        actual: 'missing',
      },
    ]);
    expect(drifted.differences).toHaveLength(3);
  } finally {
    await mailbox.close();
  }
});

test('embedded default (SQLite views file): a line deleted, pointed at another task or forged by hand is reported, exit 1', async () => {
  const dataDir = tempDir('mailbox-verify-lines-');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silentLogger });
  const { t1, t2, t3 } = await populateTasks(mailbox);
  await mailbox.close(); // the views stay in views.sqlite
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' };
  const healthy = await audit(['verify'], env);
  expect(healthy.stderr).toBe('');
  expect(healthy.stdout).toMatch(/, 3 delivery ledgers and 6 task history lines compared\.\n$/);
  expect(healthy.code).toBe(0);

  const db = openSqliteDatabase(path.join(dataDir, 'views.sqlite'));
  let gone: string;
  let moved: string;
  try {
    const lineOf = (taskId: string) =>
      (
        db.prepare('SELECT event_id FROM g1_task_lines WHERE task_id = ? ORDER BY event_id LIMIT 1').get(taskId) as {
          event_id: string;
        }
      ).event_id;
    gone = lineOf(t1);
    moved = lineOf(t2);
    db.prepare('DELETE FROM g1_task_lines WHERE event_id = ?').run(gone);
    db.prepare('UPDATE g1_task_lines SET task_id = ? WHERE event_id = ?').run(t3, moved);
    db.prepare("INSERT INTO g1_task_lines (event_id, task_id) VALUES ('forged-line', ?)").run(t1);
  } finally {
    db.close();
  }
  const drifted = await audit(['verify', '--json'], env);
  expect(drifted.code).toBe(1);
  const report = JSON.parse(drifted.stdout);
  expect(report).toMatchObject({ ok: false, historyLinesCompared: 6 });
  expect(report.differences).toEqual(
    expect.arrayContaining([
      { view: 'taskLines', identity: '@a', messageId: t1, field: `history line ${gone}`, expected: t1, actual: 'missing' },
      { view: 'taskLines', identity: '@a', messageId: t2, field: `history line ${moved}`, expected: t2, actual: t3 },
      { view: 'taskLines', identity: '@a', messageId: t1, field: 'history line forged-line', expected: 'absent', actual: t1 },
    ]),
  );
  expect(report.differences).toHaveLength(3);
  const text = await audit(['verify'], env);
  expect(text.stdout).toContain(
    `taskLines    @a  message ${t1}  history line ${gone}: log says "${t1}", live projection has "missing"\n`,
  );
  expect(text.stdout).toMatch(
    /^DRIFT: 3 differences at checkpoint \d+ of log head \d+; .* and 6 task history lines compared\.$/m,
  );
});

describe('on Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  test('a line deleted or pointed at another task in the tasks:lines hash is reported, exit 1', async () => {
    const namespace = `lines${process.pid}x${Date.now()}`;
    const dataDir = tempDir('mailbox-verify-lines-redis-');
    const mailbox = await createMailbox(
      {
        dataDir,
        adminToken: ADMIN_TOKEN,
        logLevel: 'silent',
        redisUrl: redis.url,
        redisNamespace: namespace,
        redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
      },
      { logger: silentLogger },
    );
    const { t1, t2, t3 } = await populateTasks(mailbox);
    await mailbox.close(); // the views stay in Redis
    const env = {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_REDIS_URL: redis.url,
      MAILBOX_REDIS_NAMESPACE: namespace,
      MAILBOX_LOG_LEVEL: 'silent',
      ...REDIS_TEST_TIMEOUT_ENV,
    };
    const healthy = await audit(['verify'], env);
    expect(healthy.stdout).toMatch(/and 6 task history lines compared\.\n$/);
    expect(healthy.code).toBe(0);

    const client = new Redis(redis.url);
    let gone: string;
    let moved: string;
    try {
      const [key] = await client.keys(`*{${namespace}}:tasks:lines`);
      const lines = await client.hgetall(key);
      gone = Object.keys(lines).find((eventId) => lines[eventId] === t1)!;
      moved = Object.keys(lines).find((eventId) => lines[eventId] === t2)!;
      expect(await client.hdel(key, gone)).toBe(1);
      await client.hset(key, moved, t3);
    } finally {
      client.disconnect();
    }
    const drifted = await audit(['verify', '--json'], env);
    expect(drifted.code).toBe(1);
    const report = JSON.parse(drifted.stdout);
    expect(report.differences).toEqual(
      expect.arrayContaining([
        { view: 'taskLines', identity: '@a', messageId: t1, field: `history line ${gone}`, expected: t1, actual: 'missing' },
        { view: 'taskLines', identity: '@a', messageId: t2, field: `history line ${moved}`, expected: t2, actual: t3 },
      ]),
    );
    expect(report.differences).toHaveLength(2);
  });
});
