/**
 * Lets `bin/mailbox.js` run on the TypeScript sources (with tsRequireHook.js):
 * its require of dist/src/... resolves to src/....ts, so a test spawns the real
 * CLI entry point, exit codes and all, without a build step.
 * Usage: node -r ./test/support/tsRequireHook.js -r ./test/support/distToSrc.js bin/mailbox.js serve
 */
const Module = require('node:module');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const dist = path.join(root, 'dist', 'src') + path.sep;
const original = Module._resolveFilename;
Module._resolveFilename = function resolve(request, parent, ...rest) {
  const absolute = parent && request.startsWith('.') ? path.resolve(path.dirname(parent.filename), request) : request;
  if (absolute.startsWith(dist))
    return original.call(this, path.join(root, 'src', absolute.slice(dist.length)).replace(/\.js$/, '.ts'), parent, ...rest);
  return original.call(this, request, parent, ...rest);
};
