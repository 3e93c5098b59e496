/**
 * SQLite event store, the embedded default: one file, WAL, synchronous=FULL
 * (a send is on disk before it is acknowledged), one global position (the
 * rowid), atomic multi-event appends and de-duplication by event id.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'libsql';
import { ConcurrencyConflict } from '../../errors';
import { describeExpected, type AppendResult, type EventStore, type EventSubscription, type ExpectedRevision } from '../../events/eventStore';
import type { NewEvent, StoredEvent } from '../../events/types';
import { AppendSignal } from './appendSignal';
import { localSubscription } from './localSubscription';

interface EventRow {
  position: number; event_id: string; stream: string; revision: number; type: string; data: string; metadata: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  stream   TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type     TEXT NOT NULL,
  data     TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE (stream, revision)
);`;

const CROSS_PROCESS_POLL_MS = 250;

const toStored = (row: EventRow): StoredEvent => ({
  eventId: row.event_id, streamName: row.stream, revision: BigInt(row.revision), position: BigInt(row.position),
  type: row.type as StoredEvent['type'], data: JSON.parse(row.data), metadata: JSON.parse(row.metadata),
});

export class SqliteEventStore implements EventStore {
  private readonly signal = new AppendSignal();
  private readonly statements;
  private readonly appendTransaction;

  private constructor(private readonly db: Database.Database) {
    this.statements = {
      lastRevision: db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream = ?'),
      byEventId: db.prepare('SELECT stream, revision, position FROM events WHERE event_id = ?'),
      insert: db.prepare('INSERT INTO events (event_id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)'),
      readStream: db.prepare('SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision'),
      readAll: db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      head: db.prepare('SELECT MAX(position) AS position FROM events'),
    };
    this.appendTransaction = db.transaction((stream: string, events: readonly NewEvent[], expected: ExpectedRevision) =>
      this.appendInTransaction(stream, events, expected)).immediate;
  }

  static open(file: string): SqliteEventStore {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    return new SqliteEventStore(db);
  }

  async append(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = this.appendTransaction(streamName, events, expected);
    if (events.length > 0) this.signal.notify();
    return result;
  }

  private appendInTransaction(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): AppendResult {
    const duplicate = this.findDuplicate(stream, events);
    if (duplicate) return duplicate;
    const row = this.statements.lastRevision.get(stream) as { revision: number | null };
    const actual = row.revision === null ? 'no_stream' : BigInt(row.revision);
    const matches = expected === 'any' || (expected === 'no_stream' ? actual === 'no_stream' : actual === expected);
    if (!matches) throw new ConcurrencyConflict(stream, describeExpected(expected), String(actual));
    let revision = row.revision === null ? -1 : row.revision;
    let position = 0n;
    for (const event of events) {
      revision++;
      const info = this.statements.insert.run(event.eventId, stream, revision, event.type,
        JSON.stringify(event.data), JSON.stringify(event.metadata));
      position = BigInt(info.lastInsertRowid);
    }
    return { nextExpectedRevision: BigInt(revision), position };
  }

  /** A retry of an append that already landed: same ids, consecutive, in this stream. */
  private findDuplicate(stream: string, events: readonly NewEvent[]): AppendResult | null {
    if (events.length === 0) return null;
    const first = this.statements.byEventId.get(events[0].eventId) as { stream: string; revision: number; position: number } | undefined;
    if (!first) return null;
    if (first.stream !== stream) throw new Error(`Event id ${events[0].eventId} already exists in stream ${first.stream}`);
    const stored = this.statements.readStream.all(stream, first.revision) as EventRow[];
    if (stored.length < events.length || events.some((event, i) => stored[i].event_id !== event.eventId)) return null;
    const last = stored[events.length - 1];
    return { nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) };
  }

  async readStream(streamName: string, fromRevision = 0n): Promise<StoredEvent[]> {
    return (this.statements.readStream.all(streamName, Number(fromRevision)) as EventRow[]).map(toStored);
  }

  async readAll(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    return (this.statements.readAll.all(after === null ? 0 : Number(after), limit) as EventRow[]).map(toStored);
  }

  subscribe(after: bigint | null): EventSubscription {
    return localSubscription((a, l) => this.readAll(a, l), this.signal, after, CROSS_PROCESS_POLL_MS);
  }

  async headPosition(): Promise<bigint | null> {
    const row = this.statements.head.get() as { position: number | null };
    return row.position === null ? null : BigInt(row.position);
  }

  async close(): Promise<void> {
    this.signal.releaseAll();
    if (this.db.open) this.db.close();
  }
}
