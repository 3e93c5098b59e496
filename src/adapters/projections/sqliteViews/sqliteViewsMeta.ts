/**
 * The file-wide rows of the SQLite views (`views_meta`): which generation is
 * active, the generation counter, the live writer's mark and a rebuild's
 * fence, each with the time it lapses (milliseconds since the epoch).
 */
import type Database from 'better-sqlite3';
import { StartupError } from '../../../startupError';
import { GENERATION_NAME, generationSchema, META_SCHEMA, VIEWS_SCHEMA_VERSION } from './sqliteViewsSchema';

/** A live projector renews its mark every second or so (projectionRunner.ts); it lapses after this long. */
export const LIVE_WRITER_TTL_MS = 5000;
const FIRST_GENERATION = 'g1';

/**
 * What a reader (audit verify, projections status, the heartbeat) answers for views of another schema: it leaves them
 * as they are (dropping them would empty the views under a running server of the version that wrote them), and says
 * who rebuilds them. `reason` is otherSchema's.
 */
export function otherSchemaRefused(file: string, reason: string): StartupError {
  return new StartupError(
    `The SQLite views file ${file} is of another views schema (${reason}); a reader leaves it as it is: nothing was ` +
      'changed. The views are rebuilt from the event log for this version by mailbox serve of this version at its ' +
      'start, or by mailbox projections rebuild; or run this command with the mailbox version that wrote them.',
    { viewsFile: file },
    { refusal: { error: 'Views of another schema', code: 'UNAVAILABLE' } },
  );
}

export class SqliteViewsMeta {
  private readonly get: Database.Statement;
  private readonly set: Database.Statement;
  private readonly deleteKey: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;

  constructor(private readonly db: Database.Database) {
    db.exec(META_SCHEMA);
    this.get = db.prepare('SELECT value FROM views_meta WHERE key = ?');
    this.set = db.prepare(
      'INSERT INTO views_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    this.deleteKey = db.prepare('DELETE FROM views_meta WHERE key = ?');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /**
   * A new file gets its first generation; an existing one keeps its own if its tables have this code's shape.
   * A file of another schema (VIEWS_SCHEMA_VERSION; missing: written before issue 13) has its generations
   * dropped and starts a fresh, empty one, which the projector builds from the whole log: returns why (null: kept).
   */
  ensureActive(): string | null {
    // Nothing to do (an active generation of this schema): read, not written. The write lock taken for nothing stopped
    // a reader (projections status) behind another process's write transaction.
    if (this.value('active') !== null && this.otherSchema() === null) return null;
    return this.transaction(() => {
      if (this.value('active') === null) {
        this.db.exec(generationSchema(FIRST_GENERATION));
        this.set.run('active', FIRST_GENERATION);
        this.set.run('counter', '1');
        this.set.run('schema', VIEWS_SCHEMA_VERSION);
        return null;
      }
      const other = this.otherSchema();
      if (other === null) return null;
      this.dropEveryGeneration();
      const next = `g${Number(this.value('counter') ?? '1') + 1}`;
      this.db.exec(generationSchema(next));
      this.set.run('counter', String(Number(next.slice(1))));
      this.set.run('active', next);
      this.set.run('schema', VIEWS_SCHEMA_VERSION);
      return other;
    });
  }

  /**
   * Why the file's tables are not of this code's schema, or null (they are, or the file has none yet). Reads only:
   * a reader asks before ensureActive, which would drop them.
   */
  otherSchema(): string | null {
    if (this.value('active') === null) return null;
    const schema = this.value('schema');
    if (schema === VIEWS_SCHEMA_VERSION) return null;
    return `its tables are of views schema ${schema ?? '1 (before the delivery ledger)'}, this mailbox reads schema ${VIEWS_SCHEMA_VERSION}`;
  }

  /** Drops every generation's tables and the rows about them (bulk marks, fence, live writer). */
  private dropEveryGeneration(): void {
    const tables = this.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'g[0-9]*_*'`)
      .all() as Array<{
      name: string;
    }>;
    for (const { name } of tables) {
      if (GENERATION_NAME.test(name.slice(0, name.indexOf('_')))) this.db.exec(`DROP TABLE IF EXISTS "${name}"`);
    }
    this.db.exec(
      `DELETE FROM views_meta WHERE key GLOB 'bulk:*' OR key GLOB 'building:*' OR key GLOB 'dropping:*' OR key IN ('fence', 'fence_until', 'live_writer', 'live_writer_until')`,
    );
  }

  /** Runs `work` in one IMMEDIATE transaction (this file's write lock), committed when it returns, rolled back when it throws. */
  transaction<T>(work: () => T): T {
    this.begin.run();
    try {
      const result = work();
      this.commit.run();
      return result;
    } catch (error) {
      // SQLite may have rolled it back itself (a full disk ends the transaction): a ROLLBACK then fails with 'no
      // transaction is active', which replaced the error that says why (the projector logged that, not the disk).
      if (this.db.inTransaction) this.rollback.run();
      throw error;
    }
  }

  value(key: string): string | null {
    return (this.get.get(key) as { value: string } | undefined)?.value ?? null;
  }

  write(key: string, value: string): void {
    this.set.run(key, value);
  }

  remove(key: string): void {
    this.deleteKey.run(key);
  }

  active(): string {
    const active = this.value('active');
    if (active === null) throw new Error('the SQLite views file has no active generation');
    return active;
  }

  /** A fresh generation name (the counter only grows, so an interrupted rebuild's name is never reused by accident). */
  nextGeneration(): string {
    return this.transaction(() => {
      const next = Number(this.value('counter') ?? '1') + 1;
      this.set.run('counter', String(next));
      return `g${next}`;
    });
  }

  liveWriter(now: number): string | null {
    const writer = this.value('live_writer');
    return writer !== null && Number(this.value('live_writer_until') ?? 0) > now ? writer : null;
  }

  markLiveWriter(logIdentity: string, now: number): void {
    this.set.run('live_writer', logIdentity);
    this.set.run('live_writer_until', String(now + LIVE_WRITER_TTL_MS));
  }

  releaseLiveWriter(logIdentity: string): void {
    this.transaction(() => {
      if (this.value('live_writer') === logIdentity) {
        this.deleteKey.run('live_writer');
        this.deleteKey.run('live_writer_until');
      }
    });
  }

  /** The generation whose rebuild holds live writers still, if its fence has not lapsed. */
  fencedBy(now: number): string | null {
    const fence = this.value('fence');
    return fence !== null && Number(this.value('fence_until') ?? 0) > now ? fence : null;
  }

  fence(generation: string, until: number): void {
    this.set.run('fence', generation);
    this.set.run('fence_until', String(until));
  }

  liftFence(generation?: string): void {
    if (generation === undefined || this.value('fence') === generation) {
      this.deleteKey.run('fence');
      this.deleteKey.run('fence_until');
    }
  }
}
