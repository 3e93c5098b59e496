/**
 * A body or request limit above what the server can read: a request is read into one string, and V8's strings end at
 * 2^29 - 24 characters. MAILBOX_MAX_BODY_BYTES=1000000000 was taken at start, and a 560 MB send under it answered 500
 * INTERNAL (ERR_STRING_TOO_LONG), where a body over the limit gets 413. Such a limit is refused at start in one line
 * naming the largest, exit code 2, nothing created.
 */
import { constants } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-readable-limit-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const largest = constants.MAX_STRING_LENGTH;

test.each([
  ['MAILBOX_MAX_BODY_BYTES', '1000000000', `less than ${largest} (the largest request this server can read)`],
  ['MAILBOX_MAX_BODY_BYTES', String(largest), `less than ${largest} (the largest request this server can read)`],
  ['MAILBOX_MAX_REQUEST_BYTES', String(largest + 1), `at most ${largest} (the largest request this server can read)`],
])('%s=%s: refused at start in one line naming the largest, exit code 2, nothing created', async (variable, value, form) => {
  const dataDir = path.join(root, `${variable}-${value}`);
  const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', [variable]: value });
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    `mailbox: ${variable}='${value}' is not valid: set ${variable} to a positive integer number of bytes, ${form}.`,
  ]);
  expect(run.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});
