/** What the SQLite views take for a damaged file, and the words they quote from SQLite. */
import vm from 'node:vm';
import { isDamagedFileError, sqliteSaid } from '../../src/adapters/projections/sqliteViews/sqliteViewsDamage';

describe('a damaged views file', () => {
  it('is what SQLite reports as corrupt or not a database, extended codes included; nothing else is', () => {
    for (const code of ['SQLITE_CORRUPT', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_NOTADB'])
      expect(isDamagedFileError(Object.assign(new Error('x'), { code }))).toBe(true);
    for (const code of ['SQLITE_BUSY', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CORRUPTED', 'SQLITE_CONSTRAINT', undefined])
      expect(isDamagedFileError(Object.assign(new Error('x'), { code }))).toBe(false);
    expect(isDamagedFileError(null)).toBe(false);
  });

  it("quotes SQLite's message even from an error of another realm (a native addon's, under jest)", () => {
    const foreign = vm.runInNewContext("Object.assign(new Error('database disk image is malformed'), { name: 'SqliteError' })");
    expect(foreign instanceof Error).toBe(false); // the case that printed 'SqliteError: database disk image ...'
    expect(sqliteSaid(foreign)).toBe('database disk image is malformed');
    expect(sqliteSaid('plain words')).toBe('plain words');
  });
});
