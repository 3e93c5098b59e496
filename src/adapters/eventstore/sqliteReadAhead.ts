/**
 * Reading the log ahead during a long catch-up (a rebuild): when a caller
 * pages through the log with full pages, the sidecar connection fetches the
 * next page on another thread while the caller applies this one. Fetching
 * rows is a quarter of a rebuild's main-thread time with this driver.
 *
 * A prefetched page is used only for the very same (after, limit) and only
 * when it is full: positions are assigned in commit order and never reused,
 * so a full page can never miss a later commit. Anything else is read on the
 * main connection as usual.
 */
import type { SqliteSidecar } from './sqliteSidecar';

/** Only bulk paging reads ahead; live subscriptions read small pages. */
const MIN_PAGE = 500;

type Rows = unknown[][];

export class SqliteReadAhead {
  private ahead: { after: number; limit: number; rows: Promise<Rows | null> } | null = null;

  constructor(private readonly sidecar: SqliteSidecar) {}

  /** The prefetched page for exactly (after, limit), if it is complete; otherwise null. */
  async take(after: number, limit: number): Promise<Rows | null> {
    const ahead = this.ahead;
    this.ahead = null;
    if (!ahead || ahead.after !== after || ahead.limit !== limit) return null;
    const rows = await ahead.rows;
    return rows !== null && rows.length === limit ? rows : null;
  }

  /** After a full page ending at `lastPosition`: start fetching the next one. */
  noteFullPage(lastPosition: number, limit: number): void {
    if (limit < MIN_PAGE || !this.sidecar.available) return;
    const rows = this.sidecar.request({ kind: 'readAll', after: lastPosition, limit })
      .then((result) => result as Rows, () => null);
    this.ahead = { after: lastPosition, limit, rows };
  }
}
