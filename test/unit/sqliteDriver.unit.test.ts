/** Which SQLite binding the views file gets: better-sqlite3 when it loads and opens a database, libsql otherwise. */
import { pickSqliteDriver } from '../../src/support/sqlite/sqliteDriver';

describe('pickSqliteDriver', () => {
  it('takes better-sqlite3 when it is installed and opens a database', () => {
    const opened: string[] = [];
    class Opens {
      constructor(file: string) {
        opened.push(file);
      }
      close(): void {}
    }
    expect(pickSqliteDriver((name) => (name === 'better-sqlite3' ? Opens : undefined))).toBe('better-sqlite3');
    expect(opened).toEqual([':memory:']); // its addon is only loaded at a first open: the pick opens one
  });

  it('falls back to libsql when better-sqlite3 is not installed (its compile failed at install)', () => {
    const load = (name: string): unknown => {
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
    };
    expect(pickSqliteDriver(load)).toBe('libsql');
  });

  it('falls back to libsql when better-sqlite3 is there but its compiled addon is not', () => {
    class NoAddon {
      constructor() {
        throw new Error('Could not locate the bindings file. Tried: build/Release/better_sqlite3.node');
      }
    }
    expect(pickSqliteDriver(() => NoAddon)).toBe('libsql');
  });
});
