/**
 * Acceptance (issue 12): SIGKILL during a claim storm, then a restart. The
 * child claims broadcast tasks with 20 workers at once against a SQLite log
 * and Redis views, and is killed mid-storm. After the restart: every task has
 * at most one TaskClaimed (one assignee), and the Redis views and counts
 * (resumed from their checkpoint) equal a clean rebuild from the log.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { verifyProjections } from '../../src/audit/verify/verifyProjections';
import { eventStoreSource } from '../../src/audit/logSource';
import { ADMIN_TOKEN, silentLogger, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

const ROOT = path.resolve(__dirname, '../..');
let redis: TestRedis;
let mailbox: Mailbox | null = null;
let dir: string;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  await mailbox?.close();
  mailbox = null;
  fs.rmSync(dir, { recursive: true, force: true });
});

it('one assignee per task, and views and counts equal a clean rebuild, after a SIGKILL mid-storm', async () => {
  dir = tempDir('mailbox-storm-');
  const namespace = `storm${process.pid}`;
  const child = spawn(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'test/support/tsRequireHook.js'),
      path.join(ROOT, 'test/support/taskStormChild.ts'),
      dir,
      redis.url,
      namespace,
    ],
    { cwd: ROOT, stdio: 'pipe' },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  for (let storms = 0; storms < 3;) {
    const { value, done } = await lines.next();
    if (done) throw new Error(`child ended early: ${stderr}`);
    const line = JSON.parse(value) as { kind: string; won?: number; message?: string };
    if (line.kind === 'error') throw new Error(line.message);
    expect(line.won).toBe(1);
    storms++;
  }
  child.kill('SIGKILL'); // mid-storm: the fourth task's claims are in flight
  expect(await exited).toBe('SIGKILL');

  mailbox = await createMailbox(
    {
      eventStoreUrl: `sqlite:${dir}/events.sqlite`,
      redisUrl: redis.url,
      redisNamespace: namespace,
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      taskSweepMs: 0,
    },
    { logger: silentLogger },
  );
  await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 10_000);
  const events = await mailbox.eventStore.readAll(null, 100_000);
  const tasks = events.filter((e) => e.type === 'MessageSent').map((e) => e.data as { messageId: string });
  expect(tasks.length).toBeGreaterThanOrEqual(3);
  for (const { messageId } of tasks) {
    const claims = events.filter((e) => e.type === 'TaskClaimed' && (e.data as { taskId: string }).taskId === messageId);
    expect(claims.length).toBeLessThanOrEqual(1);
    const view = await mailbox.projections.getTask(messageId);
    expect(view?.assignee ?? null).toBe(claims.length ? (claims[0].data as { claimant: string }).claimant : null);
  }
  const report = await verifyProjections(eventStoreSource(mailbox.eventStore), mailbox.projections);
  expect(report.differences).toEqual([]);
});
