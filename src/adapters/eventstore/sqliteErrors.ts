/**
 * The SQLite log's write failures, translated where they are met. Conditions of the storage that an operator can
 * fix (a full disk, an I/O error, a read-only file or disk, a lock another process holds too long, a file that
 * cannot be opened) are UNAVAILABLE, 503: the command wrote nothing and may be retried once they are fixed. Before,
 * each was a 500 INTERNAL with an error-level stack, per request, for a disk that had merely filled up. The
 * driver's error stays as the cause, for the log (the warn line names its code); the answer says what happened
 * without the driver's wording. A damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) is not translated: that is a
 * failure for an operator to look at, an INTERNAL with its stack. (Constraints and stale expectations never reach
 * here: the writer thread settles them as duplicates or conflicts.)
 */
import { MailboxError } from '../../errors';

const STORAGE_CONDITIONS: ReadonlyArray<readonly [code: RegExp, what: string]> = [
  [/^SQLITE_FULL\b/, 'the disk holding it is full (free disk space on the server)'],
  [/^SQLITE_IOERR/, 'the disk holding it failed a read or write (an I/O error)'],
  [/^SQLITE_READONLY/, 'its file or the disk holding it is read-only'],
  [/^SQLITE_(BUSY|LOCKED)/, 'another process held its lock for too long'],
  [/^SQLITE_CANTOPEN/, 'its file could not be opened'],
];

/** UNAVAILABLE for a storage condition (the error as its cause); any other error unchanged. */
export function translateSqliteWriteError(error: Error): Error {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  const condition = STORAGE_CONDITIONS.find(([pattern]) => pattern.test(code));
  if (condition === undefined) return error;
  const translated = new MailboxError(
    'UNAVAILABLE',
    'Service unavailable',
    `The event log could not be written: ${condition[1]}. Nothing was written; retry later.`,
  );
  (translated as Error).cause = error;
  return translated;
}
