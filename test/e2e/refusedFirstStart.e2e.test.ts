/**
 * A first `mailbox serve` refused after its new SQLite log was created (the views file locked by another process, a
 * Redis that refuses a later connection) leaves the data dir as it found it: no events.sqlite with an identity of its
 * own, no -wal or -shm, no admin token, not the data dir nor its parents when they were not there. A refused start on
 * a data dir that already holds a log removes nothing.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { createMailbox } from '../../src/mailbox';
import { cliOnSources } from '../support/builtCli';
import { listing, spawnServe as serve } from '../support/serveRefused';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { freePort, spawnRedis, stopChild } from '../support/redisServer';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A data dir (under a parent of its own) holding only a views file, held in an exclusive transaction by this process. */
function lockedViewsDir(): { parent: string; dataDir: string } {
  const parent = tempDir();
  const dataDir = path.join(parent, 'data');
  fs.mkdirSync(dataDir);
  const db = openSqliteDatabase(path.join(dataDir, 'views.sqlite'));
  db.exec('CREATE TABLE held (x)');
  db.exec('BEGIN EXCLUSIVE');
  cleanups.push(() => void db.close());
  return { parent, dataDir };
}

const expectOneLine = (stderr: string, text: string) =>
  expect(stderr.trim().split('\n')).toEqual([expect.stringContaining(text)]);

test('a first start refused on a views file another process holds leaves the data dir as it was: no events.sqlite, no token', async () => {
  const { parent, dataDir } = lockedViewsDir();
  const before = listing(parent);
  expect(before).toEqual(['data dir', expect.stringMatching(/^data\/views\.sqlite \d+$/)]);
  const refused = await serve({ MAILBOX_DATA_DIR: dataDir, MAILBOX_VIEWS: 'sqlite', MAILBOX_VIEWS_LOCK_WAIT_MS: '200' });
  expect(refused.code).toBe(2);
  expectOneLine(refused.stderr, `The views file ${path.join(dataDir, 'views.sqlite')} is locked by another process`);
  expect(listing(parent)).toEqual(before); // views.sqlite alone, as it was
});

test('a first start refused by a Redis that takes no more connections once the log is open leaves no data dir, nor its parents', async () => {
  const port = await freePort();
  // Four clients: the start's probe and its look at the views' binding pass, its own connections then meet the limit.
  const redis = await spawnRedis(port, ['--maxclients', '4']);
  cleanups.push(() => stopChild(redis));
  const parent = tempDir();
  const dataDir = path.join(parent, 'not', 'yet');
  const refused = await serve({ MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}` });
  expect(refused.code).toBe(2);
  expectOneLine(
    refused.stderr,
    `Redis at redis://127.0.0.1:${port} refuses new connections: it answered 'ERR max number of clients reached' and closed the connection (its maxclients is reached`,
  );
  expect(listing(parent)).toEqual([]); // not even the data dir
});

/** A data dir holding a log made by a start that served (its token generated, its views in views.sqlite), then stopped. */
async function servedDataDir(): Promise<string> {
  const dataDir = tempDir();
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
  return dataDir;
}

test('a refused start on a data dir that holds a log removes nothing: the log, its token and its views stay', async () => {
  const dataDir = await servedDataDir();
  const before = listing(dataDir);
  expect(before).toEqual(
    expect.arrayContaining([expect.stringMatching(/^admin\.token \d+$/), expect.stringMatching(/^events\.sqlite \d+$/)]),
  );
  const port = await freePort();
  const redis = await spawnRedis(port, ['--maxclients', '4']);
  cleanups.push(() => stopChild(redis));
  const refused = await serve({ MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}` });
  expect(refused.code).toBe(2);
  expectOneLine(
    refused.stderr,
    `Redis at redis://127.0.0.1:${port} refuses new connections: it answered 'ERR max number of clients reached' and closed the connection (its maxclients is reached`,
  );
  expect(listing(dataDir)).toEqual(before);
});

test('createMailbox refused on a views file another process holds leaves the data dir as it was', async () => {
  const { parent, dataDir } = lockedViewsDir();
  const before = listing(parent);
  // Held by this process's other connection: SQLite's lock is per connection, as another process's is.
  await expect(
    createMailbox({ dataDir, views: 'sqlite', viewsLockWaitMs: 200, adminToken: ADMIN_TOKEN, logLevel: 'silent' }),
  ).rejects.toThrow(`The views file ${path.join(dataDir, 'views.sqlite')} is locked by another process`);
  expect(listing(parent)).toEqual(before);
});

// It stopped with SQLite's 'database is locked' and a stack trace, exit 1: the views file's claim at start (a write) met
// the other process's lock, which only the file's open was said for.
test('a start on a log whose views file another process holds (WAL, an exclusive transaction) is refused in one line, exit 2, nothing removed', async () => {
  const dataDir = await servedDataDir();
  const views = openSqliteDatabase(path.join(dataDir, 'views.sqlite'));
  expect(views.pragma('journal_mode', { simple: true })).toBe('wal');
  views.exec('BEGIN EXCLUSIVE');
  cleanups.push(() => void views.close());
  const before = listing(dataDir);
  const refused = await serve({ MAILBOX_DATA_DIR: dataDir, MAILBOX_VIEWS_LOCK_WAIT_MS: '200' });
  expect(refused.code).toBe(2);
  expectOneLine(refused.stderr, `The views file ${path.join(dataDir, 'views.sqlite')} is locked by another process`);
  expect(refused.stderr).not.toContain('SqliteError');
  expect(listing(dataDir)).toEqual(before);
});
