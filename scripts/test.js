#!/usr/bin/env node
// `npm test`: builds, then runs the static checks (`npm run checks`: type-check, layer rules, OpenAPI lint, lint,
// format check) beside the test suite (jest, with any arguments given: `npm test -- test/unit`), and fails if either
// failed.
//
// Why beside and not before: CI must stay under 20 minutes, on two cores. The checks took ~87 s of wall time and ~155 s
// of CPU before the suite started, and the suite leaves about a fifth of the two cores idle (its three workers wait on
// child processes, sockets and fsync: 1,086 s of CPU in 684 s, December 2026): the checks fit in that idle time.
// The build comes first and alone: the suite starts the compiled CLI (dist/) and serves the built console, and no
// check writes dist/ (the type-check does not emit), so nothing a test runs is rewritten under it.
//
// The checks' output is held and printed whole when they end (a failure at once, in the middle of the suite's output if
// need be); a line at the very end says how both went.
const { spawn, spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const started = Date.now();
const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;

const build = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.error('npm test: the build failed (above); no checks or tests were run');
  process.exit(build.status ?? 1);
}

const checks = spawn(npm, ['run', '--silent', 'checks'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
// At a lower priority (nice 10, inherited by the processes npm starts for them): they are to use the time the suite
// leaves idle, not to slow the suite's first files, whose CLI processes and servers have deadlines (a whole run with the
// checks at the same priority timed out heartbeatOnce.e2e's longest test at load 10).
try {
  os.setPriority(checks.pid, 10);
} catch {
  // no such right here: the checks run at the suite's priority
}
const checksOutput = [];
checks.stdout.on('data', (chunk) => checksOutput.push(chunk));
checks.stderr.on('data', (chunk) => checksOutput.push(chunk));
const checksDone = new Promise((resolve) => {
  checks.on('error', (error) => resolve({ code: 1, error }));
  checks.on('close', (code, signal) => resolve({ code: code ?? 1, signal }));
});
let checksSummary = 'still running';
void checksDone.then(({ code, signal, error }) => {
  if (code === 0) {
    checksSummary = `passed (${seconds()})`;
    process.stderr.write(`\nnpm test: checks passed (type-check, layer rules, OpenAPI lint, lint, format) in ${seconds()}\n\n`);
    return;
  }
  checksSummary = `FAILED${signal ? ` (${signal})` : ''}${error ? ` (${error.message})` : ''}, output above`;
  process.stderr.write(`\nnpm test: checks FAILED after ${seconds()}; their output:\n`);
  process.stderr.write(Buffer.concat(checksOutput));
  process.stderr.write("npm test: (end of the checks' output; the test suite goes on)\n\n");
});

const jest = spawn(process.execPath, [path.join(root, 'node_modules/jest/bin/jest.js'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    checks.kill(signal);
    jest.kill(signal);
  });
}
jest.on('close', async (jestCode, jestSignal) => {
  if (checksSummary === 'still running') process.stderr.write('npm test: the suite is done; waiting for the checks\n');
  const { code: checksCode } = await checksDone;
  const suite = jestCode === 0 ? 'passed' : `FAILED${jestSignal ? ` (${jestSignal})` : ''}`;
  process.stderr.write(`npm test: checks ${checksSummary}; test suite ${suite}; ${seconds()} in all\n`);
  process.exit(checksCode !== 0 ? checksCode || 1 : (jestCode ?? 1));
});
