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

test('projections status --json with a misspelled variable and no log here: the warning in its log, then its envelope', async () => {
  const run = await runCli(['projections', 'status', '--json'], { MAILBOX_DATA_DIRR: '/srv/mailbox' }, { cwd });
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

/**
 * `mailbox heartbeat` refused before its logger existed (a setting of the server's, or of its own) without the warning
 * serve prints there: MAILBOX_DATA_DIRR beside MAILBOX_PORT=abc said only the port. An empty MAILBOX_HEARTBEAT_*
 * variable was read as unset.
 */
describe('heartbeat refused at start: the misspelled variable first, then the refusal, exit 2, nothing created', () => {
  const refused = async (env: Record<string, string>) => {
    const dir = tempDir('mailbox-heartbeat-refused-');
    const run = await runCli(['heartbeat', '--once'], { MAILBOX_DATA_DIRR: '/srv/mailbox', ...env }, { cwd: dir });
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`mailbox: warning: ${WARNING}`);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
    expect(fs.readdirSync(dir)).toEqual([]);
    return lines[1];
  };

  test("a server setting it cannot take (MAILBOX_PORT=abc): serve's line", async () => {
    expect(await refused({ MAILBOX_PORT: 'abc' })).toMatch(/^mailbox: MAILBOX_PORT='abc' is not valid: set MAILBOX_PORT to /);
  });

  // It was the JSON envelope, where MAILBOX_PORT=abc and an empty MAILBOX_HEARTBEAT_INTERVAL were one line.
  test('a heartbeat setting it cannot take (MAILBOX_HEARTBEAT_INTERVAL=abc): its line, as a server setting', async () => {
    expect(await refused({ MAILBOX_HEARTBEAT_INTERVAL: 'abc' })).toBe(
      "mailbox: MAILBOX_HEARTBEAT_INTERVAL: must be a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds, not 'abc'",
    );
  });

  test('an empty MAILBOX_HEARTBEAT_INTERVAL: refused in the line of every empty variable, not read as unset', async () => {
    expect(await refused({ MAILBOX_HEARTBEAT_INTERVAL: '' })).toBe(
      'mailbox: MAILBOX_HEARTBEAT_INTERVAL is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?): set ' +
        'it to a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds, or unset it for the default (60s).',
    );
  });
});

test('serve --heartbeat with an empty MAILBOX_HEARTBEAT_REDIS_URL: the same line, exit 2, nothing created', async () => {
  const dir = tempDir('mailbox-serve-heartbeat-empty-');
  const run = await runCli(['serve', '--heartbeat'], { MAILBOX_HEARTBEAT_REDIS_URL: '', MAILBOX_PORT: '0' }, { cwd: dir });
  expect(run.stderr.trimEnd()).toBe(
    'mailbox: MAILBOX_HEARTBEAT_REDIS_URL is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?): set ' +
      "it to a Redis URL (redis:// or rediss://), or unset it to publish nudges on the mailbox's own Redis, if any.",
  );
  expect(run.code).toBe(2);
  expect(fs.readdirSync(dir)).toEqual([]);
});
