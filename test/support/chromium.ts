/**
 * Debian's chromium for browser tests (driven by playwright-core; never a browser
 * download), with the flags CI runs it with: headless, no sandbox (root in CI),
 * and nothing that reaches out on its own (updates, sync, background networking).
 */
import fs from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** True when chromium is installed; otherwise says on stderr that `what` is skipped and how to install it. */
export function haveChromium(what: string): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  process.stderr.write(`${what}: SKIPPED: ${CHROMIUM} is absent (Debian: apt-get install -y chromium; .ci/run installs it)\n`);
  return false;
}
