/**
 * `mailbox heartbeat` watches the log and the views of a mailbox server, so it starts only where a server made them.
 * On an empty or mistyped MAILBOX_DATA_DIR it created events.sqlite (a new log) and views.sqlite, then watched a log
 * nobody writes and reported all well; on a log with no views file it created an empty views.sqlite. Now each is
 * refused at start with one line naming what is missing and that `mailbox serve` creates it, exit code 2 (as the
 * heartbeat's other startup refusals), and nothing is created. Run as a user does: the real CLI entry point.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { cliOnSources } from '../support/builtCli';
import { tempDir, threeAgentsDataDir } from '../support/fixtures';

/** `mailbox heartbeat <args>` on the sources: exit code, stdout and stderr (killed if it started instead of refusing). */
function heartbeat(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cliOnSources('heartbeat', ...args), {
      env: { PATH: process.env.PATH, MAILBOX_LOG_LEVEL: 'silent', MAILBOX_HEARTBEAT_METRICS_PORT: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every path under dir, so that a test sees any file or directory the command left. */
const tree = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((entry) => path.join(dir, entry))
    .sort();

/** The one line the CLI prints for a startup refusal, exit code 2, nothing on stdout. */
function refusal(run: { code: number | null; stdout: string; stderr: string }): string {
  expect(run.stdout).toBe('');
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^mailbox: /);
  expect(lines[0]).toMatch(/Nothing was created\.$/);
  expect(run.code).toBe(2);
  return lines[0];
}

describe('mailbox heartbeat where no server made the log or the views', () => {
  const args = ['--once'];
  test('an empty MAILBOX_DATA_DIR: refused, naming the log looked for and who creates it; nothing created', async () => {
    const dataDir = tempDir('mailbox-heartbeat-empty-');
    const line = refusal(await heartbeat(args, { MAILBOX_DATA_DIR: dataDir }));
    expect(line).toContain(
      `There is no event log at ${path.join(dataDir, 'events.sqlite')} (MAILBOX_DATA_DIR is ${dataDir}); check MAILBOX_DATA_DIR: ` +
        'the heartbeat watches the log and the views of a mailbox server and creates neither (mailbox serve creates them at its first start).',
    );
    expect(tree(dataDir)).toEqual([]);
  });

  test('a mistyped MAILBOX_DATA_DIR: refused, saying the directory does not exist, and it is not made', async () => {
    const root = tempDir('mailbox-heartbeat-typo-');
    const dataDir = path.join(root, 'dta');
    const line = refusal(await heartbeat(args, { MAILBOX_DATA_DIR: dataDir }));
    expect(line).toContain(`MAILBOX_DATA_DIR is ${dataDir}, a directory that does not exist`);
    expect(tree(root)).toEqual([]);
  });

  test('a log with no views file: refused, naming the views file and that the server builds it; no views file made', async () => {
    const dataDir = tempDir('mailbox-heartbeat-no-views-');
    await SqliteEventStore.open(path.join(dataDir, 'events.sqlite')).close();
    const before = tree(dataDir);
    const line = refusal(await heartbeat(args, { MAILBOX_DATA_DIR: dataDir }));
    expect(line).toContain(`There is no views file at ${path.join(dataDir, 'views.sqlite')}`);
    expect(line).toContain('start the server (mailbox serve), which builds them from the log');
    // A server on Redis views keeps no views file: the heartbeat run without its MAILBOX_REDIS_URL was sent to start it.
    expect(line).toContain("or its server keeps them in Redis: give the heartbeat the server's MAILBOX_REDIS_URL.");
    expect(tree(dataDir)).toEqual(before);
  });

  test('MAILBOX_EVENTSTORE_URL=memory: (a log only the server can see): refused, teaching serve --heartbeat', async () => {
    const dataDir = tempDir('mailbox-heartbeat-memory-');
    const line = refusal(await heartbeat(args, { MAILBOX_DATA_DIR: dataDir, MAILBOX_EVENTSTORE_URL: 'memory:' }));
    expect(line).toContain('MAILBOX_EVENTSTORE_URL is memory:');
    expect(line).toContain('mailbox serve --heartbeat');
    expect(tree(dataDir)).toEqual([]);
  });
});

test('the daemon (not --once) is refused the same way, before it starts ticking', async () => {
  const dataDir = tempDir('mailbox-heartbeat-daemon-');
  const line = refusal(await heartbeat([], { MAILBOX_DATA_DIR: dataDir }));
  expect(line).toContain(`There is no event log at ${path.join(dataDir, 'events.sqlite')}`);
  expect(tree(dataDir)).toEqual([]);
});

test("a configuration serve refuses (a sqlite: URL naming no file): serve's line, not a failure to open the cwd", async () => {
  const dataDir = tempDir('mailbox-heartbeat-bad-url-');
  const run = await heartbeat(['--once'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_EVENTSTORE_URL: 'sqlite:' });
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toEqual([
    "mailbox: MAILBOX_EVENTSTORE_URL='sqlite:' names no file: use sqlite:<path to a file>, e.g. sqlite:./data/events.sqlite, " +
      'or unset it for SQLite in MAILBOX_DATA_DIR.',
  ]);
  expect(run.code).toBe(2);
  expect(tree(dataDir)).toEqual([]);
});

/** The daemon's JSON log lines until `started` is logged (the positive signal), then it is stopped. */
function daemonLogUntilStarted(env: Record<string, string>): Promise<Array<{ level: number; msg: string }>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliOnSources('heartbeat', '--interval', '1h'), {
      env: { PATH: process.env.PATH, MAILBOX_LOG_FORMAT: 'json', MAILBOX_HEARTBEAT_METRICS_PORT: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the daemon did not start within 20 s: ${output}`));
    }, 20_000);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('"heartbeat daemon started"')) return;
      clearTimeout(timer);
      child.kill('SIGTERM');
      resolve(
        output
          .trim()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line)),
      );
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });
}

describe('a separate daemon on the embedded default says whether it hears wakes (--wake-grace needs them)', () => {
  const hearsNone = (entry: { msg: string }) => entry.msg.startsWith('this daemon hears no wake events');

  test("reading the server's views file: it hears none, and says so once at start, naming the two ways that hear them", async () => {
    const dataDir = await threeAgentsDataDir('mailbox-heartbeat-wakes-');
    const logs = await daemonLogUntilStarted({ MAILBOX_DATA_DIR: dataDir });
    const warned = logs.filter(hearsNone);
    expect(warned).toHaveLength(1);
    expect(warned[0].level).toBe(40); // warn
    expect(warned[0].msg).toMatch(/--wake-grace holds no nudge back[\s\S]*mailbox serve --heartbeat[\s\S]*Redis/);
  });

  test('with views in memory it runs its own projector, whose wakes it hears: nothing to say', async () => {
    const dataDir = await threeAgentsDataDir('mailbox-heartbeat-wakes-memory-');
    const logs = await daemonLogUntilStarted({ MAILBOX_DATA_DIR: dataDir, MAILBOX_VIEWS: 'memory' });
    expect(logs.some((entry) => entry.msg === 'heartbeat daemon started')).toBe(true);
    expect(logs.filter(hearsNone)).toEqual([]);
  });
});
