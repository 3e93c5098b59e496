/**
 * `mailbox serve` asked to stop (SIGTERM) before it serves stops at its next step, as an operator (or systemd,
 * or Docker's 10 s grace) expects: a first start on a long log builds its views for minutes, and a SIGTERM waited
 * for all of it, then listened, then stopped. What was built stays: the next start resumes from there, and the
 * views then match the log.
 */
import type * as ChildProcess from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { writeSyntheticLog } from '../../bench/lib/syntheticLog';
import { ensureBuilt, MAILBOX_BIN, ROOT, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { createMailbox } from '../../src/mailbox';
import pino from 'pino';
import { waitFor } from '../support/waitFor';
import Database from 'better-sqlite3';

const EVENTS = 30_000;

let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-interrupted-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/**
 * Every child this file starts, killed (by its PID) after each test if it still runs: a test that failed or timed out
 * before its SIGTERM left its `mailbox serve` running (one waiting for Redis retried for ten minutes), and jest waited
 * on it ("did not exit one second after the test run has completed") until it ended.
 */
const children = new Set<ChildProcess.ChildProcess>();
function spawned<T extends ChildProcess.ChildProcess>(child: T): T {
  children.add(child);
  return child;
}
afterEach(async () => {
  const running = [...children].filter((child) => child.exitCode === null && child.signalCode === null);
  children.clear();
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          if (!child.kill('SIGKILL')) resolve(); // gone already
        }),
    ),
  );
});

interface Served {
  code: number | null;
  messages: string[];
}

/** A `mailbox serve` child (or `args`): `exited` resolves with its exit code and its log's messages once it has exited. */
function serve(
  env: Record<string, string>,
  args: string[] = ['serve'],
): { child: ChildProcess.ChildProcess; stdout: () => string; exited: Promise<Served> } {
  const { spawn } = jest.requireActual<typeof ChildProcess>('node:child_process');
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawned(
    spawn(process.execPath, [MAILBOX_BIN, ...args], { cwd: ROOT, env: { ...base, MAILBOX_PORT: '0', ...env } }),
  );
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  const exited = new Promise<Served>((resolve) =>
    child.on('close', (code) =>
      resolve({
        code,
        messages: stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line).msg as string),
      }),
    ),
  );
  return { child, stdout: () => stdout, exited };
}

/** The checkpoint the views file holds (its active generation's), read on a connection of its own; null: none yet. */
function storedCheckpoint(viewsFile: string): number | null {
  if (!fs.existsSync(viewsFile)) return null;
  const db = new Database(viewsFile, { readonly: true, fileMustExist: true });
  try {
    const active = db.prepare(`SELECT value FROM views_meta WHERE key = 'active'`).get() as { value: string } | undefined;
    if (active === undefined) return null;
    const row = db.prepare(`SELECT checkpoint FROM ${active.value}_state`).get() as { checkpoint: number | null } | undefined;
    return row?.checkpoint ?? null;
  } catch {
    return null; // its tables are being made: not yet
  } finally {
    db.close();
  }
}

test('SIGTERM while a first start builds the views: stops after the batch in progress, serves nothing; the next start resumes there and the views match the log', async () => {
  const dataDir = path.join(root, 'long-log');
  const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
  await writeSyntheticLog(log, { agents: 20, events: EVENTS, readShare: 0.25, archiveShare: 0.1, broadcastEvery: 5_000 });
  await log.close();

  const first = serve({ MAILBOX_DATA_DIR: dataDir });
  // The positive signal: a batch of the build is committed, and the build is not over (no log line says so).
  await waitFor(() => (storedCheckpoint(path.join(dataDir, 'views.sqlite')) ?? 0) > 0, {
    timeoutMs: 20_000,
    everyMs: 10,
    what: 'a committed batch of the views build',
  });
  expect(first.stdout()).not.toContain('projections caught up');
  first.child.kill('SIGTERM');
  const stoppedRun = await first.exited;
  expect(stoppedRun.code).toBe(0);
  const stopped = stoppedRun.messages.find((message) =>
    message.startsWith('stopped: start-up stopped while the views caught up'),
  );
  expect(stopped).toBeDefined();
  const at = Number(/at position (\d+) of (\d+)/.exec(stopped!)![1]);
  expect(stopped).toContain(`of ${EVENTS} (the next start resumes there); nothing served`);
  expect(at).toBeGreaterThan(0);
  expect(at).toBeLessThan(EVENTS);
  expect(stoppedRun.messages.some((message) => message.startsWith('mailbox listening on'))).toBe(false);
  expect(stoppedRun.messages).not.toContain('projections caught up');

  const second = serve({ MAILBOX_DATA_DIR: dataDir });
  await waitFor(() => second.stdout().includes('mailbox listening on'), {
    timeoutMs: 20_000,
    what: 'the second start listening',
  });
  second.child.kill('SIGTERM');
  const servedRun = await second.exited;
  expect(servedRun.code).toBe(0);
  expect(servedRun.messages).toContainEqual(expect.stringContaining(`resume from their stored checkpoint ${at} (no rebuild)`));
  const verify = await runCli(['audit', 'verify'], { MAILBOX_DATA_DIR: dataDir }, { timeoutMs: 60_000 });
  expect(verify.stdout).toContain(`OK: the live projections match the log at checkpoint ${EVENTS} of log head ${EVENTS}`);
  expect(verify.code).toBe(0);
}, 90_000); // a log to build, two starts and a verify: ~11 s alone, past 30 s on a loaded machine

test('SIGTERM while waiting for an unreachable Redis: stops at once, not at the end of MAILBOX_STARTUP_RETRY_MS', async () => {
  const server = net.createServer();
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const started = serve({
    MAILBOX_DATA_DIR: path.join(root, 'redis-down'),
    MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}`,
    MAILBOX_STARTUP_RETRY_MS: '600000', // ten minutes: the test's own timeout ends long before
  });
  await waitFor(() => started.stdout().includes('is unreachable; retrying'), { timeoutMs: 10_000, what: 'the retry line' });
  started.child.kill('SIGTERM');
  const run = await started.exited;
  expect(run.code).toBe(0);
  expect(run.messages[run.messages.length - 1]).toBe(
    `stopped: start-up stopped while waiting for Redis at redis://127.0.0.1:${port}; nothing served`,
  );
});

test('mailbox heartbeat: SIGTERM while waiting for an unreachable Redis stops at once, says so, exit code 0 (it was killed by the signal, unsaid)', async () => {
  const dataDir = path.join(root, 'heartbeat-redis-down');
  // A log a server made (the heartbeat starts only where one has), on the embedded default.
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  await mailbox.close();
  const server = net.createServer();
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const started = serve(
    {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}`,
      MAILBOX_STARTUP_RETRY_MS: '600000', // ten minutes: the test's own timeout ends long before
      MAILBOX_HEARTBEAT_METRICS_PORT: 'off',
    },
    ['heartbeat'],
  );
  await waitFor(() => started.stdout().includes('is unreachable; retrying'), { timeoutMs: 10_000, what: 'the retry line' });
  started.child.kill('SIGTERM');
  const run = await started.exited;
  expect(run.code).toBe(0);
  expect(run.messages.slice(-2)).toEqual([
    'signal during startup: stopping at its next step',
    `stopped: start-up stopped while waiting for Redis at redis://127.0.0.1:${port}; nothing nudged`,
  ]);
});

test('SIGTERM during `mailbox projections rebuild`: it stops after the batch in progress, drops its partial generation (nothing left in the views file), says so, exit code 143', async () => {
  const dataDir = path.join(root, 'rebuilt');
  const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
  await writeSyntheticLog(log, { agents: 20, events: EVENTS, readShare: 0.25, archiveShare: 0.1, broadcastEvery: 5_000 });
  await log.close();
  const viewsFile = path.join(dataDir, 'views.sqlite');
  const tables = () => {
    const db = new Database(viewsFile, { readonly: true, fileMustExist: true });
    try {
      const names = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as Array<{
        name: string;
      }>;
      const marks = db.prepare(`SELECT key FROM views_meta WHERE key GLOB 'bulk:*' ORDER BY key`).all() as Array<{ key: string }>;
      return { generations: [...new Set(names.map(({ name }) => /^(g\d+)_/.exec(name)?.[1]).filter(Boolean))], marks };
    } finally {
      db.close();
    }
  };

  const { spawn } = jest.requireActual<typeof ChildProcess>('node:child_process');
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawned(
    spawn(process.execPath, [MAILBOX_BIN, 'projections', 'rebuild'], {
      cwd: ROOT,
      env: { ...base, MAILBOX_DATA_DIR: dataDir },
    }),
  );
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // The positive signal: a batch of the new generation is committed (its progress line), and the rebuild goes on.
  await waitFor(() => /rebuild: building \d+% \([1-9]\d* events/.test(stdout), { timeoutMs: 20_000, what: 'a committed batch' });
  const building = tables().generations;
  expect(building).toEqual(['g1', 'g2']);
  child.kill('SIGTERM');
  expect(await exited).toBe(143);
  const said =
    /rebuild interrupted at position (\d+) of (\d+): the active views \(g1\) are unchanged, and the partial generation g2 was dropped \(SIGTERM\)/.exec(
      stdout,
    );
  expect(said).not.toBeNull();
  expect(Number(said![1])).toBeLessThan(EVENTS);
  expect(tables()).toEqual({ generations: ['g1'], marks: [] });
});
