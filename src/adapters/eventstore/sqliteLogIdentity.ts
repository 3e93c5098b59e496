/**
 * The SQLite log's identity, stored in the file itself (a `meta` table beside
 * the events): given when the file is created, or on the first open of a file
 * written before identities existed, and never changed afterwards.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';

const META_SCHEMA = 'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)';
const KEY = 'log_identity';

/** Reads the identity, creating it first if the file has none (INSERT OR IGNORE: a concurrent opener's stays). */
export function ensureLogIdentity(db: Database.Database): string {
  db.exec(META_SCHEMA);
  db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(KEY, randomUUID());
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(KEY) as { value: string };
  return row.value;
}

/**
 * Reads the identity without writing anything (a log opened read-only): null for a file written before identities
 * existed and not opened by a server since, or one without the meta table at all.
 */
export function readLogIdentity(db: Database.Database): string | null {
  const table = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get();
  if (table === undefined) return null;
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(KEY) as { value: string } | undefined;
  return row?.value ?? null;
}
