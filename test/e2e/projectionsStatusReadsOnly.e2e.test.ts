/**
 * `mailbox projections status` says in its help that it reads only, safe while the server runs; it took the views
 * file's write lock at open all the same (an empty write transaction): while another process held a write transaction
 * (a sqlite3 shell between BEGIN and COMMIT, a long rebuild step), status waited MAILBOX_VIEWS_LOCK_WAIT_MS and failed
 * as 'Views file locked', exit code 2, where a reader is never stopped by a writer. Now it reads under the writer:
 * the status printed, exit code 0, and the writer's transaction goes on as it was. A log of @a, @b and @c.
 */
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { threeAgentsDataDir } from '../support/fixtures';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';

beforeAll(() => ensureBuilt());

test('status while another process holds the views file write lock: the status, exit code 0; nothing written', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-status-reads-');
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_VIEWS_LOCK_WAIT_MS: '200' };
  const before = await runCli(['projections', 'status'], env);
  expect(before.code).toBe(0);

  const writer = openSqliteDatabase(path.join(dataDir, 'views.sqlite'));
  writer.exec('BEGIN IMMEDIATE'); // another process's write transaction, held across the status
  try {
    const run = await runCli(['projections', 'status'], env);
    expect({ code: run.code, stderr: run.stderr, stdout: run.stdout }).toEqual({ code: 0, stderr: '', stdout: before.stdout });
    expect(JSON.parse(run.stdout)).toMatchObject({ activeGeneration: 'g1', upToDate: true, viewsOfThisLog: true });
    expect(writer.inTransaction).toBe(true); // the writer's transaction untouched
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
});
