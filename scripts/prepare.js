#!/usr/bin/env node
// npm's `prepare`. Installed from git (`npm install github:owner/agent-mailbox`), the package had no dist/: npm clones it,
// installs its dependencies and packs it, and only `prepare` can build it in between; the library and the CLI were
// missing. It builds there, and only there: npm marks that install with _PACOTE_NO_PREPARE_ (pacote, npm 7 and later).
// In a checkout, `npm ci` and `npm install` build nothing (a build costs about 20 s of CPU on two cores, and CI, the
// Docker image and `npm start` build when they need to; the image's `npm ci` runs before its sources are copied in).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const asGitDependency = process.env._PACOTE_NO_PREPARE_ !== undefined;
if (asGitDependency && !fs.existsSync(path.join(root, 'dist', 'src', 'index.js'))) {
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
}
