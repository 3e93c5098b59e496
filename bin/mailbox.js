#!/usr/bin/env node
// Runs the compiled CLI; `npm run build` (or `npm start`) compiles it first.
require('reflect-metadata');
require('../dist/src/cli/main.js').main(process.argv).catch((err) => {
  // A startup error the operator can fix is one line (see src/startupError.ts); anything else keeps its stack.
  if (err && err.name === 'StartupError') {
    console.error(`mailbox: ${err.message}`);
    if (process.env.MAILBOX_LOG_LEVEL === 'debug' || process.env.MAILBOX_LOG_LEVEL === 'trace') console.error(err.stack);
    process.exit(err.exitCode || 2);
  }
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
