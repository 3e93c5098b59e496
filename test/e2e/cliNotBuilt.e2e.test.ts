/**
 * `npm install` does not build the CLI: a fresh clone's `mailbox --help` (after `npm link`, or through the README's
 * alias `node $PWD/bin/mailbox.js`) before `npm start` or `npm run build` was a MODULE_NOT_FOUND stack trace ("Error:
 * Cannot find module '../dist/src/cli/main.js'", exit code 1). It is one line saying what to run, exit code 2.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAILBOX_BIN, ROOT } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

test('the CLI of a clone not built yet: one line naming what to run, exit code 2, no stack trace', () => {
  // A clone as `npm install` leaves it: bin/, package.json and node_modules, no dist/.
  const clone = tempDir('mailbox-not-built-');
  fs.mkdirSync(path.join(clone, 'bin'));
  fs.copyFileSync(MAILBOX_BIN, path.join(clone, 'bin', 'mailbox.js'));
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(clone, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
  for (const args of [['--help'], ['agent', 'add', '@a'], ['serve']]) {
    const run = spawnSync(process.execPath, [path.join(clone, 'bin', 'mailbox.js'), ...args], { cwd: clone, encoding: 'utf8' });
    expect(run.stderr).toBe(
      `mailbox: not built yet (dist/src/cli/main.js is missing): run \`npm run build\` in ${clone} ` +
        '(`npm start` builds, then serves).\n',
    );
    expect(run.stdout).toBe('');
    expect(run.status).toBe(2);
    expect(fs.readdirSync(clone).sort()).toEqual(['bin', 'node_modules', 'package.json']); // nothing created
  }
});
