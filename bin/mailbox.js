#!/usr/bin/env node
// Runs the compiled CLI; `npm run build` (or `npm start`) compiles it first.
require('reflect-metadata');
require('../dist/src/cli/main.js').main(process.argv).catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
