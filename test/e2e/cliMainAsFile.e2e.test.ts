/**
 * `node dist/src/cli/main.js --help` (the compiled CLI run as a file, as one may guess from the layout, or from a
 * brief) printed nothing and exited 0: the file only defines `main`. It now runs as `mailbox` (bin/mailbox.js) does:
 * the same help and exit codes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureBuilt, MAILBOX_BIN, ROOT } from '../support/builtCli';

const MAIN = path.join(ROOT, 'dist/src/cli/main.js');

beforeAll(() => ensureBuilt());

test('the compiled main.js run as a file answers as the mailbox command does', () => {
  const asFile = execFileSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
  expect(asFile).toContain('Usage: mailbox [options] [command]');
  expect(asFile).toBe(execFileSync(process.execPath, [MAILBOX_BIN, '--help'], { encoding: 'utf8' }));
  const unknown = spawnSync(process.execPath, [MAIN, 'nope'], { encoding: 'utf8' });
  expect([unknown.status, unknown.stderr]).toEqual([2, expect.stringContaining("error: unknown command 'nope'")]);
});
