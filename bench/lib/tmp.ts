/** Scratch directories for benchmark data (real disk under the OS temp dir, so fsync costs are real). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function makeTmpDir(prefix = 'mailbox-bench-'): string {
  return fs.mkdtempSync(path.join(process.env.BENCH_TMPDIR ?? os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Runs `work` with a fresh directory that is removed afterwards, even on failure. */
export async function withTmpDir<T>(work: (dir: string) => Promise<T>, prefix?: string): Promise<T> {
  const dir = makeTmpDir(prefix);
  try {
    return await work(dir);
  } finally {
    removeDir(dir);
  }
}
