#!/usr/bin/env node
// Runs the compiled CLI; `npm run build` (or `npm start`) compiles it first.
const path = require('node:path');
const built = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
try {
  require.resolve(built); // resolved, not looked for: a test's require hook maps dist/ to the sources
} catch {
  // `npm install` does not build: a fresh clone's `mailbox --help` (npm link, or the README's alias) was a
  // MODULE_NOT_FOUND stack trace. One line saying what to run, as every start-up error is.
  const root = path.resolve(__dirname, '..');
  console.error(
    `mailbox: not built yet (${path.relative(root, built)} is missing): run \`npm run build\` in ${root} ` +
      '(`npm start` builds, then serves).',
  );
  process.exit(2);
}
require('reflect-metadata');
require(built).main(process.argv).catch((err) => {
  // A startup error the operator can fix is one line (see src/startupError.ts); anything else keeps its stack.
  if (err && err.name === 'StartupError') {
    // What a start that went on would have logged (a misspelled variable), before the refusal's own line, last.
    for (const warning of err.warnings || []) console.error(`mailbox: warning: ${warning}`);
    console.error(`mailbox: ${err.message}`);
    if (process.env.MAILBOX_LOG_LEVEL === 'debug' || process.env.MAILBOX_LOG_LEVEL === 'trace') console.error(err.stack);
    process.exit(err.exitCode || 2);
  }
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
