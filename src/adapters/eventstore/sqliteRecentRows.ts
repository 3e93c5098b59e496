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

/**
 * A few seconds of writes at full speed, and at most KEPT_BYTES of their text: a count alone held 8,192 rows of
 * whatever size, ~490 MB of heap with 60 KB bodies (bench core/largeMessages). Older rows are read from the file.
 */
const KEPT = 8_192;
const KEPT_BYTES = 16 * 1024 * 1024;

/** A row's text as held (2 bytes a character at most), with the row's array and fixed fields. */
const rowBytes = (row: LogRow): number =>
  2 * (row[1].length + row[2].length + row[4].length + row[5].length + row[6].length) + 120;

export class SqliteRecentRows {
  private readonly rows = new Map<number, LogRow>();
  /** Positions held, oldest first (from `head`): evicting the oldest needs no scan of the Map's deleted slots. */
  private order: number[] = [];
  private head = 0;
  private bytes = 0;

  /** The rows one append inserted (consecutive positions and revisions, ending at the given ones). */
  remember(stream: string, lastPosition: number, lastRevision: number, written: readonly SerializedEvent[]): void {
    const first = lastPosition - written.length + 1;
    written.forEach(([eventId, type, data, metadata], i) => {
      const position = first + i;
      const row: LogRow = [position, eventId, stream, lastRevision - written.length + 1 + i, type, data, metadata];
      const replaced = this.rows.get(position);
      if (replaced !== undefined) this.bytes -= rowBytes(replaced);
      else this.order.push(position);
      this.rows.set(position, row);
      this.bytes += rowBytes(row);
    });
    while (this.rows.size > KEPT || this.bytes > KEPT_BYTES) this.evictOldest();
    if (this.head > 4096 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
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

  /** Rows and estimated bytes held now. */
  size(): { rows: number; bytes: number } {
    return { rows: this.rows.size, bytes: this.bytes };
  }

  private evictOldest(): void {
    const position = this.order[this.head++];
    const row = this.rows.get(position);
    if (row === undefined) return;
    this.rows.delete(position);
    this.bytes -= rowBytes(row);
  }
}
