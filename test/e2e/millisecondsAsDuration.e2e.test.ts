/**
 * A duration where whole milliseconds are asked: `mailbox projections rebuild --grace-ms 2s` and
 * MAILBOX_AWAIT_PROJECTION_MS=2s were told the decimal form alone, and the operator had to work out 2000. Each is now
 * told the number the duration stands for, in the refusal's usual form (the envelope, or serve's one line), exit code
 * 2, and never taken for it: nothing is opened or created.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

let dataDir: string;
beforeAll(() => ensureBuilt());
beforeEach(() => {
  dataDir = path.join(tempDir('mailbox-ms-'), 'data');
  fs.mkdirSync(dataDir);
});

test.each([
  ['--grace-ms', '2s', 2000],
  ['--settle-ms', '1500ms', 1500],
])('projections rebuild %s %s --json: one envelope line suggesting %d, exit 2, nothing created', async (flag, value, ms) => {
  const run = await runCli(['projections', 'rebuild', flag, value, '--json'], { MAILBOX_DATA_DIR: dataDir });
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(JSON.parse(run.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: flag });
  expect(JSON.parse(run.stderr).message).toMatch(
    new RegExp(`^projections rebuild: '${flag}' takes a whole number of milliseconds`),
  );
  expect(JSON.parse(run.stderr).message).toMatch(new RegExp(`, not '${value}': did you mean ${ms}\\?$`));
  expect(run.code).toBe(2);
  expect(fs.readdirSync(dataDir)).toEqual([]);
});

test('serve with MAILBOX_AWAIT_PROJECTION_MS=2s: one line suggesting 2000, exit 2, nothing created', async () => {
  const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', MAILBOX_AWAIT_PROJECTION_MS: '2s' });
  expect(run.stderr.trim().split('\n')).toEqual([
    expect.stringMatching(
      /^mailbox: MAILBOX_AWAIT_PROJECTION_MS='2s' is not valid: set MAILBOX_AWAIT_PROJECTION_MS to an integer number of milliseconds, .*written in plain decimal digits: did you mean 2000\?$/,
    ),
  ]);
  expect(run.code).toBe(2);
  expect(fs.readdirSync(dataDir)).toEqual([]);
});
