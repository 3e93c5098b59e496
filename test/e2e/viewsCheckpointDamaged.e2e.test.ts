/**
 * A views file whose checkpoint page is damaged (a disk fault under the `g1_state` table; the schema still reads):
 * `mailbox serve` printed the driver's stack trace (`SqliteError: database disk image is malformed at
 * SqliteViewWriter.state ...`) and exited 1 at every start, while docs/operators.md says a damaged views file "never
 * stops the mailbox for good"; `mailbox audit verify` said `"Audit failed","code":"INTERNAL"`. The page is now read at
 * open, so the server moves the file aside and builds the views again from the log, and the readers refuse it naming
 * the file and the remedy, as for a file that is no database at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { ensureBuilt, runCli, startCli, type StartedCli } from '../support/builtCli';
import { ADMIN_TOKEN, threeAgentsDataDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

let server: StartedCli | null = null;
beforeAll(() => ensureBuilt());
afterEach(() => server?.child.kill('SIGKILL'));

/** Overwrites the page of the active generation's checkpoint row, as a disk fault would. */
function damageCheckpointPage(file: string): void {
  const db = openSqliteDatabase(file);
  const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'g1_state'").get() as { rootpage: number };
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.close();
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (rootpage - 1) * pageSize);
  fs.closeSync(fd);
}

test('a damaged checkpoint page: audit verify refuses it in one line, serve moves it aside, rebuilds and serves', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-views-checkpoint-damaged-');
  const file = path.join(dataDir, 'views.sqlite');
  damageCheckpointPage(file);
  const damaged = fs.readFileSync(file);
  const env = { MAILBOX_DATA_DIR: dataDir };

  // A reader leaves the file as it is and says what to do.
  const verify = await runCli(['audit', 'verify', '--json'], env);
  expect(verify.code).toBe(2);
  expect(verify.stdout).toBe('');
  expect(verify.stderr.trimEnd().split('\n')).toEqual([
    JSON.stringify({
      error: 'Views file damaged',
      code: 'UNAVAILABLE',
      message:
        `The views file ${file} is damaged (database disk image is malformed); restart the mailbox server first: ` +
        'it moves the file aside and rebuilds the views from the event log.',
      viewsFile: file,
    }),
  ]);
  expect(fs.readFileSync(file).equals(damaged)).toBe(true);
  expect(fs.readdirSync(dataDir).filter((name) => name.includes('damaged'))).toEqual([]);

  // The server moves it aside (kept), builds the views from the log and serves them.
  server = startCli(['serve'], { ...env, MAILBOX_PORT: '0', MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN });
  const started = server;
  await waitFor(() => started.stdout().includes('mailbox listening on'), { timeoutMs: 30_000, what: 'the server listening' });
  const aside = fs.readdirSync(dataDir).filter((name) => /^views\.sqlite\.damaged-[^.]*$/.test(name));
  expect(aside).toHaveLength(1);
  expect(fs.readFileSync(path.join(dataDir, aside[0])).equals(damaged)).toBe(true);
  expect(started.stdout()).toContain(
    `projections: SQLite views file unreadable (database disk image is malformed): moved aside to ${path.join(dataDir, aside[0])}`,
  );
  expect(started.stderr()).not.toContain('SqliteError');
  const url = /mailbox listening on (http:\/\/\S+) /.exec(started.stdout())![1];
  const agents = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(((await agents.json()) as { agents: Array<{ identity: string }> }).agents.map((agent) => agent.identity)).toEqual([
    '@a',
    '@b',
    '@c',
  ]);
  started.child.kill('SIGTERM');
  expect((await started.exited).code).toBe(0);
  server = null;

  const again = await runCli(['audit', 'verify'], env);
  expect(again.stdout).toMatch(/^OK: the live projections match the log at checkpoint (\d+) of log head \1;/);
  expect(again.code).toBe(0);
}, 90_000);
