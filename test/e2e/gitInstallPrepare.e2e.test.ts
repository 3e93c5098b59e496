/**
 * Installed from git (`npm install github:owner/agent-mailbox`), the package had no dist/ (no `prepare`): npm clones it,
 * installs its dependencies, runs `prepare` and packs it, so `require('agent-mailbox')` and the `mailbox` CLI were
 * missing. prepare (scripts/prepare.js) now builds in that install, which npm marks with _PACOTE_NO_PREPARE_, and
 * nowhere else: a checkout's `npm ci`/`npm install` (CI, the Docker image, `npm install && npm start`) builds nothing
 * more than before. Run on a copy of the script beside a stand-in build that counts its runs.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** A package with this repository's prepare script and a build that writes dist/src/index.js and counts itself. */
function standIn(): { dir: string; prepare: (env: NodeJS.ProcessEnv) => void; builds: () => number } {
  const dir = tempDir('mailbox-prepare-');
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.copyFileSync(path.join(ROOT, 'scripts/prepare.js'), path.join(dir, 'scripts/prepare.js'));
  const build =
    "const fs = require('fs'); fs.mkdirSync('dist/src', { recursive: true }); fs.writeFileSync('dist/src/index.js', ''); " +
    "fs.appendFileSync('builds', 'x');";
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'stand-in',
      version: '0.0.0',
      scripts: { build: `node -e "${build}"`, prepare: manifest.scripts.prepare },
    }),
  );
  const env = { ...process.env };
  delete env._PACOTE_NO_PREPARE_;
  return {
    dir,
    prepare: (extra) =>
      void execFileSync('npm', ['run', '--silent', 'prepare'], { cwd: dir, env: { ...env, ...extra }, stdio: 'pipe' }),
    builds: () => (fs.existsSync(path.join(dir, 'builds')) ? fs.readFileSync(path.join(dir, 'builds'), 'utf8').length : 0),
  };
}

test("package.json's prepare is scripts/prepare.js", () => {
  expect(manifest.scripts.prepare).toBe('node scripts/prepare.js');
});

test('installed as a git dependency, prepare builds dist/ once; a second prepare of the same install builds nothing', () => {
  const pkg = standIn();
  pkg.prepare({ _PACOTE_NO_PREPARE_: 'git+ssh://git@github.com/owner/agent-mailbox.git#0123abc' });
  expect(fs.existsSync(path.join(pkg.dir, 'dist/src/index.js'))).toBe(true);
  pkg.prepare({ _PACOTE_NO_PREPARE_: 'git+ssh://git@github.com/owner/agent-mailbox.git#0123abc' });
  expect(pkg.builds()).toBe(1);
}, 60_000);

test('in a checkout (npm ci, npm install) prepare builds nothing, with or without a dist/', () => {
  const pkg = standIn();
  pkg.prepare({});
  expect(fs.existsSync(path.join(pkg.dir, 'dist'))).toBe(false);
  expect(pkg.builds()).toBe(0);
}, 60_000);
