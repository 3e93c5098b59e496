/** The SQLite log's write failures: conditions of the storage are UNAVAILABLE (503) with a teaching message. */
import { translateSqliteWriteError } from '../../src/adapters/eventstore/sqliteErrors';
import { isMailboxError } from '../../src/errors';

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code, name: 'SqliteError' });

describe('translateSqliteWriteError', () => {
  it.each([
    ['SQLITE_FULL', 'database or disk is full', 'the disk holding it is full'],
    ['SQLITE_IOERR_WRITE', 'disk I/O error', 'I/O error'],
    ['SQLITE_IOERR_FSYNC', 'disk I/O error', 'I/O error'],
    ['SQLITE_READONLY', 'attempt to write a readonly database', 'read-only'],
    ['SQLITE_READONLY_DBMOVED', 'attempt to write a readonly database', 'deleted, moved or replaced while the server ran'],
    ['SQLITE_BUSY', 'database is locked', 'another process held its lock'],
    ['SQLITE_CANTOPEN', 'unable to open database file', 'could not be opened'],
  ])(
    '%s is UNAVAILABLE, says what happened and that nothing was written, and keeps the driver error as its cause',
    (code, driver, says) => {
      const cause = sqliteError(code, driver);
      const translated = translateSqliteWriteError(cause);
      expect(isMailboxError(translated)).toBe(true);
      expect(translated).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
      expect(translated.message).toContain(says);
      expect(translated.message).toContain('Nothing was written; retry later.');
      expect(translated.message).not.toContain(driver); // the driver's wording goes to the log, not the answer
      expect((translated as Error).cause).toBe(cause);
    },
  );

  it('leaves a damaged file, an error without a code and any other error as they are', () => {
    for (const error of [
      sqliteError('SQLITE_CORRUPT', 'database disk image is malformed'),
      sqliteError('SQLITE_NOTADB', 'file is not a database'),
      sqliteError('SQLITE_FULLNESS', 'not a real code'),
      new Error('SQLite writer thread exited (code 1)'),
    ]) {
      expect(translateSqliteWriteError(error)).toBe(error);
    }
  });
});
