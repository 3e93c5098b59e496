/**
 * `mailbox backup` and `mailbox projections` read the server's MAILBOX_* variables: a misspelled one was ignored without
 * a word, so MAILBOX_DATA_DIRR=/srv/mailbox backed up the log of ./data, or answered 'no event log' there, and the
 * operator saw nothing of the typo. They now say it first, as serve does at start.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

const WARNING = 'MAILBOX_DATA_DIRR is not a mailbox variable and is ignored: did you mean MAILBOX_DATA_DIR?';
let cwd: string;
beforeAll(() => {
  ensureBuilt();
  cwd = tempDir('mailbox-tools-unknown-');
});
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

test('projections status with a misspelled variable and no log here: the warning in its log, then its envelope', async () => {
  const run = await runCli(['projections', 'status'], { MAILBOX_DATA_DIRR: '/srv/mailbox' }, { cwd });
  const lines = run.stderr
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ level: 40, variable: 'MAILBOX_DATA_DIRR', msg: WARNING });
  expect(lines[1]).toMatchObject({ code: 'NOT_FOUND', field: 'MAILBOX_DATA_DIR' });
  expect(run.code).toBe(1);
});

test('backup with a misspelled variable: the warning line first, then the backup of the log it did read', async () => {
  const dataDir = path.join(cwd, 'data');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN }, { logger: pino({ level: 'silent' }) });
  await mailbox.close();
  const file = path.join(cwd, 'backup.sqlite');
  const run = await runCli(['backup', file], { MAILBOX_DATA_DIRR: '/srv/mailbox' }, { cwd });
  expect(run.stderr.split('\n')[0]).toBe(`mailbox: warning: ${WARNING}`);
  expect(run.stdout).toContain(`backed up the event log ${path.join(dataDir, 'events.sqlite')} to ${file}`);
  expect(run.code).toBe(0);
});
