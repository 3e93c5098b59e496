/**
 * Temp directories a test file makes, removed after it. Its own module, with nothing of the mailbox's: jest loads it
 * before every test file (test/support/cleanupTempDirs.ts), and a unit test of a rule should not pay for importing the
 * whole mailbox (fixtures.ts re-exports these).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A fresh directory, removed after the test file (test/support/cleanupTempDirs.ts, a jest
 * setupFilesAfterEnv): some hold an admin.token, none may outlive the run.
 */
export function tempDir(prefix = 'mailbox-test-', base = os.tmpdir()): string {
  const dir = fs.mkdtempSync(path.join(base, prefix));
  createdTempDirs.push(dir);
  return dir;
}

/** tmpfs when there is one (appends fsync; tests about Redis or the CLI are not about disks). */
export const scratchBase = (): string => (fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());

export const createdTempDirs: string[] = [];

/**
 * Retried: a process the test ended may still be writing into its directory for a moment (Chromium's helpers into
 * their profile: a clean clone's run once failed the docs page suite with ENOTEMPTY after every test had passed).
 */
export function removeTempDirs(): void {
  for (const dir of createdTempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}
