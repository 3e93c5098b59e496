/**
 * The SQLite bindings this project opens files with, fastest first. Apart from sqliteDriver.ts, which imports
 * better-sqlite3's types: a declaration the library publishes (sqliteBackup's options) names a driver, and importing it
 * from there made a program built on the library need @types/better-sqlite3, one of this project's devDependencies
 * ("Could not find a declaration file for module 'better-sqlite3'" under strict settings).
 */
export type SqliteDriver = 'better-sqlite3' | 'libsql';
