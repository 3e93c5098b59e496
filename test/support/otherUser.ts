/**
 * Runs `node bin/mailbox.js ...args` as a user whom file modes stop: this user, or, when the tests run as root (whom
 * modes do not stop), user nobody. For refusals of files and directories another user keeps to itself.
 */
import { spawn, spawnSync } from 'node:child_process';
import { MAILBOX_BIN, ROOT, runOf, type CliRun } from './builtCli';

const NOBODY = 65534;
export const asRoot = process.getuid?.() === 0;
const as = asRoot ? { uid: NOBODY, gid: NOBODY } : {};

/** Whether such a user can run the CLI from this checkout (root's may be out of nobody's reach); else the caller skips. */
export function otherUserCanRunCli(): boolean {
  if (spawnSync(process.execPath, [MAILBOX_BIN, '--version'], { cwd: ROOT, ...as }).status === 0) return true;
  process.stderr.write('skipped: running as root, and user nobody cannot run bin/mailbox.js from this checkout\n');
  return false;
}

/** `mailbox ...args` as that user, with the given environment (added to a clean MAILBOX_-free one). */
export function runCliAsOtherUser(args: string[], env: Record<string, string>): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawn(process.execPath, [MAILBOX_BIN, ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    ...as,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return runOf(child);
}
