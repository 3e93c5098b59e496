/**
 * The embedded SQLite log read directly and read-only, as JSON text: the store
 * keeps each event's data and metadata as the JSON text it wrote, so an event
 * already at the current schema version is handed out as stored — no parse and
 * re-stringify, 2-3x faster than through the event store port (`audit replay
 * --json`). Older events go through the upcasters and are re-serialized, so a
 * row always reads at the current schema.
 */
import fs from 'node:fs';
import { openSqliteDatabase, type SqliteDatabase } from '../../support/sqlite/sqliteDriver';
import { MailboxError } from '../../errors';
import { CURRENT_SCHEMA_VERSION } from '../../events/upcasters';
import type { JsonTextLog, JsonTextRow } from '../../audit/logSource';
import { isUnreadableFileError, UnreadableLogFile } from './sqliteErrors';
import { logRowToStored } from './sqliteStatements';

const COLUMNS = 'position, event_id, stream, revision, type, data, metadata';

/** The store writes metadata with schemaVersion as its last key: read it from there; anything else is parsed. */
const TRAILING_VERSION = /"schemaVersion":(\d+)\}$/;

function schemaVersionOf(metadata: string): number {
  const trailing = TRAILING_VERSION.exec(metadata);
  if (trailing) return Number(trailing[1]);
  return (JSON.parse(metadata) as { schemaVersion?: number }).schemaVersion ?? CURRENT_SCHEMA_VERSION;
}

function atCurrentSchema(row: JsonTextRow): JsonTextRow {
  if (schemaVersionOf(row[6]) >= CURRENT_SCHEMA_VERSION) return row;
  const event = logRowToStored(row);
  return [
    row[0],
    event.eventId,
    event.streamName,
    row[3],
    event.type,
    JSON.stringify(event.data),
    JSON.stringify(event.metadata),
  ];
}

export class SqliteJsonLog implements JsonTextLog {
  private constructor(
    private readonly db: SqliteDatabase,
    private readonly file: string,
  ) {}

  static open(file: string): SqliteJsonLog {
    // Opening would create a missing file; a reader must never do that.
    if (!fs.existsSync(file)) {
      throw new MailboxError(
        'NOT_FOUND',
        'No event log',
        `There is no event log at ${file}; check MAILBOX_DATA_DIR / MAILBOX_EVENTSTORE_URL.`,
        { file },
      );
    }
    const db = openSqliteDatabase(file, undefined, { fileMustExist: true });
    try {
      db.pragma('query_only = ON'); // a reader changes nothing (not a read-only open: see SqliteEventStore.open)
      db.pragma('busy_timeout = 5000');
      // SQLite reads the file at the first statement: a file that is no database is said here, as UnreadableLogFile
      // (as SqliteEventStore.open says it), not as the driver's bare 'file is not a database' at the first page.
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch (error) {
      db.close();
      throw isUnreadableFileError(error) ? new UnreadableLogFile(file, error) : error;
    }
    return new SqliteJsonLog(db, file);
  }

  head(): bigint | null {
    return this.reading(() => {
      const row = this.db.prepare('SELECT MAX(position) AS position FROM events').get() as { position: number | null };
      return row.position === null ? null : BigInt(row.position);
    });
  }

  page(after: bigint | null, stream: string | null, limit: number): JsonTextRow[] {
    return this.reading(() => this.rows(after, stream, limit));
  }

  /**
   * A damaged page met by a read after the file opened: said as the file it is (UnreadableLogFile), as
   * SqliteEventStore.readAll says it. `audit replay --json` printed INTERNAL "database disk image is malformed" where
   * the text replay said "Event log unreadable", naming the file and the remedies.
   */
  private reading<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      throw isUnreadableFileError(error) ? new UnreadableLogFile(this.file, error) : error;
    }
  }

  private rows(after: bigint | null, stream: string | null, limit: number): JsonTextRow[] {
    const statement = this.db
      .prepare(
        `SELECT ${COLUMNS} FROM events WHERE position > ?${stream !== null ? ' AND stream = ?' : ''} ` +
          'ORDER BY position LIMIT ?',
      )
      .raw();
    const from = after === null ? 0 : Number(after);
    const rows = (stream !== null ? statement.all(from, stream, limit) : statement.all(from, limit)) as JsonTextRow[];
    for (let i = 0; i < rows.length; i++) rows[i] = atCurrentSchema(rows[i]);
    return rows;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
