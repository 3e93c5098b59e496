/**
 * Preload (node -r) that writes the npm packages the process's main thread has loaded, one name a line, to the file
 * in LOADED_PACKAGES_FILE: when it exits, and at each SIGUSR2 (to <file>.now, for a process that keeps running).
 * For tests of what a command loads before it does its work.
 */
const fs = require('node:fs');

function write(file) {
  const names = new Set();
  for (const loaded of Object.keys(require.cache)) {
    const match = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(loaded);
    if (match) names.add(match[1].replace(/\\/g, '/'));
  }
  fs.writeFileSync(`${file}.partial`, [...names].sort().join('\n'));
  fs.renameSync(`${file}.partial`, file); // whole, for a reader polling for it
}

process.on('exit', () => write(process.env.LOADED_PACKAGES_FILE));
process.on('SIGUSR2', () => write(`${process.env.LOADED_PACKAGES_FILE}.now`));
