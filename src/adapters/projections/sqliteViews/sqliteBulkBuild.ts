/**
 * Building views from a long stretch of log (a first start, a deleted views
 * file, a blue/green generation) in bulk: while the generation is empty or
 * still being bulk-built and batches are large, its listing indexes are
 * dropped and each batch is one transaction; the indexes are created again,
 * each in one sort, before anything reads the generation or a small (live)
 * batch arrives. A mark in views_meta (`bulk:<generation>`) says that the
 * indexes are missing, so that a crash mid-build is finished at the next look.
 */
import type Database from 'better-sqlite3';
import type { SqliteViewsMeta } from './sqliteViewsMeta';
import { dropListingIndexesSql, generationSchema } from './sqliteViewsSchema';

/** Batches at least this large are applied in bulk (the runner's catch-up pages hold 1,000 events, live ones far fewer). */
export const BULK_MIN_EVENTS = 500;

export class SqliteBulkBuild {
  constructor(
    private readonly db: Database.Database,
    private readonly meta: SqliteViewsMeta,
  ) {}

  private mark(generation: string): string {
    return `bulk:${generation}`;
  }

  building(generation: string): boolean {
    return this.meta.value(this.mark(generation)) !== null;
  }

  /**
   * Whether this batch goes in bulk: large, into a generation that is empty or already being bulk-built.
   * Drops the listing indexes when a bulk build starts. `empty` is asked only of a large batch: a live one
   * (a few events) reads nothing here.
   */
  begin(generation: string, events: number, empty: () => boolean): boolean {
    if (events < BULK_MIN_EVENTS) return false;
    if (this.building(generation)) return true;
    if (!empty()) return false;
    this.meta.transaction(() => {
      this.db.exec(dropListingIndexesSql(generation));
      this.meta.write(this.mark(generation), '1');
    });
    return true;
  }

  /** Creates the listing indexes again if a bulk build left them out (a no-op otherwise). */
  finish(generation: string): void {
    if (!this.building(generation)) return;
    this.meta.transaction(() => this.finishWithin(generation)); // looked at again: another connection may have finished it
  }

  /** finish, inside a write transaction the caller holds (a live batch's: no read of its own before it). */
  finishWithin(generation: string): void {
    if (!this.building(generation)) return;
    this.db.exec(generationSchema(generation)); // every CREATE ... IF NOT EXISTS: only the missing indexes are built
    this.meta.remove(this.mark(generation));
  }
}
