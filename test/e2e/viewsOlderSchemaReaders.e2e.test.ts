/**
 * A reader of the SQLite views (`mailbox audit verify`, `mailbox projections status`, `mailbox heartbeat --once`)
 * never rebuilds them: finding a views file of another schema (an older mailbox's, beside a server not yet
 * upgraded), it dropped every generation and left an empty one, under the running server. It now refuses, saying
 * the views are of another schema and that `mailbox serve` (or `mailbox projections rebuild`) rebuilds them, and
 * the file is left as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { VIEWS_SCHEMA_VERSION } from '../../src/adapters/projections/sqliteViews/sqliteViewsSchema';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';

const OLDER = String(Number(VIEWS_SCHEMA_VERSION) - 1);
let dir: string;
let file: string;

/** What the views file holds: its meta rows, and every table with its row count. */
function contents(): { meta: unknown[]; tables: Record<string, number> } {
  const db = openSqliteDatabase(file);
  try {
    const meta = db.prepare('SELECT key, value FROM views_meta ORDER BY key').all();
    const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
      name: string;
    }>;
    const tables = Object.fromEntries(
      names.map(({ name }) => [name, (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n]),
    );
    return { meta, tables };
  } finally {
    db.close();
  }
}

beforeAll(() => ensureBuilt());
// Each reader gets its own file (one that reset it left nothing for the next to find).
beforeEach(async () => {
  dir = tempDir('mailbox-views-older-schema-');
  file = path.join(dir, 'views.sqlite');
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b']);
  await a.send({ to: '@b', subject: 'hello', body: 'x' });
  await mailbox.close();
  const db = openSqliteDatabase(file); // as an older mailbox wrote it: the schema row one version back
  db.prepare("UPDATE views_meta SET value = ? WHERE key = 'schema'").run(OLDER);
  db.close();
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test.each([
  ['audit verify', ['audit', 'verify', '--no-progress']],
  ['projections status', ['projections', 'status']],
  ['heartbeat --once', ['heartbeat', '--once']],
])('%s leaves a views file of an older schema as it is, refusing with the remedy', async (_, args) => {
  const before = contents();
  expect(before.meta).toContainEqual({ key: 'schema', value: OLDER });
  expect(Object.values(before.tables).some((rows) => rows > 0)).toBe(true);
  const run = await runCli(args, { MAILBOX_DATA_DIR: dir });
  expect(contents()).toEqual(before);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
  expect(run.stderr).toContain(
    `is of another views schema (its tables are of views schema ${OLDER}, this mailbox reads schema ` +
      `${VIEWS_SCHEMA_VERSION}); a reader leaves it as it is: nothing was changed.`,
  );
  expect(run.stderr).toContain('mailbox serve');
  expect(run.stderr).toContain('mailbox projections rebuild');
});
