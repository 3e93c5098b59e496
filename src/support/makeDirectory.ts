/**
 * Creates a directory and its missing parents, one level at a time, failing with the file system's own error.
 *
 * Why not `fs.mkdirSync(dir, { recursive: true })`: Node's recursive mkdir loops forever, at full CPU and deaf to
 * SIGTERM (the loop never returns to the event loop), when a parent exists but refuses new entries with ENOENT:
 * `MAILBOX_DATA_DIR=/proc/x` hung `mailbox serve` with no output. Here each missing level is made by one plain
 * mkdir, so such a parent answers ENOENT once (as does a parent that is a link to nothing), and the caller reports
 * it.
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * The mode of a directory the mailbox makes for its data (the log, the views, the admin token): its owner's only. The
 * files in it (messages, token hashes) are not for other users of the machine, whatever the umask makes of the files.
 */
export const OWNER_ONLY = 0o700;

export function makeDirectory(dir: string, mode?: number): void {
  const missing: string[] = [];
  // lstat, not exists: a link to nothing is there (mkdir under it answers ENOENT), not missing.
  for (let at = path.resolve(dir); fs.lstatSync(at, { throwIfNoEntry: false }) === undefined; at = path.dirname(at)) {
    missing.push(at);
    if (path.dirname(at) === at) break; // a root that is not there: its mkdir says why
  }
  for (const level of missing.reverse()) {
    try {
      fs.mkdirSync(level, { mode });
    } catch (error) {
      // Made by another process meanwhile: fine when it is a directory (mkdir under a file says ENOTDIR next).
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(level).isDirectory()) throw error;
    }
  }
}
