/**
 * Redis projection store (production): the same views as the memory store,
 * shared by every API node, the heartbeat daemon and the tools.
 *
 * Writes: each chunk of events is one Lua script that compares positions with
 * the stored checkpoints (fixed-width strings), applies the view changes,
 * publishes wakes after them and moves the checkpoint, atomically; see
 * redisApplyScript.ts and redisKeys.ts (Cluster layout). Before writing, the
 * script verifies that this writer's generation is still the active one and
 * that the checkpoint did not go back (Redis restarted empty): the store then
 * follows the switch, or reports ProjectionCheckpointRewound so that the
 * projector resumes from what Redis still has.
 *
 * Each generation names the log it was built from (see redisKeys.ts). Once
 * claimed for a log, the store applies only into that log's generation (the
 * script checks it with the checkpoint) and serves reads only from it: the
 * views of another log sharing the namespace are never read or written.
 */
import type { Logger } from 'pino';
import { READ_MODEL_VERSION } from '../../projections/readModel/readModelVersion';
import { MailboxError, operatorNeeded, unavailable } from '../../errors';
import type { ListQuery } from '../../projections/listQuery';
import {
  ProjectionCheckpointRewound,
  ViewsOfAnotherLog,
  type AgentEntries,
  type AgentView,
  type ApplyOptions,
  type HeartbeatCounts,
  type HistoryLinePage,
  type LedgerIdPage,
  type ProjectionStore,
  type UnreadCount,
  type ViewPage,
  type ViewsBinding,
} from '../../projections/projectionStore';
import type { ProjectionGenerations } from '../../projections/rebuildGenerations';
import { ProjectorDeposed, type LeaseHolder } from '../../projections/projectorLease';
import { parseHolder } from './redisLease';
import type { ProjectedEvent } from '../../projections/viewChanges';
import { inLogOrder } from './redisApplyPlan';
import { RedisScriptApplier } from './redisApplier';
import { closeRedis, redisCall, type RedisClient } from './redisConnection';
import { RedisGenerations } from './redisGenerations';
import { parsePosition, RedisKeys } from './redisKeys';
import { defineMailboxScripts } from './redisScripts';
import { sleep } from '../../support/retry';
import { RedisViewReader } from './redisViewReader';
import { danglingEntryLogger, hasTaskFacts, planTaskOps, RedisTaskKeys, RedisTaskReader } from './redisTaskViews';
import { RedisLedgerReader } from './redisLedger';
import type {
  DueReply,
  LastNudge,
  LedgerPage,
  LedgerQuery,
  UnwokenPage,
  UnwokenQuery,
  WholeLedger,
} from '../../projections/readModel/ledger';
import type { TaskView } from '../../projections/readModel/taskView';
import type { TaskListQuery, TaskViewPage } from '../../projections/readModel/taskViewsMemory';

export interface RedisProjectionOptions {
  /** First part of every key and channel (default 'mailbox'). */
  namespace?: string;
  /** One script call per hash tag, for Redis Cluster (default: one call per chunk of events). */
  scriptPerTag?: boolean;
  /** Events per script call (default 64: each call stays short, so reads between calls wait little). */
  eventsPerScript?: number;
  /** Events per script call while rebuilding a generation nobody reads yet (default 256). */
  rebuildEventsPerScript?: number;
  /** How long readers trust their cached active generation (default 1000 ms). */
  generationTtlMs?: number;
  /** How long a rebuild's building mark outlives its last renewal (default 15 s; redisGenerations.ts): tests shorten it. */
  buildingTtlMs?: number;
  /** Where what the views hold but cannot serve is told (a tasks:timed or task list entry without its task record); default: nowhere. */
  logger?: Pick<Logger, 'warn'>;
}

const MAX_SWITCH_FOLLOWS = 5;
/** A rebuild holds live appliers for milliseconds while it switches; wait that out (its fence expires by itself). */
const FENCE_WAIT_MS = 5;
const MAX_FENCE_WAIT_MS = 10_000;
/** A live projector renews its writer mark every second or so; a take-over waits until the mark of another log has expired. */
export const LIVE_WRITER_TTL_MS = 5000;
/** Wakes held while this store takes a fresh look at whose views these are (hints: beyond this, the inbox and `sync` tell). */
const MAX_HELD_WAKES = 10_000;

export class RedisProjectionStore implements ProjectionStore {
  readonly backend = 'redis' as const;
  readonly keys: RedisKeys;
  private readonly applier: RedisScriptApplier;
  private readonly reader: RedisViewReader;
  private readonly taskKeys: RedisTaskKeys;
  private readonly tasks: RedisTaskReader;
  private readonly ledger: RedisLedgerReader;
  private readonly generationsOfViews: RedisGenerations;
  /** The highest checkpoint this store committed: a stored checkpoint below it means the views were lost. */
  private expected = '';
  /** The log this store applies and serves for (set by claim, even when another log holds the views); null: an unbound tool. */
  private claimed: string | null = null;
  /** Owner of each generation seen (a generation's log never changes once set). */
  private readonly owners = new Map<string, string>();
  /** The log whose views a read last found active instead of this one's (viewsOfAnotherLog), else null. */
  private anotherLog: string | null = null;
  /** The other log whose views this store was bound over by claim() (a take-over under way): not news to a read. */
  private boundOver: string | null = null;
  private readonly anotherLogListeners = new Set<() => void>();
  /** When this store last sent a live mark renewal that found its log holding the active views (see passWake). */
  private ownSeenAt = 0;
  private heldWakes: Array<() => void> = [];
  private fence: LeaseHolder | null = null;
  private lookForHeldWakes: Promise<void> | null = null;
  /** Redis's count of keys it evicted (INFO stats evicted_keys) when last looked at; null before the first look. */
  private evictedKeys: number | null = null;
  /** Evictions seen while a generation was active: its views may miss entries (readiness says so until a rebuild). */
  private evictedFrom: { generation: string; problem: string } | null = null;
  private lookedForEvictionsAt = 0;
  /** Another connection's finding that this Redis does not answer now (shareSilence), else null. */
  private silence: () => Error | null = () => null;

  constructor(
    private readonly client: RedisClient,
    private readonly options: RedisProjectionOptions = {},
  ) {
    defineMailboxScripts(client);
    // Whose views a generation holds is read once and kept, but a Redis that drops the connection may come back
    // without its data (restarted empty): looked at again after each drop, so that the reads between its return and
    // the projector finding the views gone answer 503 (they belong to no log yet), not 200 from empty views.
    client.on('close', () => this.owners.clear());
    this.keys = new RedisKeys(options.namespace ?? 'mailbox');
    const scriptPerTag = options.scriptPerTag ?? false;
    this.applier = new RedisScriptApplier(client, this.keys, { scriptPerTag, eventsPerScript: options.eventsPerScript ?? 64 });
    this.reader = new RedisViewReader(client, this.keys);
    this.taskKeys = new RedisTaskKeys(this.keys);
    this.tasks = new RedisTaskReader(client, this.taskKeys, danglingEntryLogger(options.logger));
    this.ledger = new RedisLedgerReader(client, this.keys);
    const rebuilder = new RedisScriptApplier(client, this.keys, {
      scriptPerTag,
      eventsPerScript: options.rebuildEventsPerScript ?? 256,
    });
    this.generationsOfViews = new RedisGenerations(
      client,
      this.keys,
      rebuilder,
      options.generationTtlMs ?? 1000,
      options.buildingTtlMs,
    );
  }

  /** The projector lease this store's applies carry (null: unfenced); see projections/projectorLease.ts. */
  fenceWith(lease: LeaseHolder | null): void {
    this.fence = lease;
  }

  /** Blue/green rebuilds (src/projections/rebuild.ts). */
  generations(): ProjectionGenerations {
    return this.generationsOfViews;
  }

  async applyBatch(batch: readonly ProjectedEvent[], options: ApplyOptions = {}): Promise<void> {
    // Without 'p' the script applies the same changes and publishes nothing (a replay: see ApplyOptions).
    const flags = options.publishWakes === false ? 'cw' : 'cpw';
    let events = inLogOrder(batch, null);
    let waitedMs = 0;
    for (let follows = 0; events.length > 0;) {
      const prefix = await this.generationsOfViews.current();
      const taskOps = hasTaskFacts(events) ? await planTaskOps(this.client, this.taskKeys, prefix, events) : undefined;
      // The lease this call carries: its refusal names this token, not one the node took since (after a retake it held
      // another by the time the refusal came back, and the error named the new term's token as the refused write's).
      const fence = this.fence;
      const outcome = await this.applier.apply(
        events,
        prefix,
        flags,
        this.expected,
        this.claimed ?? '',
        taskOps,
        fence === null ? '' : `${fence.node}:${fence.token}`, // the lease key's value (redisLease.ts)
        // Each chunk after the first expects the one before it in (same call, no round trip more): a flush between two
        // chunks of a rebuild from nothing left the later ones to claim the emptied views and go on from their own
        // positions, the earlier chunks' events missing for good. Refused ('rewound'), the rebuild starts over.
        true,
      );
      if (outcome.status === 'ok') {
        if (outcome.checkpoint > this.expected) this.expected = outcome.checkpoint;
        if (this.claimed !== null) this.owners.set(prefix, this.claimed); // the script checked the generation's log
        return;
      }
      if (outcome.status === 'fenced') {
        if (waitedMs >= MAX_FENCE_WAIT_MS)
          throw new Error(`Redis projections: held by a rebuild for over ${MAX_FENCE_WAIT_MS} ms`);
        events = events.slice(outcome.committed);
        await sleep(FENCE_WAIT_MS);
        waitedMs += FENCE_WAIT_MS;
        continue;
      }
      if (outcome.status === 'deposed') throw new ProjectorDeposed(fence!.token, parseHolder(outcome.current || null));
      if (outcome.status === 'foreign') throw new ViewsOfAnotherLog(this.location, outcome.owner || null, this.claimed ?? '');
      if (outcome.status === 'rewound') {
        const expected = parsePosition(this.expected);
        this.expected = outcome.stored;
        // Nothing left of this generation: drop whatever a partial write left, so that the rebuild starts clean. Not
        // when an earlier chunk of this call went in: the store lost it since, and what the generation holds now is
        // another writer's (this projector's next term, rebuilding it; the drop, key by key, would race it).
        if (outcome.stored === '' && outcome.committed === 0) await this.generationsOfViews.drop(prefix);
        // Rebuilt from nothing in place (Redis restarted empty, or flushed): keys evicted before are no longer missing.
        if (outcome.stored === '' && this.evictedFrom?.generation === prefix) this.evictedFrom = null;
        // The rebuild records this version's rules where it claims the views (the apply script, in the generation
        // active then): recorded here, on the generation of this call, a flush that had also taken the active pointer
        // left the record on the dropped generation and none on the one rebuilt, which the next start rebuilt again.
        throw new ProjectionCheckpointRewound(parsePosition(outcome.stored), expected);
      }
      // A rebuild switched generations: continue in the new one (its checkpoint gates what it already has).
      if (++follows > MAX_SWITCH_FOLLOWS) throw new Error(`Redis projections: generation keeps moving (now ${outcome.active})`);
      this.generationsOfViews.adopt(outcome.active);
      this.expected = '';
      events = events.slice(outcome.committed);
    }
  }

  async checkpoint(): Promise<bigint | null> {
    const prefix = await this.generationsOfViews.refresh();
    return parsePosition(await redisCall('Redis projections', () => this.client.get(this.keys.checkpoint(prefix))));
  }

  get location(): string {
    return `Redis namespace '${this.keys.namespace}'`;
  }

  async binding(): Promise<ViewsBinding> {
    const { prefix: generation, switchedTo } = await this.generationsOfViews.pointed();
    const [logIdentity, checkpoint, liveWriter] = await redisCall('Redis projections', () =>
      this.client.mget(this.keys.logOf(generation), this.keys.checkpoint(generation), this.keys.liveWriter),
    );
    if (logIdentity !== null) this.owners.set(generation, logIdentity);
    await this.lookForEvictions(generation);
    return { location: this.location, logIdentity, checkpoint: parsePosition(checkpoint), generation, liveWriter, switchedTo };
  }

  /**
   * A Redis with a memory limit and an evicting policy drops keys once full (an inbox entry, a counter, a checkpoint),
   * and the views were served as whole: counts short and mail missing, readiness ready, nothing in the log (the policy
   * is said only at start, and may be set later). Looked at with the projector's look at the views (each second):
   * keys evicted since the last look make the active generation's views suspect, said once in the log and by
   * readiness (not ready) until a rebuild switches to a new generation.
   */
  private async lookForEvictions(generation: string): Promise<void> {
    if (Date.now() - this.lookedForEvictionsAt < 1000) return;
    this.lookedForEvictionsAt = Date.now();
    let info: string;
    try {
      info = await this.client.info('stats');
    } catch {
      return; // an ACL without INFO: no look, as at start
    }
    const evicted = Number(/^evicted_keys:(\d+)/m.exec(info)?.[1] ?? NaN);
    if (!Number.isFinite(evicted)) return;
    const before = this.evictedKeys;
    this.evictedKeys = evicted;
    if (before === null || evicted <= before) return; // the first look, none since, or a restarted Redis (counted anew)
    if (this.evictedFrom?.generation === generation) return; // said already
    const problem =
      `Redis evicted ${evicted - before} keys (maxmemory reached under an evicting maxmemory-policy): the views in ` +
      `${this.location} may miss inbox entries, counts or checkpoints, and would be served as if whole. Set ` +
      'maxmemory-policy noeviction (or more maxmemory), then rebuild the views from the log (`mailbox projections ' +
      'rebuild`); until a rebuild switches generations this node is not ready';
    this.evictedFrom = { generation, problem };
    this.options.logger?.warn({ evictedKeys: evicted - before, generation }, `projections: ${problem}`);
  }

  damage(): string | null {
    const evictedFrom = this.evictedFrom;
    return evictedFrom !== null && this.generationsOfViews.lastSeen() === evictedFrom.generation ? evictedFrom.problem : null;
  }

  /**
   * Wake channels are shared by every mailbox on the namespace, so a wake is
   * passed on only while this store's log is proven to hold the views: the
   * live mark is renewed only by a script that finds this log's identity on
   * the active generation, and a take-over needs that mark to have expired,
   * so for LIVE_WRITER_TTL_MS after a renewal was sent no other log's views can
   * be active. Past that, wakes wait (bounded) for the next renewal (the runner
   * renews every second) and go out, or are dropped once the views are found
   * to be another log's: none of its wakes is ever passed on.
   */
  passWake(deliver: () => void): void {
    if (this.claimed === null) return deliver(); // an unbound tool: no log to tell apart
    const prefix = this.generationsOfViews.lastSeen();
    const owner = prefix === null ? undefined : this.owners.get(prefix);
    if (owner !== undefined && owner !== this.claimed) return; // another log's views: its wakes are not ours
    if (Date.now() - this.ownSeenAt < LIVE_WRITER_TTL_MS) return deliver();
    if (this.heldWakes.length < MAX_HELD_WAKES) this.heldWakes.push(deliver);
    this.lookForHeldWakes ??= this.binding()
      .then(
        (seen) => {
          if (seen.logIdentity !== this.claimed) this.heldWakes = []; // another log's (or lost) views: drop, never pass on
        },
        () => undefined,
      )
      .finally(() => (this.lookForHeldWakes = null));
  }

  async claim(logIdentity: string): Promise<ViewsBinding> {
    const seen = await this.binding();
    if (seen.logIdentity !== null || seen.checkpoint !== null) {
      // held already (by this log or another): plain reads, nothing written
      this.claimed = logIdentity;
      // Bound over another log's views knowingly (a take-over at start under way, the log replaced): said by the
      // mailbox and the projector already, not found anew by a read (viewsOfAnotherLog).
      this.boundOver = seen.logIdentity !== logIdentity ? seen.logIdentity : null;
      return seen;
    }
    for (let follows = 0; ; follows++) {
      const prefix = await this.generationsOfViews.refresh();
      const [status] = await redisCall('Redis projections', () =>
        this.client.mailboxClaim(
          this.keys.active,
          this.keys.logOf(prefix),
          this.keys.checkpoint(prefix),
          this.keys.rulesOf(prefix),
          prefix,
          this.keys.defaultPrefix,
          logIdentity,
          READ_MODEL_VERSION,
        ),
      );
      if (status === 'moved' && follows < MAX_SWITCH_FOLLOWS) continue; // a rebuild switched meanwhile: claim the new one
      this.claimed = logIdentity; // from now on only this log's views are read or written, whoever holds them now
      return this.binding();
    }
  }

  /** Renewed only while the active generation is this log's (checked in the same script); then held wakes go out. */
  async markLiveWriter(logIdentity: string): Promise<void> {
    const sentAt = Date.now(); // when asked, not when answered: a reply that waited in a frozen process is old news
    const renewed = await redisCall('Redis projections', () =>
      this.client.mailboxMarkWriter(
        this.keys.active,
        this.keys.liveWriter,
        this.keys.defaultPrefix,
        `${this.keys.globalTag}:log`,
        logIdentity,
        String(LIVE_WRITER_TTL_MS),
      ),
    );
    if (renewed !== 1 || logIdentity !== this.claimed) return;
    this.ownSeenAt = Math.max(this.ownSeenAt, sentAt);
    for (const pass of this.heldWakes.splice(0)) pass();
  }

  async releaseLiveWriter(logIdentity: string): Promise<void> {
    await redisCall('Redis projections', () =>
      this.client.eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
        1,
        this.keys.liveWriter,
        logIdentity,
      ),
    );
  }

  async listMessages(identity: string, query: ListQuery): Promise<ViewPage> {
    return this.read((prefix) => this.reader.listMessages(prefix, identity, query));
  }

  async unreadCount(identity: string): Promise<UnreadCount> {
    const { unread, unseen, byPriority } = await this.heartbeat(identity);
    return { unread, unseen, byPriority };
  }

  async heartbeat(identity: string): Promise<HeartbeatCounts> {
    return this.read((prefix) => this.counts(prefix, identity));
  }

  private async counts(prefix: string, identity: string): Promise<HeartbeatCounts> {
    const [counts, waiting, owed] = await Promise.all([
      this.reader.counts(prefix, identity),
      this.tasks.waiting(prefix, identity),
      this.ledger.repliesOwed(prefix, identity),
    ]);
    return { ...counts, ...waiting, ...owed };
  }

  async allHeartbeats(): Promise<HeartbeatCounts[]> {
    return this.read(async (prefix) => {
      const [identities, waiting] = await Promise.all([this.reader.identities(prefix), this.tasks.waitingIdentities(prefix)]);
      const all = [...new Set([...identities, ...waiting])].sort();
      return Promise.all(all.map((identity) => this.counts(prefix, identity)));
    });
  }

  async agentEntries(identity: string): Promise<AgentEntries> {
    return this.read(async (prefix) => {
      const [agent, hasViews, waited] = await Promise.all([
        this.reader.agent(prefix, identity),
        this.reader.hasIdentity(prefix, identity),
        this.tasks.isWaitedOn(prefix, identity),
      ]);
      return { agent, heartbeat: hasViews || waited ? await this.counts(prefix, identity) : undefined };
    });
  }

  async listTasks(identity: string, query: TaskListQuery): Promise<TaskViewPage> {
    return this.read((prefix) => this.tasks.list(prefix, identity, query));
  }

  async getTask(taskId: string): Promise<TaskView | undefined> {
    return this.read((prefix) => this.tasks.task(prefix, taskId));
  }

  async taskOfHistoryLine(eventId: string): Promise<string | null> {
    return this.read((prefix) => this.tasks.taskOfHistoryLine(prefix, eventId));
  }

  async dueTasks(now: string, limit: number, after?: string): Promise<TaskView[]> {
    return this.read((prefix) => this.tasks.due(prefix, now, limit, after));
  }

  async deliveryLedger(messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined> {
    return this.read((prefix) => this.ledger.page(prefix, messageId, query));
  }

  async taskHistoryLines(after: string | null, limit: number): Promise<HistoryLinePage> {
    return this.read((prefix) => this.tasks.historyLines(prefix, after, limit));
  }

  async deliveryLedgerIds(after: string | null, limit: number): Promise<LedgerIdPage> {
    return this.read((prefix) => this.ledger.ledgerIds(prefix, after, limit));
  }

  async deliveryLedgers(messageIds: readonly string[]): Promise<Map<string, WholeLedger>> {
    return this.read((prefix) => this.ledger.wholeLedgers(prefix, messageIds));
  }

  async dueReplies(dueBy: string, limit: number): Promise<DueReply[]> {
    return this.read((prefix) => this.ledger.dueReplies(prefix, dueBy, limit));
  }

  async lastNudges(): Promise<Map<string, LastNudge>> {
    return this.read((prefix) => this.ledger.lastNudges(prefix));
  }

  async unwoken(query: UnwokenQuery): Promise<UnwokenPage> {
    return this.read((prefix) => this.ledger.unwoken(prefix, query));
  }

  async listAgents(): Promise<AgentView[]> {
    return this.read((prefix) => this.reader.agents(prefix));
  }

  /** Drops the active generation's views and checkpoint. */
  async reset(): Promise<void> {
    await this.generationsOfViews.drop(await this.generationsOfViews.refresh());
    this.expected = '';
  }

  async close(): Promise<void> {
    this.generationsOfViews.stop();
    await closeRedis(this.client);
  }

  /**
   * Reads fail at once while `silence` says this Redis does not answer (the shared limits' connection found it: a
   * deadline passed there, and its ping has not answered since). The first request to meet a stalled Redis waited a
   * whole MAILBOX_REDIS_TIMEOUT_MS for the rate limit's call, then as long again for its read: two deadlines, later
   * ones one. Only for one Redis node (or a Sentinel's master): a Cluster's shared limits live on another shard.
   */
  shareSilence(silence: () => Error | null): void {
    this.silence = silence;
  }

  private async read<T>(query: (prefix: string) => Promise<T>): Promise<T> {
    const silent = this.silence();
    if (silent !== null) throw unavailable('Redis projections', (silent as { cause?: unknown }).cause ?? silent);
    return redisCall('Redis projections', async () => {
      const prefix = await this.generationsOfViews.current();
      const claimed = this.claimed;
      if (claimed === null) return query(prefix);
      await this.assertOwn(prefix, claimed);
      const result = await query(prefix);
      // Looked at again after the views, not from the cache: a Redis flushed (FLUSHALL) keeps the connection, so the
      // cached owner vouched for views that held nothing, and until the projector's next look a count read 0 and an
      // inbox nothing. Views read before this look stood whole then; emptied since, this look finds no owner.
      const owner = await this.client.get(this.keys.logOf(prefix));
      if (owner === claimed) return result;
      this.owners.delete(prefix);
      const active = await this.generationsOfViews.refresh();
      if (active !== prefix) return this.read(query); // a rebuild switched generations and dropped this one: read the new
      return this.assertOwn(prefix, claimed).then(() => result);
    });
  }

  /**
   * Why a read would be refused now: the active generation's owner read afresh (readiness asks at each probe). Right
   * after a FLUSHALL the reads were refused while /readyz, which looked only at the lag (checkpoint null, lag 4),
   * answered 200 until the projector found the views gone: a load balancer kept sending traffic that was refused.
   */
  async readsRefused(): Promise<string | null> {
    const claimed = this.claimed;
    if (claimed === null) return null; // an unbound tool reads whatever is there
    return redisCall('Redis projections', async () => {
      const prefix = await this.generationsOfViews.refresh();
      const owner = (await this.client.get(this.keys.logOf(prefix))) ?? '';
      this.sawOwner(owner, claimed);
      return owner === claimed ? null : this.ownerProblem(owner);
    });
  }

  viewsOfAnotherLog(): string | null {
    return this.anotherLog;
  }

  onViewsOfAnotherLog(listener: () => void): void {
    this.anotherLogListeners.add(listener);
  }

  /**
   * What a look at the active generation's owner found: another log's (a take-over) is kept until a look finds this
   * log's again, and told to the listeners (the projector) the first time; empty views (flushed) are not another log's.
   */
  private sawOwner(owner: string, claimed: string): void {
    if (owner === claimed) this.anotherLog = null;
    if (owner === '' || owner === claimed || owner === this.anotherLog || owner === this.boundOver) return;
    this.anotherLog = owner;
    for (const listener of this.anotherLogListeners) listener();
  }

  private ownerProblem(owner: string): string {
    // Claimed at start, so this log's once: empty now means Redis lost them (restarted empty), and the projector
    // rebuilds them from the log as soon as it finds out.
    const problem = owner
      ? `belong to another event log (${owner}), not to this mailbox's; no retry helps until an operator acts`
      : "hold nothing of this mailbox's event log (Redis lost them, e.g. restarted empty): they are rebuilt from the log; " +
        'retry in a moment, /readyz says when they are whole again';
    return `The views in ${this.location} ${problem}`;
  }

  /** Reads come only from this log's generation; another log's views answer 503 (and say why). */
  private async assertOwn(prefix: string, claimed: string): Promise<void> {
    let owner = this.owners.get(prefix);
    if (owner === undefined) {
      owner = (await this.client.get(this.keys.logOf(prefix))) ?? '';
      if (owner !== '') this.owners.set(prefix, owner);
    }
    this.sawOwner(owner, claimed);
    if (owner === claimed) return;
    const message = `${this.ownerProblem(owner)} (the request was not applied).`;
    // Another log's views stay so until an operator acts (a take-over, or this server moved to its own namespace).
    if (owner)
      throw operatorNeeded(message, 'mailbox projections rebuild --take-over, or a namespace of its own for this log', {
        logIdentity: claimed,
        viewsOf: owner,
      });
    throw new MailboxError('UNAVAILABLE', 'Service unavailable', message, { logIdentity: claimed, viewsOf: null });
  }
}
