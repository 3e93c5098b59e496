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
    "mailbox: --port='abc' is not valid: set --port to an integer 0..65535 (0 picks any free port; default 7420), " +
      'written in plain decimal digits.',
  ]);
  expect(run.code).toBe(2);
  const alone = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: 'abc' });
  expect(alone.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(alone.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});
