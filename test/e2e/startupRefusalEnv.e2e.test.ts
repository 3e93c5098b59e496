/**
 * What `mailbox serve` says about the environment when it refuses to start: the refusal is its last line (exit code 2,
 * nothing created), and what a start would have warned of comes before it, each a `mailbox: warning:` line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-refusal-env-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

// MAILBOX_PORT=abc refused the start in one line, and the misspelled MAILBOX_PROT=8080 (the port the operator meant)
// was said only by a start that went on: fixing MAILBOX_PORT led to a server on 7420 and a warning then.
test('a refusal names the misspelled variables before its one line: the port meant, the Redis meant', async () => {
  const dataDir = path.join(root, 'misspelled');
  const run = await runCli(['serve'], {
    MAILBOX_DATA_DIR: dataDir,
    MAILBOX_PORT: 'abc',
    MAILBOX_PROT: '8080',
    MAILBOX_REDIS_ULR: 'redis://127.0.0.1:6379',
  });
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    'mailbox: warning: MAILBOX_PROT is not a mailbox variable and is ignored: did you mean MAILBOX_PORT?',
    'mailbox: warning: MAILBOX_REDIS_ULR is not a mailbox variable and is ignored: did you mean MAILBOX_REDIS_URL?',
    "mailbox: MAILBOX_PORT='abc' is not valid: set MAILBOX_PORT to an integer 0..65535 (0 picks any free port; " +
      'default 7420), written in plain decimal digits.',
  ]);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(fs.existsSync(dataDir)).toBe(false);
});

test('a refusal of a flag says them too; without a misspelled variable the refusal is the one line', async () => {
  const dataDir = path.join(root, 'flag');
  const run = await runCli(['serve', '--port', 'abc'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_DATA_DIRR: '/srv/mailbox' });
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    'mailbox: warning: MAILBOX_DATA_DIRR is not a mailbox variable and is ignored: did you mean MAILBOX_DATA_DIR?',
    "mailbox: --port: 'abc' is not a port number: give --port an integer 0..65535 (0 picks any free port; default " +
      '7420), written in plain decimal digits.',
  ]);
  expect(run.code).toBe(2);
  const alone = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: 'abc' });
  expect(alone.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(alone.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});

// `MAILBOX_REDIS_URL=${REDIS_URL}` with REDIS_URL unset (a shell, a compose file, a unit file): the empty variable was
// read as unset, and a production node started on the embedded SQLite log and views in ./data, acknowledging messages
// into its own disk; an empty MAILBOX_DATA_DIR was ./data, an empty MAILBOX_ADMIN_TOKEN a generated token.
test.each([
  ['MAILBOX_REDIS_URL', 'or unset it for no Redis'],
  ['MAILBOX_EVENTSTORE_URL', 'or unset it for the SQLite log in the data dir'],
  ['MAILBOX_DATA_DIR', 'set it to a directory path (default ./data), or unset it'],
  ['MAILBOX_ADMIN_TOKEN', 'or unset it to generate one'],
  ['MAILBOX_ADMIN_TOKEN_FILE', 'set it to the path of a file holding the secret'],
  ['MAILBOX_PORT', 'set it to an integer 0..65535'],
  ['MAILBOX_HEARTBEAT', 'set it to true or false'],
])('serve with %s set but empty: one line naming it and the way out, exit code 2, no ./data made', async (variable, way) => {
  const cwd = tempDir('mailbox-empty-variable-');
  try {
    const run = await runCli(['serve'], { MAILBOX_PORT: '0', [variable]: '' }, { cwd });
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^mailbox: ${variable} is set but empty \\(a \\$\\{VARIABLE\\} substituted while VARIABLE was unset\\?\\): `),
    );
    expect(lines[0]).toContain(way);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(fs.readdirSync(cwd)).toEqual([]); // no ./data, no admin token generated
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});

test('the operator tools refuse it in one line as heartbeat does (audit, projections: the envelope with --json)', async () => {
  const cwd = tempDir('mailbox-empty-variable-tools-');
  try {
    for (const args of [
      ['audit', 'replay'],
      ['projections', 'status'],
    ]) {
      const line = await runCli(args, { MAILBOX_REDIS_URL: '' }, { cwd });
      expect(line.code).toBe(2);
      expect(line.stderr).toMatch(/^mailbox: MAILBOX_REDIS_URL is set but empty [^\n]*\n$/); // one line, no envelope
      const run = await runCli([...args, '--json'], { MAILBOX_REDIS_URL: '' }, { cwd });
      expect(run.code).toBe(2);
      expect(JSON.parse(run.stderr)).toMatchObject({
        code: 'VALIDATION_FAILED',
        error: 'Invalid configuration',
        field: 'MAILBOX_REDIS_URL',
        message: expect.stringMatching(/^MAILBOX_REDIS_URL is set but empty /),
      });
    }
    const heartbeat = await runCli(['heartbeat', '--once'], { MAILBOX_DATA_DIR: '' }, { cwd });
    expect(heartbeat.code).toBe(2);
    expect(heartbeat.stderr).toMatch(/^mailbox: MAILBOX_DATA_DIR is set but empty /);
    expect(fs.readdirSync(cwd)).toEqual([]);
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});

// mkdir under /sys answers EPERM (to root too), as do some network and container mounts: serve printed the stack
// trace of `EPERM: operation not permitted, mkdir '/sys/mailbox'` and exited 1.
test('a data dir where no directory may be made (EPERM): one line naming it, exit code 2', async () => {
  const dataDir = '/sys/mailbox-start-test';
  let code: string | undefined;
  try {
    fs.mkdirSync(dataDir);
    fs.rmdirSync(dataDir);
  } catch (error) {
    code = (error as NodeJS.ErrnoException).code;
  }
  if (code !== 'EPERM') {
    process.stderr.write(`skipped: mkdir ${dataDir} answers ${code ?? 'nothing'} here, not EPERM\n`);
    return;
  }
  const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
  expect(run.stderr.trimEnd()).toBe(
    `mailbox: MAILBOX_DATA_DIR='${dataDir}': cannot create the directory ${dataDir} (EPERM); set MAILBOX_DATA_DIR to a directory this user can write.`,
  );
  expect(run.code).toBe(2);
});
