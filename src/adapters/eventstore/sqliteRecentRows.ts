/**
 * The log rows this process committed last, kept so that its own live subscription (the projector) need not
 * read them back from SQLite a moment after writing them. Measured at 2,000 sends/s (issue 10), reading the
 * rows back (the query and the driver's row objects) was ~8% of the server's main thread.
 *
 * Exact by construction: a row is kept only as the writer inserted it (the same JSON text, decoded by the same
 * logRowToStored as a row read from the file), only for appends that inserted rows (a repeated append answers
 * the original's positions, whose stored rows may differ from the retry's), and it is served only as part of a
 * run with no hole from the reader's position: if position `after + 1` is not here (another process wrote it,
 * or it is older than what is kept), the caller reads the file as before. Positions are never reused, so a run
 * of rows held here is exactly what the file holds at those positions.
 */
import type { LogRow } from './sqliteStatements';
import type { SerializedEvent } from './sqliteWriter';

/** A few seconds of writes at full speed; older rows are read from the file. */
const KEPT = 8_192;

export class SqliteRecentRows {
  private readonly rows = new Map<number, LogRow>();

  /** The rows one append inserted (consecutive positions and revisions, ending at the given ones). */
  remember(stream: string, lastPosition: number, lastRevision: number, written: readonly SerializedEvent[]): void {
    const first = lastPosition - written.length + 1;
    written.forEach(([eventId, type, data, metadata], i) => {
      this.rows.set(first + i, [first + i, eventId, stream, lastRevision - written.length + 1 + i, type, data, metadata]);
    });
    for (const oldest of this.rows.keys()) {
      if (this.rows.size <= KEPT) break;
      this.rows.delete(oldest);
    }
  }

  /** Rows after `after`, consecutive from `after + 1`, at most `limit`; empty when `after + 1` is not held. */
  after(after: number, limit: number): LogRow[] {
    const run: LogRow[] = [];
    for (let position = after + 1; run.length < limit; position++) {
      const row = this.rows.get(position);
      if (row === undefined) break;
      run.push(row);
    }
    return run;
  }
}
