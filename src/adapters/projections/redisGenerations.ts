/**
 * Generations of the Redis views (blue/green). The active prefix is a pointer
 * key; readers cache it for a short time, writers verify it inside every apply
 * script, so a switch is atomic for the projector and seen by readers within
 * `ttlMs`. To switch while the log is busy, a rebuild may hold live appliers
 * with a fence key (they wait, it expires by itself, the switch lifts it). The
 * previous generation is kept until the rebuild drops it, after a grace period
 * longer than `ttlMs`.
 *
 * A rebuild killed outright (SIGKILL, a crash) cannot drop its partial generation, a copy of part of the views that
 * nothing else deletes, one more per killed rebuild (each takes a new number). So a rebuild lists its generation in
 * the `building` hash and keeps a mark key alive beside it (renewed every third of its time to live); a switch or a
 * drop removes both. A generation still listed whose mark has expired is a leftover (leftovers(): `projections
 * status` lists it, the next rebuild drops it). Expiry is Redis's own clock, so no two machines' clocks are compared;
 * a generation never listed (a first one, or a previous one kept on purpose) is never a leftover. The previous
 * generation a rebuild is to delete after its grace is listed too, beside a mark that expires with the grace
 * (markForDrop): one whose delete failed, or whose rebuild was killed in the grace, is then a leftover.
 */
import {
  GenerationGap,
  GenerationLost,
  type ActivationResult,
  type ActiveGeneration,
  type ProjectionGeneration,
  type ProjectionGenerations,
} from '../../projections/rebuildGenerations';
import { READ_MODEL_VERSION } from '../../projections/readModel/readModelVersion';
import type { ProjectedEvent } from '../../projections/viewChanges';
import { inLogOrder } from './redisApplyPlan';
import type { RedisScriptApplier } from './redisApplier';
import { redisCall, unlinkMatching, type RedisClient } from './redisConnection';
import { padPosition, parsePosition, type RedisKeys } from './redisKeys';
import { hasTaskFacts, planTaskOps, RedisTaskKeys } from './redisTaskViews';

class RedisGeneration implements ProjectionGeneration {
  private tail: Promise<unknown> = Promise.resolve();
  /** Batches queued behind the tail (not yet applied): while any is, new batches queue too, keeping log order. */
  private waiting = 0;

  constructor(
    readonly name: string,
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
    private readonly applier: RedisScriptApplier,
    /** The log it is built from, as recorded at its creation ('' none): checked again at the switch. */
    readonly logIdentity: string,
  ) {}

  /** Overlapping calls take effect in call order: issued at once on one connection, or else one after another. */
  applyBatch(batch: readonly ProjectedEvent[], follows?: bigint | null): Promise<void> {
    // Task rules read the task records first, so a batch with task facts waits for the batches before it; and
    // while one waits, every later batch waits behind it too (else it would overtake it and move the checkpoint past it).
    const direct = this.applier.ordersOverlappingCalls && !hasTaskFacts(batch) && this.waiting === 0;
    let applied: Promise<void>;
    if (direct) applied = this.apply(batch, follows);
    else {
      this.waiting++;
      applied = this.tail.then(() => this.apply(batch, follows)).finally(() => this.waiting--);
    }
    this.tail = applied.catch(() => undefined);
    return applied;
  }

  private async apply(batch: readonly ProjectedEvent[], follows: bigint | null | undefined): Promise<void> {
    const events = inLogOrder(batch, null);
    if (events.length === 0) return;
    const taskOps = hasTaskFacts(events)
      ? await planTaskOps(this.client, new RedisTaskKeys(this.keys), this.name, events)
      : undefined;
    const expected = follows === undefined || follows === null ? '' : padPosition(follows);
    const outcome = await this.applier.apply(events, this.name, 'w', expected, '', taskOps, '', true);
    if (outcome.status === 'rewound') throw new GenerationGap(this.name, parsePosition(outcome.stored), follows!); // rewound only against an expectation
    if (outcome.status !== 'ok') throw new Error(`generation ${this.name}: unexpected ${outcome.status} while building`);
  }

  async checkpoint(): Promise<bigint | null> {
    return parsePosition(await redisCall('Redis projections', () => this.client.get(this.keys.checkpoint(this.name))));
  }
}

/** How long a generation's building mark outlives its last renewal (as the SQLite views' marks). */
export const REDIS_BUILDING_TTL_MS = 15_000;

export class RedisGenerations implements ProjectionGenerations {
  private cached: { prefix: string; at: number } | null = null;
  /** The generations this connection builds, each with the timer that renews its building mark. */
  private readonly building = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
    private readonly applier: RedisScriptApplier,
    private readonly ttlMs: number,
    private readonly buildingTtlMs: number = REDIS_BUILDING_TTL_MS,
  ) {}

  /** The active prefix, cached for `ttlMs`. */
  async current(): Promise<string> {
    if (this.cached && Date.now() - this.cached.at < this.ttlMs) return this.cached.prefix;
    return this.refresh();
  }

  async refresh(): Promise<string> {
    return (await this.pointed()).prefix;
  }

  /** The active prefix, and whether a rebuild switched to it (false: the first generation, no pointer set). */
  async pointed(): Promise<{ prefix: string; switchedTo: boolean }> {
    const pointer = await redisCall('Redis projections', () => this.client.get(this.keys.active));
    return { prefix: this.adopt(pointer ?? this.keys.defaultPrefix), switchedTo: pointer !== null };
  }

  /** The active prefix as last seen (null before the first look). */
  lastSeen(): string | null {
    return this.cached?.prefix ?? null;
  }

  /** Takes a prefix an apply script reported as active. */
  adopt(prefix: string): string {
    this.cached = { prefix, at: Date.now() };
    return prefix;
  }

  async active(): Promise<ActiveGeneration> {
    const name = await this.refresh();
    const [checkpoint, logIdentity, liveWriter, rules] = await redisCall('Redis projections', () =>
      this.client.mget(this.keys.checkpoint(name), this.keys.logOf(name), this.keys.liveWriter, this.keys.rulesOf(name)),
    );
    return { name, checkpoint: parsePosition(checkpoint), logIdentity, liveWriter, rules };
  }

  async create(logIdentity?: string): Promise<ProjectionGeneration> {
    const name = await redisCall('Redis projections', () =>
      this.client.mailboxAllocate(this.keys.active, this.keys.generationCounter, this.keys.defaultPrefix, this.keys.namespace),
    );
    await this.markBuilding(name, true); // before its first key: a rebuild killed from here on leaves a findable leftover
    const renew = setInterval(() => {
      // Redis unreachable for a moment: the next renewal tries again; a mark that lapses only lets the next rebuild drop it.
      this.markBuilding(name, false).catch(() => undefined);
    }, this.buildingTtlMs / 3);
    renew.unref();
    this.building.set(name, renew);
    await this.dropKeys(name); // a leftover of an interrupted rebuild would otherwise gate the new one
    await redisCall('Redis projections', async () => {
      if (logIdentity !== undefined) await this.client.set(this.keys.logOf(name), logIdentity);
      await this.client.set(this.keys.rulesOf(name), READ_MODEL_VERSION); // built by this version's rules
    });
    return new RedisGeneration(name, this.client, this.keys, this.applier, logIdentity ?? '');
  }

  async activate(generation: ProjectionGeneration, expectedActive: string, force: boolean): Promise<ActivationResult> {
    const [outcome, active, live, built] = await redisCall('Redis projections', () =>
      this.client.mailboxActivate(
        this.keys.active,
        this.keys.checkpoint(expectedActive),
        this.keys.checkpoint(generation.name),
        this.keys.fence,
        this.keys.logOf(generation.name),
        expectedActive,
        generation.name,
        this.keys.defaultPrefix,
        force ? '1' : '',
        generation instanceof RedisGeneration ? generation.logIdentity : '',
      ),
    );
    if (outcome === 'lost') throw new GenerationLost(generation.name);
    if (outcome === 'switched') {
      this.adopt(generation.name);
      await this.builtOrGone(generation.name);
      return { outcome, previous: active, previousCheckpoint: parsePosition(live) };
    }
    if (outcome === 'moved') return { outcome, active };
    return { outcome, live: parsePosition(live), built: parsePosition(built) };
  }

  async holdLive(generation: ProjectionGeneration, ms: number): Promise<void> {
    await redisCall('Redis projections', () => this.client.mailboxFence(this.keys.fence, generation.name, String(ms)));
  }

  async releaseLive(generation: ProjectionGeneration): Promise<void> {
    await redisCall('Redis projections', () => this.client.mailboxFence(this.keys.fence, generation.name, ''));
  }

  /** Deletes every key of a generation, in batches (SCAN + UNLINK: Redis stays responsive), then its building marks. */
  async drop(name: string): Promise<void> {
    await this.dropKeys(name);
    await this.builtOrGone(name);
  }

  /** Lists `name` beside a mark that expires in `ms`: a leftover from then on, unless dropped before. */
  async markForDrop(name: string, ms: number): Promise<void> {
    if (!this.keys.isPrefix(name)) throw new Error(`'${name}' is not a generation prefix of namespace ${this.keys.namespace}`);
    await redisCall('Redis projections', async () => {
      await this.client.hset(this.keys.building, name, String(Date.now()));
      await this.client.set(this.keys.droppingMark(name), '1', 'PX', Math.max(1, Math.round(ms)));
    });
  }

  async leftovers(): Promise<string[]> {
    return this.listedGenerations(false);
  }

  async beingBuilt(): Promise<string[]> {
    return this.listedGenerations(true);
  }

  /**
   * Every generation Redis holds besides the active one that nothing else is about to delete: kept on purpose
   * (--keep-previous, a take-over at start; listed nowhere before, and deleted only by hand with redis-cli) or a
   * leftover. Generations are numbered by the allocation counter, so each number up to it is looked at (its global
   * keys, all under the namespace's tag: one MGET per chunk) rather than the whole keyspace scanned; one whose
   * building or dropping mark is alive is a running rebuild's to finish.
   */
  async droppable(): Promise<string[]> {
    const active = await this.refresh();
    const counter = await redisCall('Redis projections', () => this.client.get(this.keys.generationCounter));
    const highest = Math.max(Number(counter ?? 0), generationNumber(active));
    const names: string[] = [];
    for (let number = 1; number <= highest; number++) {
      const name = this.keys.prefixOf(number);
      if (name !== active) names.push(name);
    }
    const held: string[] = [];
    for (let start = 0; start < names.length; start += DROPPABLE_CHUNK) {
      const chunk = names.slice(start, start + DROPPABLE_CHUNK);
      const keys = chunk.flatMap((name) => [
        this.keys.checkpoint(name),
        this.keys.logOf(name),
        this.keys.rulesOf(name),
        this.keys.buildingMark(name),
        this.keys.droppingMark(name),
      ]);
      const values = await redisCall('Redis projections', () => this.client.mget(...keys));
      chunk.forEach((name, i) => {
        const [checkpoint, log, rules, building, dropping] = values.slice(5 * i, 5 * i + 5);
        const holdsViews = checkpoint !== null || log !== null || rules !== null;
        if (holdsViews && building === null && dropping === null) held.push(name);
      });
    }
    return held;
  }

  /**
   * The generations listed, other than the active one: being built (`live`: its building mark alive), or leftovers
   * (neither its building mark nor its dropping mark alive).
   */
  private async listedGenerations(live: boolean): Promise<string[]> {
    const active = await this.refresh();
    const listed = await redisCall('Redis projections', () => this.client.hkeys(this.keys.building));
    const names = listed.filter((name) => name !== active && this.keys.isPrefix(name));
    if (names.length === 0) return [];
    const marks = await redisCall('Redis projections', () =>
      this.client.mget(...names.flatMap((name) => [this.keys.buildingMark(name), this.keys.droppingMark(name)])),
    );
    const building = (i: number) => marks[2 * i] !== null;
    const dropping = (i: number) => marks[2 * i + 1] !== null;
    return names
      .filter((_, i) => (live ? building(i) : !building(i) && !dropping(i)))
      .sort((a, b) => generationNumber(a) - generationNumber(b));
  }

  /** Stops renewing the building marks of this connection (the store closes; a rebuild still building is then over). */
  stop(): void {
    for (const timer of this.building.values()) clearInterval(timer);
    this.building.clear();
  }

  private async dropKeys(name: string): Promise<void> {
    if (!this.keys.isPrefix(name)) throw new Error(`'${name}' is not a generation prefix of namespace ${this.keys.namespace}`);
    await redisCall('Redis projections (drop generation)', () => unlinkMatching(this.client, `${name}*`));
  }

  /** Lists `name` as being built (`list`) and renews its mark. */
  private async markBuilding(name: string, list: boolean): Promise<void> {
    const mark = () => this.client.set(this.keys.buildingMark(name), '1', 'PX', Math.max(1, Math.round(this.buildingTtlMs)));
    await redisCall('Redis projections', async () => {
      if (list) await this.client.hset(this.keys.building, name, String(Date.now())); // when it began, for whoever looks
      await mark();
    });
  }

  /** The generation is active now, or dropped: no longer being built. */
  private async builtOrGone(name: string): Promise<void> {
    const timer = this.building.get(name);
    if (timer !== undefined) clearInterval(timer);
    this.building.delete(name);
    await redisCall('Redis projections', async () => {
      await this.client.hdel(this.keys.building, name);
      await this.client.del(this.keys.buildingMark(name), this.keys.droppingMark(name));
    });
  }
}

/** Generations looked at per MGET by droppable() (five keys each). */
const DROPPABLE_CHUNK = 200;

/** `<ns>:v<N>:` -> N. */
const generationNumber = (prefix: string): number => Number(/:v([0-9]+):$/.exec(prefix)?.[1] ?? 0);
