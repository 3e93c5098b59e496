/**
 * A start refused by a store once it has begun (a Redis that refuses a later connection: maxclients reached) says so
 * in one line, exit code 2, as a refusal of the first connection does. A refused start on a data dir that already
 * holds a log removes nothing.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../support/fixtures';
import { cliOnSources } from '../support/builtCli';
import { freePort, spawnRedis, stopChild } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_ENV } from '../support/redisDeadline';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function serve(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cliOnSources('serve'), {
      env: { PATH: process.env.PATH, MAILBOX_PORT: '0', MAILBOX_LOG_LEVEL: 'silent', ...REDIS_TEST_TIMEOUT_ENV, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // a server that started instead of refusing
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Every entry under dir with its size (null: dir is not there). */
function listing(dir: string): string[] | null {
  if (!fs.existsSync(dir)) return null;
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => {
      const full = path.join(entry.parentPath, entry.name);
      return `${path.relative(dir, full)} ${entry.isDirectory() ? 'dir' : fs.statSync(full).size}`;
    })
    .sort();
}

const expectOneLine = (stderr: string, text: string) =>
  expect(stderr.trim().split('\n')).toEqual([expect.stringContaining(text)]);

test('a refused start on a data dir that holds a log removes nothing: the log, its token and its views stay', async () => {
  const dataDir = tempDir();
  // A log made by a start that served (its token generated, its views in views.sqlite), then stopped.
  const first = spawn(process.execPath, cliOnSources('serve'), {
    env: { PATH: process.env.PATH, MAILBOX_PORT: '0', MAILBOX_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  const listening = new Promise<void>((resolve) =>
    first.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('mailbox listening on')) resolve();
    }),
  );
  await listening;
  await stopChild(first);
  const before = listing(dataDir);
  expect(before).toEqual(
    expect.arrayContaining([expect.stringMatching(/^admin\.token \d+$/), expect.stringMatching(/^events\.sqlite \d+$/)]),
  );
  const port = await freePort();
  const redis = await spawnRedis(port, ['--maxclients', '4']);
  cleanups.push(() => stopChild(redis));
  const refused = await serve({ MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}` });
  expect(refused.code).toBe(2);
  expectOneLine(refused.stderr, `Redis at redis://127.0.0.1:${port} is unreachable`);
  expect(listing(dataDir)).toEqual(before);
});
