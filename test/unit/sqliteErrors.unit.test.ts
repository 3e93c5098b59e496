/** The SQLite log's write failures: conditions of the storage are UNAVAILABLE (503) with a teaching message. */
import vm from 'node:vm';
import { isUnreadableFileError, translateSqliteWriteError } from '../../src/adapters/eventstore/sqliteErrors';
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

describe('isUnreadableFileError', () => {
  // better-sqlite3's addon keeps the error class of the first realm that loaded it: under jest, an earlier test file's,
  // so in a later file its errors were no `instanceof Error`, a text file as the log was not known as one, and
  // `mailbox audit` said INTERNAL 'file is not a database' (CI, whichever file ran first in the worker).
  it('knows a file that is no database, or damaged, by its code, even from an error of another realm', () => {
    const foreign = (code: string) =>
      vm.runInNewContext(`Object.assign(new Error('file is not a database'), { code: '${code}', name: 'SqliteError' })`);
    expect(foreign('SQLITE_NOTADB') instanceof Error).toBe(false);
    expect(isUnreadableFileError(foreign('SQLITE_NOTADB'))).toBe(true);
    expect(isUnreadableFileError(foreign('SQLITE_CORRUPT_INDEX'))).toBe(true);
    expect(isUnreadableFileError(sqliteError('SQLITE_NOTADB', 'file is not a database'))).toBe(true);
    for (const other of [foreign('SQLITE_FULL'), new Error('no code'), null, undefined, 'SQLITE_NOTADB'])
      expect(isUnreadableFileError(other)).toBe(false);
  });
});
