/**
 * Generations of the SQLite views (blue/green): a rebuild builds a new set of
 * tables in the same file while requests read the active one, then switches
 * the `active` row in one transaction. Live writers read that row inside each
 * of their transactions, so the switch is atomic for them; to meet a busy log
 * a rebuild may hold them with a fence (they wait; it lapses by itself; the
 * switch lifts it). The previous generation's tables are dropped afterwards.
 */
import type Database from 'better-sqlite3';
import { applyEvents } from '../../../projections/readModel/applyEvents';
import { READ_MODEL_VERSION } from '../../../projections/readModel/readModelVersion';
import {
  GenerationGap,
  type ActivationResult,
  type ActiveGeneration,
  type ProjectionGeneration,
  type ProjectionGenerations,
} from '../../../projections/rebuildGenerations';
import type { ProjectedEvent } from '../../../projections/viewChanges';
import type { SqliteBulkBuild } from './sqliteBulkBuild';
import type { RebuildStep } from './sqliteViewsDamage';
import type { SqliteViewsMeta } from './sqliteViewsMeta';
import { dropGenerationSql, GENERATION_NAME, GENERATION_TABLES, generationSchema } from './sqliteViewsSchema';
import { dropKeptOnFailure, type SqliteViewWriter } from './sqliteViewWriter';

class SqliteGeneration implements ProjectionGeneration {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly meta: SqliteViewsMeta,
    private readonly bulk: SqliteBulkBuild,
    private readonly writer: SqliteViewWriter,
    private readonly eventsPerTransaction: number,
    /** What a failure of the file is said as (SqliteGenerations' `failed`). */
    private readonly failed: (error: unknown) => unknown,
  ) {}

  /** In call order; each chunk one transaction with its checkpoint; no wakes (history is not news). */
  applyBatch(batch: readonly ProjectedEvent[], follows?: bigint | null): Promise<void> {
    const applied = this.tail
      .then(() => this.apply(batch, follows))
      .catch((error: unknown) => {
        throw this.failed(error);
      });
    this.tail = applied.catch(() => undefined);
    return applied;
  }

  private async apply(batch: readonly ProjectedEvent[], follows?: bigint | null): Promise<void> {
    if (follows !== undefined && follows !== null) {
      const { checkpoint } = this.writer.state(); // one writer applies, in call order: no transaction needed to trust it
      if (checkpoint === null || checkpoint < follows) throw new GenerationGap(this.name, checkpoint, follows);
    }
    const bulk = this.bulk.begin(this.name, batch.length, () => this.writer.state().checkpoint === null);
    const size = bulk ? Math.max(batch.length, 1) : this.eventsPerTransaction;
    for (let start = 0; start < batch.length; start += size) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk = batch.slice(start, start + size);
      dropKeptOnFailure([this.writer], () =>
        this.meta.transaction(() => {
          try {
            if (!bulk) this.bulk.finishWithin(this.name); // as the live store does: small batches keep every index in step
            this.writer.beginBatch();
            const { checkpoint } = this.writer.state();
            const last = applyEvents(this.writer, chunk, checkpoint);
            this.writer.flush();
            if (last !== checkpoint) this.writer.setCheckpoint(last);
          } finally {
            this.writer.forget();
          }
        }),
      );
    }
  }

  async checkpoint(): Promise<bigint | null> {
    try {
      return this.writer.state().checkpoint;
    } catch (error) {
      throw this.failed(error);
    }
  }
}

/**
 * A generation being built carries a `building:<g>` row in views_meta with the time it lapses, renewed while its
 * rebuild runs: a rebuild killed outright (SIGKILL, a crash) stops renewing it, and its generation, a partial copy of
 * the views that nothing else would ever delete, is then a leftover (leftovers(); the next rebuild drops it).
 */
export const BUILDING_TTL_MS = 15_000;

export class SqliteGenerations implements ProjectionGenerations {
  /** The generations this connection builds, each with the timer that renews its building mark. */
  private readonly building = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly db: Database.Database,
    private readonly meta: SqliteViewsMeta,
    private readonly bulk: SqliteBulkBuild,
    private readonly writerOf: (generation: string) => SqliteViewWriter,
    private readonly eventsPerTransaction: number,
    private readonly buildingTtlMs: number = BUILDING_TTL_MS,
    /**
     * What a failure of the file met while building or switching `generation` is said as (the store's words for a file
     * damaged, or a generation's tables gone: sqliteViewsDamage.ts rebuildViewsFailure; `step`: the rebuild's step it
     * was met at, where a lock is the rebuild's to say); absent: as it is.
     */
    private readonly failed: (error: unknown, generation: string, step?: RebuildStep) => unknown = (error) => error,
  ) {}

  async active(): Promise<ActiveGeneration> {
    const name = this.meta.active();
    const { checkpoint, logIdentity } = this.writerOf(name).state();
    // The file's schema version covers its rules: views of other rules are dropped at open (sqliteViewsMeta.ts).
    return { name, checkpoint, logIdentity, liveWriter: this.meta.liveWriter(Date.now()), rules: READ_MODEL_VERSION };
  }

  async create(logIdentity?: string): Promise<ProjectionGeneration> {
    let name = '';
    try {
      name = this.meta.nextGeneration();
      return this.createNamed(name, logIdentity);
    } catch (error) {
      throw this.failed(error, name, 'write'); // '': none numbered yet
    }
  }

  private createNamed(name: string, logIdentity: string | undefined): ProjectionGeneration {
    this.meta.transaction(() => {
      this.db.exec(dropGenerationSql(name)); // a leftover of an interrupted rebuild would otherwise gate the new one
      this.db.exec(generationSchema(name));
      this.markBuilding(name);
    });
    const renew = setInterval(() => {
      try {
        this.meta.transaction(() => this.markBuilding(name));
      } catch {
        // The file is busy or gone: the next renewal tries again; a mark that lapses only lets the next rebuild drop it.
      }
    }, this.buildingTtlMs / 3);
    renew.unref();
    this.building.set(name, renew);
    const writer = this.writerOf(name);
    if (logIdentity !== undefined) this.meta.transaction(() => writer.setLogIdentity(logIdentity));
    return new SqliteGeneration(name, this.meta, this.bulk, writer, this.eventsPerTransaction, (error) =>
      this.failed(error, name, 'write'),
    );
  }

  async activate(generation: ProjectionGeneration, expectedActive: string, force: boolean): Promise<ActivationResult> {
    try {
      return this.switchTo(generation, expectedActive, force);
    } catch (error) {
      throw this.failed(error, generation.name, 'switch');
    }
  }

  private switchTo(generation: ProjectionGeneration, expectedActive: string, force: boolean): ActivationResult {
    this.bulk.finish(generation.name); // its listing indexes, before anyone reads it
    return this.meta.transaction((): ActivationResult => {
      const active = this.meta.active();
      if (active !== expectedActive) return { outcome: 'moved', active };
      const live = this.writerOf(active).state().checkpoint;
      const built = this.writerOf(generation.name).state().checkpoint;
      if (!force && live !== built) return { outcome: 'differ', live, built };
      this.meta.write('active', generation.name);
      this.meta.liftFence();
      this.builtOrGone(generation.name);
      return { outcome: 'switched', previous: active, previousCheckpoint: live };
    });
  }

  async holdLive(generation: ProjectionGeneration, ms: number): Promise<void> {
    try {
      this.meta.transaction(() => this.meta.fence(generation.name, Date.now() + ms));
    } catch (error) {
      throw this.failed(error, generation.name, 'switch');
    }
  }

  async releaseLive(generation: ProjectionGeneration): Promise<void> {
    this.meta.transaction(() => this.meta.liftFence(generation.name));
  }

  /** Deletes a generation's tables (never the active one's). */
  async drop(name: string): Promise<void> {
    if (!GENERATION_NAME.test(name)) throw new Error(`'${name}' is not a generation of the SQLite views`);
    try {
      this.dropNamed(name);
    } catch (error) {
      throw this.failed(error, name, 'drop');
    }
  }

  private dropNamed(name: string): void {
    this.meta.transaction(() => {
      if (this.meta.active() === name) throw new Error(`generation ${name} is the active one: it is not dropped`);
      this.db.exec(dropGenerationSql(name));
      this.meta.remove(`bulk:${name}`);
      this.builtOrGone(name);
    });
  }

  /** A `dropping:<g>` row with the time from which the generation is a leftover, unless dropped before. */
  async markForDrop(name: string, ms: number): Promise<void> {
    if (!GENERATION_NAME.test(name)) throw new Error(`'${name}' is not a generation of the SQLite views`);
    try {
      this.meta.transaction(() => this.meta.write(`dropping:${name}`, String(Date.now() + ms)));
    } catch (error) {
      throw this.failed(error, name);
    }
  }

  async leftovers(): Promise<string[]> {
    // Only marks that lapsed: a generation without one was active once (a previous one kept on purpose, with
    // --keep-previous or by a take-over at start) or predates the marks.
    return this.markedGenerations((marks, now) => marks.length > 0 && marks.every((until) => until <= now));
  }

  async beingBuilt(): Promise<string[]> {
    return this.markedGenerations((_marks, now, building) => building !== null && building > now);
  }

  async droppable(): Promise<string[]> {
    // Unmarked (kept), or every mark lapsed (a leftover).
    return this.markedGenerations((marks, now) => marks.every((until) => until <= now));
  }

  /**
   * The generations other than the active one whose marks (the expiry of each: `building` and `dropping`, where it
   * has them) pass `test`, oldest first.
   */
  private markedGenerations(test: (marks: number[], now: number, building: number | null) => boolean): string[] {
    const active = this.meta.active();
    const now = Date.now();
    const states = this.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'g[0-9]*_state'`)
      .all() as Array<{ name: string }>;
    return states
      .map(({ name }) => name.slice(0, -'_state'.length))
      .filter((name) => GENERATION_NAME.test(name) && name !== active)
      .filter((name) => {
        const [building, dropping] = [`building:${name}`, `dropping:${name}`].map((key) => this.meta.value(key));
        const marks = [building, dropping].filter((until) => until !== null).map(Number);
        return test(marks, now, building === null ? null : Number(building));
      })
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  }

  /** Stops renewing the building marks of this connection (the store closes; a rebuild still building is then over). */
  stop(): void {
    for (const timer of this.building.values()) clearInterval(timer);
    this.building.clear();
  }

  private markBuilding(name: string): void {
    this.meta.write(`building:${name}`, String(Date.now() + this.buildingTtlMs));
  }

  /** The generation is active now, or dropped: no longer being built, nor to drop (inside the caller's transaction). */
  private builtOrGone(name: string): void {
    this.meta.remove(`building:${name}`);
    this.meta.remove(`dropping:${name}`);
    const timer = this.building.get(name);
    if (timer !== undefined) clearInterval(timer);
    this.building.delete(name);
  }

  /** Empties a generation's tables, its checkpoint and its log (the store's reset). */
  clear(name: string): void {
    this.writerOf(name).dropKept(); // its kept identity rows are of the rows deleted here (the file's stamp does not see this connection's deletes)
    this.meta.transaction(() => {
      for (const table of GENERATION_TABLES) if (table !== 'state') this.db.exec(`DELETE FROM ${name}_${table}`);
      this.db.exec(`UPDATE ${name}_state SET checkpoint = NULL, log_identity = NULL WHERE id = 1`);
    });
  }
}
