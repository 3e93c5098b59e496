/**
 * One worker per shared job (the projector, the heartbeat's nudges, the task
 * sweeper) across several processes: a lease with an expiry, renewed by its
 * holder, carrying a fencing token that grows with every new holder. The
 * token lets a store refuse the late writes of a holder that was paused past
 * its lease (see ProjectorDeposed): the lease alone cannot, since a paused
 * process does not know it lost it.
 *
 * The port is what a shared store (Redis) implements; the decisions (when to
 * try, when to step down) live in LeaseKeeper, on an injected clock, so that
 * they are tested without timers. The embedded default needs no lease: its
 * views are per process (memory) or per file (the SQLite views file has one
 * writer), and nothing else runs the job.
 */

/** Who holds a lease: the node id and the fencing token it was granted with. */
export interface LeaseHolder {
  node: string;
  token: bigint;
  /** How long the lease had left when read, unless renewed (absent: the store does not say). */
  expiresInMs?: number;
}

export interface LeaseStore {
  /** The job's name (e.g. 'projector'), for messages and metrics. */
  readonly name: string;
  /** Takes the lease for `ttlMs` if nobody holds it: the new token, or null (held by another). */
  acquire(node: string, ttlMs: number): Promise<bigint | null>;
  /** Extends this holder's lease; false when it is no longer this holder's (expired and taken, or gone). */
  renew(node: string, token: bigint, ttlMs: number): Promise<boolean>;
  /** Ends this holder's lease (a clean stop): another node takes over without waiting for the expiry. */
  release(node: string, token: bigint): Promise<void>;
  /** The current holder, or null when the lease is free. */
  holder(): Promise<LeaseHolder | null>;
  /** What the holders of this lease keep for each other (absent: the store keeps nothing beside the lease). */
  readonly records?: FencedRecords;
}

/**
 * A small map kept beside a lease, written only by its holder: what one holder did that the next must know (the
 * heartbeat's nudges, so that a takeover does not nudge the same unread set again).
 */
export interface FencedRecords {
  read(): Promise<Map<string, string>>;
  /**
   * Sets (a string) or deletes (null) these entries if the lease is `node`'s with `token` now; false when it is not
   * (another holder's, or nobody's): nothing was written.
   */
  write(node: string, token: bigint, entries: ReadonlyMap<string, string | null>): Promise<boolean>;
}

/** The leases of a shared store, one per job name ('projector', 'sweeper', 'heartbeat'). */
export interface Leases {
  lease(name: string): LeaseStore;
  close(): Promise<void>;
}

export interface LeaseTiming {
  /** How long a lease lasts without renewal. */
  ttlMs: number;
  /** How often the holder renews: a third of ttlMs leaves two renewals of slack. */
  renewMs: number;
  /** How often a node without the lease looks whether it is free: a takeover comes at most this long after the expiry. */
  lookMs: number;
}

/** The longest a free lease waits for a taker (a look is one small script per node). */
const MAX_LOOK_MS = 250;

export function leaseTiming(ttlMs: number): LeaseTiming {
  const renewMs = Math.max(1, Math.floor(ttlMs / 3));
  return { ttlMs, renewMs, lookMs: Math.min(renewMs, MAX_LOOK_MS) };
}

export type Leadership =
  /** No lease configured: this process is the only worker (embedded default). */
  | { role: 'alone' }
  | { role: 'leading'; node: string; token: string }
  | {
      role: 'following';
      node: string;
      leader: string | null;
      token: string | null;
      /**
       * How long the leader's lease runs unless it renews it, as of now (absent: the store does not say). A live
       * leader renews every third of the lease; a leader that stopped (killed, paused, cut off) is still named here
       * until its lease runs out, and this says how soon that is.
       */
      leaseRunsOutInMs?: number;
      /** Said once the leader has missed two renewals in a row: it may be down, and when this node takes over. */
      note?: string;
      /**
       * This node's looks cannot reach the lease's store (Redis down): for how long. `leader` is then the holder its last
       * look found, not one known to hold the lease now, and no `leaseRunsOutInMs` is given (nobody can tell).
       */
      storeUnreachableForMs?: number;
    };

export interface LeaseEvents {
  /**
   * This node now holds the lease with `token`: start the job. `previous`: the holder this node last saw, whose lease
   * lapsed or was released (null: none seen), for the operator's log.
   */
  lead(token: bigint, previous: LeaseHolder | null): void | Promise<void>;
  /**
   * This node no longer holds it (one sentence why): stop the job now. `storeUnreachable`: it could not renew for a
   * whole lease, so nobody may hold it (the store is down for every node), not that another node took it. `vacant`: the
   * store answered that nobody holds it (it lost the lease: Redis restarted empty), so this node takes it again at a look.
   */
  stepDown(reason: string, how: { storeUnreachable: boolean; vacant?: boolean }): void | Promise<void>;
  /** This node, without the lease, sees another holder than it last saw (once per holder and token): for the log. */
  follow?(leader: LeaseHolder): void;
  /**
   * A look of this node, not holding the lease, could not reach the store: once per outage, for the log (a leader's
   * outage is said by its step-down, `storeUnreachable`, a whole lease later). `reason`: the store's error.
   */
  unreachable?(reason: string): void;
  /** The store answers again after `unreachable`, or after a step-down for an unreachable store: once, for the log. */
  reachable?(): void;
}

/**
 * The decisions of one node about one lease. `tick()` is one look (the caller
 * runs it every renewMs); `now` is the injected clock in milliseconds. A
 * leader that could not renew for a whole ttl steps down by itself, even with
 * the store unreachable: by then another node may hold the lease.
 */
export class LeaseKeeper {
  private token: bigint | null = null;
  /** The token this node stepped down from (until it leads again), null after a deposition: see stillNamesThisNode. */
  private lostToken: bigint | null = null;
  private renewedAt = 0;
  private seen: LeaseHolder | null = null;
  /** When `seen` was read (the injected clock), for the time its lease has left now. */
  private seenAt = 0;
  /** The other node this one last saw holding the lease (told to `follow` once), until this node leads. */
  private followed: LeaseHolder | null = null;
  private busy: Promise<void> | null = null;
  /** Whether the store was last found unreachable (said once by `unreachable` or the step-down, until it answers). */
  private storeDown = false;
  /** When this node first failed to reach the store in the outage `storeDown` says (the injected clock). */
  private storeDownSince = 0;
  /**
   * A take of this node's went unanswered (timed out, cut off) since its last answered one: the store may still run it
   * and grant this node a lease nobody reads the answer of (see stillNamesThisNode).
   */
  private takeUnanswered = false;

  constructor(
    private readonly store: LeaseStore,
    readonly node: string,
    readonly timing: LeaseTiming,
    private readonly now: () => number,
    private readonly events: LeaseEvents,
  ) {}

  get leading(): boolean {
    return this.token !== null;
  }

  leadership(): Leadership {
    if (this.token !== null) return { role: 'leading', node: this.node, token: this.token.toString() };
    const following = {
      role: 'following' as const,
      node: this.node,
      leader: this.seen?.node ?? null,
      token: this.seen?.token.toString() ?? null,
    };
    if (this.storeDown) {
      // Said from the last look as if it still held, a follower's readiness named the leader with a lease running out
      // (frozen, on the projector's; "in 0 ms", with "it may be down; this node takes the lease over", on the heartbeat's)
      // while no node could reach the store to hold it or take it over.
      const unreachableForMs = Math.max(0, Math.round(this.now() - this.storeDownSince));
      const lastSeen = following.leader === null ? '' : ` (${following.leader} held it at this node's last look)`;
      return {
        ...following,
        storeUnreachableForMs: unreachableForMs,
        note:
          `this node has not reached the ${this.store.name} lease's store for ${unreachableForMs} ms: who holds the lease ` +
          `now is not known${lastSeen}; this node looks again every ${this.timing.lookMs} ms and takes the lease if it is free`,
      };
    }
    if (this.seen?.expiresInMs === undefined) return following;
    const runsOutInMs = Math.max(0, Math.round(this.seen.expiresInMs - (this.now() - this.seenAt)));
    const silentMs = this.timing.ttlMs - runsOutInMs; // since the leader's last renewal
    if (silentMs <= 2 * this.timing.renewMs) return { ...following, leaseRunsOutInMs: runsOutInMs };
    return {
      ...following,
      leaseRunsOutInMs: runsOutInMs,
      note:
        `${this.seen.node} has not renewed its ${this.store.name} lease for ${silentMs} ms (a live holder renews every ` +
        `${this.timing.renewMs} ms): it may be down; this node takes the lease over when it runs out, in ${runsOutInMs} ms`,
    };
  }

  /** One look: renew when leading, else try to take the lease. Overlapping calls share one look. */
  tick(): Promise<void> {
    this.busy ??= this.look().finally(() => (this.busy = null));
    return this.busy;
  }

  private async look(): Promise<void> {
    const started = this.now();
    if (this.token !== null) {
      if (started - this.renewedAt < this.timing.renewMs) return; // renewed recently enough
      let renewed: boolean | null;
      try {
        renewed = await this.store.renew(this.node, this.token, this.timing.ttlMs);
      } catch {
        renewed = null; // unreachable: keep leading while the lease may still be ours
      }
      if (renewed !== null) this.storeAnswered();
      if (renewed === true) {
        this.renewedAt = started;
        return;
      }
      if (renewed === false) {
        // Taken by another node, or gone from the store (Redis restarted empty, or flushed): nobody holds it then, and
        // the step-down must not say that another node does the job ("another daemon nudges" was logged on a Redis
        // restarted empty, with no other daemon at all; this one took the lease again a look later).
        const holder = await this.holderWithin(this.timing.renewMs);
        if (holder === null)
          return this.lose(`the ${this.store.name} lease is gone from its store (nobody holds it: the store lost its data?)`, {
            vacant: true,
          });
        return this.lose(`the ${this.store.name} lease expired and is no longer this node's`);
      }
      if (this.now() - this.renewedAt >= this.timing.ttlMs)
        return this.lose(`the ${this.store.name} lease could not be renewed for ${this.timing.ttlMs} ms (store unreachable)`, {
          storeUnreachable: true,
        });
      return;
    }
    let previous: LeaseHolder | null;
    let taking = true;
    try {
      let token = await this.store.acquire(this.node, this.timing.ttlMs);
      taking = false;
      this.storeAnswered();
      if (token === null) {
        const holder = await this.store.holder();
        this.see(holder);
        const reclaim = this.stillNamesThisNode(holder);
        this.takeUnanswered = false; // the takes sent before this answered one have run by now (one connection, in order)
        if (!reclaim) return;
        await this.store.release(this.node, holder.token);
        taking = true;
        token = await this.store.acquire(this.node, this.timing.ttlMs);
        taking = false;
        if (token === null) {
          this.see(await this.store.holder());
          return;
        }
      }
      previous = this.followed;
      this.token = token;
      this.lostToken = null;
      this.renewedAt = started;
      this.seen = { node: this.node, token };
      this.followed = null;
    } catch (error) {
      if (taking) this.takeUnanswered = true;
      // Unreachable: try again at the next look. Said once: a follower was silent for the whole outage.
      if (!this.storeDown) {
        this.storeDown = true;
        this.storeDownSince = started;
        this.events.unreachable?.(error instanceof Error ? error.message : String(error));
      }
      return;
    }
    await this.events.lead(this.token, previous);
  }

  private storeAnswered(): void {
    if (!this.storeDown) return;
    this.storeDown = false;
    this.events.reachable?.();
  }

  /** Records the holder a look found; another node newly seen holding it is told to `follow` (the operator's log). */
  private see(holder: LeaseHolder | null): void {
    this.seen = holder;
    this.seenAt = this.now();
    if (holder === null || holder.node === this.node) return;
    if (this.followed?.node === holder.node && this.followed.token === holder.token) return;
    this.followed = holder;
    this.events.follow?.(holder);
  }

  /**
   * After this node stepped down, the store names it as the holder: the lease it gave up, or a newer one drawn by its
   * own late call. It happens when the store stalled (Redis paused): this node gave up on its calls (timed out),
   * stepped down after a whole lease without a renewal, and went on trying to take the lease; when the store resumed
   * it ran every call it had been sent, and one of the takes (or renewals) granted a lease whose answer nobody read.
   * Nobody does the job under that lease, for up to a whole lease after the store is back. No other node holds it,
   * so this node ends it (only that token's) and takes the lease anew: the new token fences any late write.
   * The same for a node that never held the lease, or was deposed, when a take of its own went unanswered since its last
   * answered one: a follower's takes queue up in a stalled store like the leader's, and the first to run once it resumes
   * wins (seen with three nodes and Redis paused 5 s: the lease named a follower for 3 s after the store was back, its
   * /readyz said it followed itself, the others said it projected, and nobody did).
   * Not otherwise (deposed, or a first take answered): node ids are meant to be unique, but two processes given one id
   * would otherwise take the lease from each other at every look.
   */
  private stillNamesThisNode(holder: LeaseHolder | null): holder is LeaseHolder {
    if (holder === null || holder.node !== this.node) return false;
    if (this.takeUnanswered) return true;
    return this.lostToken !== null && holder.token >= this.lostToken;
  }

  /**
   * A store refused this holder's write: the lease it holds now is not this node's (`current`: its holder, or null when
   * nobody holds it). Steps down at once.
   */
  async deposed(current: LeaseHolder | null): Promise<void> {
    if (this.token === null) return;
    // The store names this node's lease as it holds it now: the refused write was of an earlier term of this node (sent
    // before it stepped down and took the lease again, e.g. after Redis lost it), and this term is not deposed. It was:
    // the earlier term's loop stepped the new term down, and nobody projected until the lease, still this node's, ran out.
    if (current !== null && current.node === this.node && current.token === this.token) return;
    await this.lose(`${notOursAny(current, this.store.name)} (this node's token ${this.token}): its late writes were refused`, {
      mayReclaim: false, // another holder may exist: whatever the store still says of this node's token is not this node's to end
      vacant: current === null,
    });
  }

  /**
   * Who holds the lease, asked only to word a step-down: undefined when the store does not answer within `ms` (the
   * step-down then reads as before, "no longer this node's"), so that the step-down is never held up by the question.
   */
  private async holderWithin(ms: number): Promise<LeaseHolder | null | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
      timer.unref();
    });
    try {
      return await Promise.race([this.store.holder().catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async lose(reason: string, { mayReclaim = true, storeUnreachable = false, vacant = false } = {}): Promise<void> {
    this.lostToken = mayReclaim ? this.token : null;
    this.token = null;
    this.seen = null;
    if (storeUnreachable) {
      this.storeDown = true; // the step-down says the outage; `reachable` says its end
      this.storeDownSince = this.renewedAt; // unrenewed since then: the outage began at most a renewal after it
    }
    await this.events.stepDown(reason, { storeUnreachable, vacant });
  }

  /** A clean stop: the lease is released so another node takes over at once. */
  async release(): Promise<void> {
    await this.busy;
    const token = this.token;
    if (token === null) return;
    this.token = null;
    await this.store.release(this.node, token).catch(() => undefined);
  }
}

/** The log fields naming the holder a new leader took over from (none when it saw none). */
export const tookOverFrom = (previous: LeaseHolder | null): Record<string, string> =>
  previous === null ? {} : { previous: previous.node, previousToken: previous.token.toString() };

/** ' (taking over from <node>, token <n>, whose lease lapsed or was released)', or '' when none was seen. */
export const tookOverText = (previous: LeaseHolder | null): string =>
  previous === null ? '' : ` (taking over from ${previous.node}, token ${previous.token}, whose lease lapsed or was released)`;

/**
 * Runs a LeaseKeeper every lookMs on real timers (the holder renews every renewMs of them). `stop()` releases the lease
 * (when held) after the current look.
 */
export class LeaseLoop {
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly keeper: LeaseKeeper) {}

  async start(): Promise<void> {
    await this.keeper.tick();
    this.timer ??= setInterval(() => void this.keeper.tick(), this.keeper.timing.lookMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.keeper.release();
  }
}

/**
 * Thrown by a store's apply when the projector lease is no longer this writer's: another node holds it (`current`), or
 * nobody does (null: it expired, or the store lost it). The batch changed nothing (see the apply script's fence).
 */
export class ProjectorDeposed extends Error {
  constructor(
    readonly token: bigint,
    readonly current: LeaseHolder | null,
  ) {
    super(`${capitalized(notOursAny(current))} (this writer's token is ${token}): its write was refused`);
    this.name = 'ProjectorDeposed';
  }
}

/**
 * Who holds the lease instead, said without ranking the tokens: after the store lost its data (Redis restarted empty,
 * flushed, or a replica promoted without the last writes) a later holder may well hold a smaller token.
 */
function notOursAny(current: LeaseHolder | null, name = 'projector'): string {
  return current === null
    ? `nobody holds the ${name} lease any longer (it expired, or its store lost it)`
    : `${current.node} holds the ${name} lease (token ${current.token})`;
}

const capitalized = (text: string): string => `${text[0].toUpperCase()}${text.slice(1)}`;
