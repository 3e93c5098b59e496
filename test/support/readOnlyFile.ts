/** A file made read-only for this process, whoever runs the tests. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Makes `file` read-only for this process: mode 0444, or, for root (whom modes do not stop), the immutable attribute.
 * Returns how to undo it, or null when it cannot be done here (root without chattr, or a file system without it): the
 * caller skips, saying so on stderr.
 */
export function makeReadOnly(file: string): (() => void) | null {
  if (process.getuid?.() !== 0) {
    const mode = fs.statSync(file).mode & 0o777;
    fs.chmodSync(file, 0o444);
    return () => fs.chmodSync(file, mode);
  }
  try {
    execFileSync('chattr', ['+i', file], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return () => execFileSync('chattr', ['-i', file], { stdio: 'ignore' });
}

export const READ_ONLY_SKIPPED = 'skipped: running as root and `chattr +i` is not available here, so no file is read-only\n';
