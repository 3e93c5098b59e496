/** Which SQLite binding the views file gets: better-sqlite3 when it loads and opens a database, libsql otherwise. */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pickSqliteDriver } from '../../src/support/sqlite/sqliteDriver';

describe('installing better-sqlite3', () => {
  it('compiles it from its sources whatever npm passes on: its install script finds .prebuild-installrc', () => {
    const packageDir = path.dirname(require.resolve('better-sqlite3/package.json'));
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
    const settings = execFileSync(
      process.execPath,
      ['-e', "const rc = require('prebuild-install/rc')(require('./package.json')); console.log(JSON.stringify(rc))"],
      { cwd: packageDir, env, encoding: 'utf8' },
    );
    const { buildFromSource, configs } = JSON.parse(settings) as { buildFromSource: unknown; configs: string[] };
    expect(buildFromSource).toBe(true); // prebuild-install then runs node-gyp instead of downloading a binary
    expect(configs).toContain(path.resolve(__dirname, '../../.prebuild-installrc'));
  });
});

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
