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
import type { SqliteSidecar } from '../../support/sqlite/sqliteSidecar';

/** Only bulk paging reads ahead; live subscriptions read small pages. */
const MIN_PAGE = 500;

type Rows = unknown[][];

interface Ahead {
  after: number;
  limit: number;
  rows: Rows | null;
  done: boolean;
}

export class SqliteReadAhead {
  private ahead: Ahead | null = null;

  constructor(private readonly sidecar: SqliteSidecar) {}

  /**
   * The prefetched page for exactly (after, limit) if it has arrived and is complete; otherwise null
   * and the caller reads it itself: on a busy machine the other thread may lag, and reading here
   * beats waiting for it.
   */
  async take(after: number, limit: number): Promise<Rows | null> {
    const ahead = this.ahead;
    this.ahead = null;
    if (!ahead || ahead.after !== after || ahead.limit !== limit) return null;
    if (!ahead.done) await new Promise((resolve) => setImmediate(resolve)); // let an answer already sent arrive
    return ahead.done && ahead.rows !== null && ahead.rows.length === limit ? ahead.rows : null;
  }

  /** After a full page ending at `lastPosition`: start fetching the next one. */
  noteFullPage(lastPosition: number, limit: number): void {
    if (limit < MIN_PAGE || !this.sidecar.available) return;
    const ahead: Ahead = { after: lastPosition, limit, rows: null, done: false };
    this.sidecar.request({ kind: 'readAll', after: lastPosition, limit }).then(
      (result) => {
        ahead.rows = result as Rows;
        ahead.done = true;
      },
      () => {
        ahead.done = true;
      },
    );
    this.ahead = ahead;
  }
}
