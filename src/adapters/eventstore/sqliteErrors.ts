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

/** A condition of the storage under a SQLite file, which an operator can fix (not a damaged file: see above). */
export type StorageCondition = 'full' | 'io' | 'moved' | 'readonly' | 'locked' | 'cantopen';

const CONDITION_CODES: ReadonlyArray<readonly [code: RegExp, condition: StorageCondition]> = [
  [/^SQLITE_FULL\b/, 'full'],
  [/^SQLITE_IOERR/, 'io'],
  [/^SQLITE_READONLY_DBMOVED\b/, 'moved'], // before READONLY: the writer thread's check (sqliteWriterThread.ts)
  [/^SQLITE_READONLY/, 'readonly'],
  [/^SQLITE_(BUSY|LOCKED)/, 'locked'],
  [/^SQLITE_CANTOPEN/, 'cantopen'],
];

/** Which storage condition a SQLite error reports (by its code, extended codes included), or null. */
export function storageConditionOf(error: unknown): StorageCondition | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  return CONDITION_CODES.find(([pattern]) => pattern.test(code))?.[1] ?? null;
}

const WHILE_WRITING: Record<StorageCondition, string> = {
  full: 'the disk holding it is full (free disk space on the server)',
  io: 'the disk holding it failed a read or write (an I/O error)',
  moved: 'its file was deleted, moved or replaced while the server ran (the server must be restarted)',
  readonly: 'its file or the disk holding it is read-only',
  locked: 'another process held its lock for too long',
  cantopen: 'its file could not be opened',
};

/** UNAVAILABLE for a storage condition (the error as its cause); any other error unchanged. */
export function translateSqliteWriteError(error: Error): Error {
  const condition = storageConditionOf(error);
  if (condition === null) return error;
  const translated = new MailboxError(
    'UNAVAILABLE',
    'Service unavailable',
    `The event log could not be written: ${WHILE_WRITING[condition]}. Nothing was written; retry later.`,
  );
  (translated as Error).cause = error;
  return translated;
}

/**
 * The log's file met on opening it as not a database SQLite can read: SQLITE_NOTADB (not a SQLite file at all) or
 * SQLITE_CORRUPT (damaged). At start that is one line naming the file (startupChecks.ts), not the driver's stack.
 */
export class UnreadableLogFile extends Error {
  constructor(
    readonly file: string,
    cause: Error,
  ) {
    super(`${file} cannot be read as a SQLite database (SQLite: ${cause.message.split('\n')[0]})`, { cause });
    this.name = 'UnreadableLogFile';
  }
}

/**
 * Whether a SQLite error says its file is not a database or is damaged (NOTADB, CORRUPT, extended codes included).
 * By its code alone, not `instanceof Error`: a native addon's errors carry the prototypes of the realm that loaded it
 * first (under jest, an earlier test file's), so the check failed there and the driver's bare "file is not a database"
 * went out as INTERNAL (sqliteViewsDamage.ts says the same of the views file).
 */
export const isUnreadableFileError = (error: unknown): error is Error => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(NOTADB|CORRUPT)/.test(code);
};
