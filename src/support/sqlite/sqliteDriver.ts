/**
 * The SQLite binding of the event log and the views file: better-sqlite3 when it is installed, libsql otherwise.
 *
 * Why better-sqlite3: a views batch is many small statements (a direct send ~10), and each call through libsql's
 * binding cost ~4-5 us before SQLite did any work; better-sqlite3's ~0.5 us (same machine, same run: `SELECT 1`
 * 2.9-3.9 vs 0.44-0.55 us; a keyed insert 10.3-10.5 vs 2.1-2.4 us; SQLite itself inserts such a row in ~2 us).
 * And its SQLite (3.53) has the fix of the WAL-reset bug (3.7.0 to 3.51.2, fixed in 3.51.3: a checkpoint racing a
 * commit on another connection could corrupt a WAL database), which libsql's 3.45 lacks: the log and the views are
 * each written on one connection and checkpointed on another (sqliteSidecar.ts), that bug's very pattern.
 *
 * Why a fallback: better-sqlite3 is an optional dependency compiled from its sources at install
 * (.prebuild-installrc: build from source, so no prebuilt binary is fetched from outside the npm registry), which needs python3, make and
 * a C++ compiler. Where those are missing its install fails, npm goes on without it, and the files are opened with
 * libsql (a prebuilt N-API package from the npm registry), slower but the same; the server says so at start.
 * libsql copies better-sqlite3's API, so the adapters are written once against better-sqlite3's types.
 *
 * One file, one binding: every connection of a process to a file (the reading one, the writing thread's, the
 * checkpoint sidecar's) must go through the same library, because two copies of SQLite in one process each keep
 * their own table of POSIX locks, and a descriptor one closes drops the locks the other holds.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDriver } from './sqliteDriverName';

export type { SqliteDriver } from './sqliteDriverName';

export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement = BetterSqlite3.Statement;

type DatabaseClass = new (file: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => SqliteDatabase;

/** How the module is loaded (tests pass one that fails, to take the fallback). */
export type ModuleLoader = (name: string) => unknown;

/** Loaded by name at run time: better-sqlite3 may be missing (an optional dependency whose compile failed). */
const nodeRequire: ModuleLoader = createRequire(__filename);

/** better-sqlite3 if it loads and opens a database (a package left without its compiled addon fails here), else null. */
function loadBetterSqlite3(load: ModuleLoader): DatabaseClass | null {
  try {
    const Better = load('better-sqlite3') as DatabaseClass;
    new Better(':memory:').close(); // its addon is loaded at the first open
    return Better;
  } catch {
    return null;
  }
}

/** The binding this process uses for views files: the first that loads, in order of speed. */
export function pickSqliteDriver(load: ModuleLoader = nodeRequire): SqliteDriver {
  return loadBetterSqlite3(load) !== null ? 'better-sqlite3' : 'libsql';
}

let picked: SqliteDriver | null = null;

/** The binding views files are opened with unless one is named (picked once per thread; same answer in each). */
export function defaultSqliteDriver(): SqliteDriver {
  return (picked ??= pickSqliteDriver());
}

/**
 * Opens a SQLite file (the log, the views, the views' lock) with `driver` (the default binding unless named: the one
 * every connection of this process uses). A file the open would create is made first, its owner's only (0600).
 */
export function openSqliteDatabase(
  file: string,
  driver: SqliteDriver = defaultSqliteDriver(),
  options: { readonly?: boolean; fileMustExist?: boolean } = {},
): SqliteDatabase {
  if (options.readonly !== true && options.fileMustExist !== true) createOwnerOnly(file);
  const Database = nodeRequire(driver) as DatabaseClass;
  return new Database(file, options);
}

/**
 * Creates `file`, empty (SQLite takes an empty file as a new database), readable and writable by its owner only, unless
 * it is there. Why: SQLite creates a database 0644 under the usual umask, and gives the -wal, -shm and journal it makes
 * beside it the database's mode. The mailbox makes the directory it creates 0700, but a directory that was there
 * already (made by the operator, a mounted volume, a shared one) is left as it is: there the log, every message body
 * in it, and the views were readable by every user of the machine. A file that cannot be made here (no such
 * directory, no permission) is left to SQLite's open, whose error the callers translate.
 */
function createOwnerOnly(file: string): void {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return;
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
  } catch {
    // EEXIST: an existing file keeps its mode (the operator's to set); anything else: SQLite's open says what it is.
  }
}
