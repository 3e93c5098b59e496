/**
 * Feeds the ordered log into the projection store from its checkpoint:
 * catch-up and live alike, in batches, restarting with backoff after a
 * failure (and saying so in the log) instead of stalling silently.
 *
 * The views must be this log's: before anything is applied, and whenever the
 * checkpoint is checked, the runner compares the log the views belong to
 * with its own. Another log's views, or a checkpoint ahead of the log head,
 * are never applied to: start() refuses with ForeignViews (nothing written),
 * and a runner whose views were taken over stops applying and says so.
 *
 * Shared views (Redis) have one projector at a time: with a lease (useLease),
 * only its holder subscribes and applies, its applies carrying the lease's
 * fencing token; the other nodes follow the shared checkpoint (polled every
 * FOLLOWER_POLL_MS) so that their commands' read-your-writes waits still end
 * honestly, and one of them takes over once the holder's lease lapses. A holder
 * whose write is refused for a newer token steps down at once.
 */
import { inject, injectable } from 'tsyringe';
import type { Logger } from 'pino';
import type { EventStore, EventSubscription } from '../events/eventStore';
import type { StoredEvent } from '../events/types';
import { InvalidStoredEvent } from '../events/readEvent';
import { backoffDelay, sleep, type Backoff } from '../support/retry';
import { StoreOutage } from '../support/storeOutage';
import { TOKENS } from '../tokens';
import { changesATask, projectStored } from './projector';
import { ProjectionCheckpointRewound, ViewsOfAnotherLog, type ProjectionStore, type ViewsBinding } from './projectionStore';
import { consumeInBatches } from './batchedConsumer';
import { CatchUpProgress, describeCatchUp } from './catchUpProgress';
import { PositionWaiters } from './positionWaiters';
import { ForeignViews, judgeViews, type ViewsVerdict } from './viewsOwnership';
import {
  LeaseKeeper,
  LeaseLoop,
  leaseTiming,
  ProjectorDeposed,
  tookOverFrom,
  tookOverText,
  type Leadership,
  type LeaseHolder,
  type LeaseStore,
} from './projectorLease';
import { WakesSentThrough } from './wakesSentThrough';
import { LostViews, type ViewsRebuilding } from './lostViews';

const MAX_BATCH = 1000;
/** A live batch of this many events or more is applied in two halves (batchedConsumer.ts, pipelined). */
const SPLIT_FROM = 64;
/** Events read ahead of the store at most: the subscription is not pulled further until the projector catches up (backpressure). */

/** What moved with the views (onAdvance). */
export interface ViewsAdvance {
  /** A task may have been opened or changed, so its due time may have moved (taskSweeper.ts looks again only then). */
  tasksMayHaveChanged: boolean;
}
export const MAX_QUEUED = 4 * MAX_BATCH;
/** Resubscribing after a failure: quick at first, at most every 5 s while the failure lasts, spread out (jitter). */
const RESUBSCRIBE: Backoff = { initialDelayMs: 100, maxDelayMs: 5000, jitter: 0.2 };
/** How often a following runner checks that the stored checkpoint did not go back (views lost while idle). */
const CHECKPOINT_WATCH_MS = 1000;
/** How often a node without the projector lease reads the shared checkpoint (its commands' read-your-writes waits). */
export const FOLLOWER_POLL_MS = 50;

export interface RunnerStatus {
  running: boolean;
  checkpoint: string | null;
  /**
   * The failure the runner is in now (it retries with backoff), and when it last met it; both null once a later
   * batch is applied (a follower: once it reads the shared checkpoint again). Failures it recovered from are in the log.
   */
  lastError: string | null;
  lastErrorAt: string | null;
  /** The log position of a stored event this build cannot read, where the projector stopped (null: none). */
  stoppedAtUnreadable: string | null;
  lastAppliedAt: string | null;
  /** A command waited for the views in vain and they have not reached its position yet (readiness is degraded). */
  lagging: { position: string; since: string } | null;
  /** After a failure, when the runner tries again at the latest (null: no retry pending); readiness is degraded meanwhile. */
  retryingBy: string | null;
  /** This log's identity (null before start). */
  logIdentity: string | null;
  /** 'own': the views are this log's; 'foreign': another log's (or ahead of the log): never served nor applied to. */
  views: 'unchecked' | 'own' | 'foreign';
  /** Why the views are not served, one sentence (null when they are). */
  viewsProblem: string | null;
  /** The views lost what they held while running and are rebuilt in place: not served until whole (lostViews.ts). */
  rebuildingLostViews: ViewsRebuilding | null;
  /** Who projects: this node alone (no lease: embedded views), or the lease's holder (this node leading, or another). */
  leadership: Leadership;
  /** Views of other rules being rebuilt by this node (application/olderRules.ts); they serve meanwhile. Null: none. */
  rulesRebuild: RulesRebuild | null;
  /** The look at which rules built the views failed; it is taken again with backoff, the views served meanwhile. */
  rulesUnknown: RulesUnknown | null;
}

/** Which rules built the views is not known yet (application/olderRules.ts lookAtRulesUntilTold), as /readyz says it. */
export interface RulesUnknown {
  since: string;
  lastError: string;
  nextLookAt: string;
  note: string;
}

/** This node's rebuild of views of other rules while it runs (application/olderRules.ts), as /readyz says it. */
export interface RulesRebuild {
  /** The rules of the views served meanwhile ('1': recorded by none). */
  viewsRules: string;
  /** This version's rules, which the views being built follow. */
  rules: string;
  since: string;
  note: string;
}

@injectable()
export class ProjectionRunner {
  private subscription: EventSubscription | null = null;
  private stopped = true;
  private stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly waiters = new PositionWaiters();
  /** stop() was called (and no start() since): a wait for a position ends at once. Unlike `stopped`, false before start. */
  private halted = false;
  /** Told each time the views move forward (onAdvance): the task sweeper looks for the next due time then. */
  private readonly advanceListeners = new Set<(position: bigint, advance: ViewsAdvance) => void>();
  /** How far the views' wakes went out: a rebuild of lost views applies events up to there without them. */
  private readonly wakesSent = new WakesSentThrough();
  /** What getStatus reports, less the lost views' rebuild: that one is LostViews's own, read from it there. */
  private status: Omit<RunnerStatus, 'rebuildingLostViews'> = {
    running: false,
    checkpoint: null,
    lastError: null,
    lastErrorAt: null,
    stoppedAtUnreadable: null,
    lastAppliedAt: null,
    lagging: null,
    retryingBy: null,
    logIdentity: null,
    views: 'unchecked',
    viewsProblem: null,
    leadership: { role: 'alone' },
    rulesRebuild: null,
    rulesUnknown: null,
  };
  /** Set when the views turned out to be another log's while following: the runner stops applying for good. */
  private displaced = false;
  /** The generation of the views at this runner's last look (null before its first). */
  private seenGeneration: string | null = null;
  /** Generations this node's own rebuild for the rules switched to: its own lines say so. */
  private readonly ownSwitches = new Set<string>();
  private watching = false;
  /** The projector lease, when the views are shared (Redis); null: this process is the only projector. */
  private lease: LeaseLoop | null = null;
  /** Grows with each term of leading: a follow loop of an earlier term ends by itself. */
  private term = 0;
  private leading = false;
  private followerPoll: NodeJS.Timeout | null = null;
  private polling = false;
  private catchingUp: Promise<void> = Promise.resolve();
  /** While start() runs: aborted when the process is asked to stop before it serves (the catch-up ends early). */
  private interrupted: AbortSignal | null = null;
  private resubscribe = RESUBSCRIBE;
  /** A views store that does not answer is said once, not at every retry (support/storeOutage.ts). */
  private readonly outage: StoreOutage;
  /**
   * The event log not answering (EventStoreDB down) is said as its own outage: it was said as the views store's
   * ("projections: the views store does not answer") while Redis answered, and its end only at the next batch applied,
   * with a downMs counting the quiet time after the log came back.
   */
  private readonly logOutage: StoreOutage;
  /** Failures met reading the log (its subscription, a catch-up page), told from the views store's by where they arose. */
  private readonly logFailures = new WeakSet<object>();
  /** lastError is a failure of the log's: it ends once the log answers again (lookAtViews), not only at a batch. */
  private lastErrorFromLog = false;
  /** The stored event the projector cannot read, once said (its error line): each retry on it after is said at debug. */
  private unreadableSaid: string | null = null;

  constructor(
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    /** The clock of the catch-up's progress reports. */
    @inject(TOKENS.Clock) private readonly clock: { now(): Date } = { now: () => new Date() },
    /** Told when the views were found lost and as the rebuild reaches each position: reads wait for it (lostViews.ts). */
    @inject(TOKENS.LostViews) private readonly lostViews: LostViews = new LostViews(),
  ) {
    this.outage = new StoreOutage(logger, () => clock.now().getTime(), {
      down: 'projections: the views store does not answer; applying from the checkpoint again once it does',
      stillDown: 'projections: the views store still does not answer',
      back: 'projections: the views store answers again; applying from the checkpoint',
      stoppedAsking:
        'projections: the views store had not answered when this node stepped down; it no longer applies, nor says when the store answers',
      failuresField: 'retries',
      refused: {
        down: 'projections: the views store answers and refuses them; applying from the checkpoint again once it takes them',
        back: 'projections: the views store takes them again; applying from the checkpoint',
        stoppedAsking:
          'projections: the views store still refused them when this node stepped down; it no longer applies, nor says when the store takes them',
      },
    });
    // A read that finds the views another log's (a take-over) has the projector look at once, not at its next look.
    projections.onViewsOfAnotherLog?.(() => void this.watchCheckpoint());
    this.logOutage = new StoreOutage(logger, () => clock.now().getTime(), {
      down: 'projections: the event log does not answer; applying from the checkpoint again once it does',
      stillDown: 'projections: the event log still does not answer',
      back: 'projections: the event log answers again; applying from the checkpoint',
      stoppedAsking:
        'projections: the event log had not answered when this node stepped down; it no longer applies, nor says when the log answers',
      failuresField: 'retries',
      refused: {
        down: 'projections: the event log answers and refuses its reads; applying from the checkpoint again once it takes them',
        back: 'projections: the event log takes its reads again; applying from the checkpoint',
        stoppedAsking:
          'projections: the event log still refused its reads when this node stepped down; it no longer applies, nor says when the log takes them',
      },
    });
  }

  /** Sets the backoff between a failure and the next try (tests: one long enough to look at the wait). */
  useResubscribeBackoff(backoff: Backoff): void {
    this.resubscribe = backoff;
  }

  /**
   * Checks that the views are this log's (ForeignViews otherwise, with nothing
   * written), catches up to the log head (so the views are complete when this
   * resolves), then follows live.
   */
  /**
   * Projects only while holding `store`'s lease (the composition root calls this when the views are shared);
   * `now` is the clock of the lease decisions.
   */
  useLease(store: LeaseStore, node: string, ttlMs: number, now: () => number = Date.now): void {
    const keeper = new LeaseKeeper(store, node, leaseTiming(ttlMs), now, {
      lead: (token, previous) => this.lead(token, previous),
      stepDown: (reason) => this.stepDown(reason),
      follow: (leader) =>
        this.logger.info(
          { node, leader: leader.node, token: leader.token.toString() },
          `projector: following ${leader.node} (token ${leader.token}), which holds the lease and projects`,
        ),
      // A node without the lease said nothing in its log while Redis was down (only the holder's step-down did).
      unreachable: (reason) =>
        this.logger.warn(
          { node, reason },
          `projector: cannot reach the projector lease's store (${reason}); this node, which does not hold the lease, ` +
            `looks every ${leaseTiming(ttlMs).lookMs} ms and takes it if it is free once the store answers`,
        ),
      reachable: () => this.logger.info({ node }, "projector: the projector lease's store answers again"),
    });
    this.lease = new LeaseLoop(keeper);
    this.status.leadership = keeper.leadership();
  }

  /**
   * `interrupted`: the process is asked to stop before it serves (a signal during start-up): the catch-up ends after
   * the batch in progress (each is committed with its checkpoint: the next start resumes there) and the runner stays
   * stopped, not following.
   */
  async start(interrupted?: AbortSignal): Promise<void> {
    if (!this.stopped) return;
    await this.claimViews();
    if (interrupted?.aborted) return;
    this.stopped = false;
    this.halted = false;
    this.displaced = false;
    this.interrupted = interrupted ?? null;
    try {
      await this.startApplying();
    } finally {
      this.interrupted = null;
    }
  }

  private async startApplying(): Promise<void> {
    if (this.lease) return this.startWithLease(this.lease);
    try {
      const catchingUp = this.catchUp();
      this.catchingUp = catchingUp.catch(() => undefined); // stop() waits for the batch in progress; start() reports failure
      await catchingUp;
    } catch (error) {
      this.stopped = true;
      if (error instanceof ViewsOfAnotherLog)
        throw new ForeignViews(await this.projections.binding(), this.logIdentity(), { kind: 'foreign', owner: error.owner });
      throw error;
    }
    if (this.interrupted?.aborted) {
      this.stopped = true;
      return;
    }
    this.stopping = new AbortController();
    this.loop = this.follow(this.stopping.signal);
    this.watchdog = setInterval(() => void this.watchCheckpoint(), CHECKPOINT_WATCH_MS);
    this.watchdog.unref();
  }

  /** A follower at once (the shared checkpoint answers its waits); the leader when the lease is free. */
  private async startWithLease(lease: LeaseLoop): Promise<void> {
    this.status.running = true;
    await this.pollCheckpoint();
    this.followerPoll = setInterval(() => void this.pollCheckpoint(), FOLLOWER_POLL_MS);
    this.followerPoll.unref();
    this.watchdog = setInterval(() => void this.watchCheckpoint(), CHECKPOINT_WATCH_MS);
    this.watchdog.unref();
    await lease.start();
    await this.catchingUp; // leading: the views are complete when start() resolves, as without a lease
    this.status.leadership = lease.keeper.leadership();
  }

  /**
   * This node holds the projector lease: catch up from the shared checkpoint, then follow live, fenced by
   * `token`. Runs in the background (catchingUp): the lease keeps being renewed meanwhile.
   */
  private lead(token: bigint, previous: LeaseHolder | null = null): void {
    if (this.stopped || this.displaced) return;
    this.projections.fenceWith?.({ node: this.lease!.keeper.node, token });
    this.leading = true;
    const term = ++this.term;
    this.status.leadership = this.lease!.keeper.leadership();
    this.logger.info(
      { node: this.lease!.keeper.node, token: token.toString(), ...tookOverFrom(previous) },
      `projector: this node holds the lease and projects${tookOverText(previous)}`,
    );
    this.catchingUp = this.catchUp(term).then(
      () => this.followTerm(term),
      async (error: unknown) => {
        if (error instanceof ProjectorDeposed) return this.lease!.keeper.deposed(error.current);
        // Said as the follow loop says its own failures: the loop may then find nothing to apply (a transient failure,
        // views at the head), and the failure would have left no trace; it stays in the status until a batch lands.
        this.failed(error);
        // A store that does not answer (a Redis failover the new leader took the lease in, the log down) is an outage,
        // said once without a stack as the follow loop says it; it was an error line with the stack at each takeover.
        const outage = this.isLogFailure(error) ? this.logOutage : this.outage;
        if (!outage.failed(error))
          this.logger.error({ err: error }, 'projection catch-up failed after taking the lease; resubscribing from checkpoint');
        this.followTerm(term); // the follow loop resumes from the stored checkpoint and retries with backoff
      },
    );
  }

  private followTerm(term: number): void {
    if (this.ended(term)) return;
    this.stopping = new AbortController();
    this.loop = this.follow(this.stopping.signal, term);
  }

  /** The lease is no longer this node's: stop applying now (without waiting for the loop: it may be the caller). */
  private stepDown(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.term++;
    // The fence token stays: a write of this term still in flight must be refused, not applied unfenced.
    this.status.leadership = this.lease!.keeper.leadership();
    this.logger.warn(
      { node: this.lease!.keeper.node, reason },
      `projector: stepped down (${reason}); following the shared checkpoint`,
    );
    // An outage this node was saying ends here with its own line: its back line came at a follower's first checkpoint
    // read, saying 'applying from the checkpoint' (it does not), with retries that no longer counted anything.
    this.outage.stoppedAsking();
    this.logOutage.stoppedAsking();
    this.stopping.abort();
    void this.subscription?.close().catch(() => undefined);
  }

  /** Followers: the shared checkpoint ends the waits of this node's commands (read-your-writes). */
  private async pollCheckpoint(): Promise<void> {
    // Views of another log (displaced) say nothing about this log's positions: no wait of ours ends on them.
    if (this.leading || this.polling || this.stopped || this.displaced || this.status.views !== 'own') return;
    this.polling = true;
    try {
      // The checkpoint with the log it counts: a take-over by another mailbox makes the shared checkpoint that log's
      // position, and until watchCheckpoint finds out (each second) it ended this node's waits on numbers of another
      // log (a send answered without its VIEWS_LAGGING warning; test/e2e/logIdentity's frozen mailbox, once in a run).
      const { checkpoint, logIdentity } = await this.projections.binding();
      if (checkpoint !== null && logIdentity !== null && logIdentity === this.status.logIdentity) this.reached(checkpoint);
      this.status.running = !this.displaced;
      this.recovered();
      if (this.lease && !this.leading) this.status.leadership = this.lease.keeper.leadership();
    } catch (error) {
      this.failed(error);
    } finally {
      this.polling = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halted = true;
    this.waiters.releaseAll(); // nothing is applied from here: a command waiting for its events is answered now
    this.stopping.abort(); // a backoff wait in the follow loop ends at once
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    if (this.followerPoll) clearInterval(this.followerPoll);
    this.followerPoll = null;
    await this.subscription?.close();
    await this.catchingUp;
    await this.loop;
    this.loop = null;
    this.leading = false;
    await this.lease?.stop(); // a clean stop hands the projection over at once
    if (this.lease) this.status.leadership = this.lease.keeper.leadership();
    this.status.running = false;
    const logIdentity = this.status.logIdentity;
    if (logIdentity !== null && this.status.views === 'own')
      await this.projections.releaseLiveWriter(logIdentity).catch(() => undefined);
  }

  private logIdentity(): string {
    if (this.status.logIdentity === null) throw new Error('the projection runner has not read its log identity yet');
    return this.status.logIdentity;
  }

  /** The views must be this log's; empty ones are claimed for it. Writes nothing when they are another log's. */
  private async claimViews(): Promise<void> {
    const logIdentity = (this.status.logIdentity = await this.store.logIdentity());
    const binding = await this.projections.binding();
    const verdict = judgeViews(logIdentity, await this.store.headPosition(), binding);
    if (verdict.kind === 'foreign' || verdict.kind === 'ahead')
      throw this.refuse(new ForeignViews(binding, logIdentity, verdict));
    const claimed = await this.projections.claim(logIdentity);
    if (claimed.logIdentity !== logIdentity) {
      throw this.refuse(new ForeignViews(claimed, logIdentity, { kind: 'foreign', owner: claimed.logIdentity })); // another log claimed them first
    }
    await this.projections.markLiveWriter(logIdentity);
    this.seenGeneration = claimed.generation; // a switch from here on is said (sayGenerationSwitched)
    this.status.views = 'own';
    this.status.viewsProblem = null;
  }

  private refuse(error: ForeignViews): ForeignViews {
    this.status.views = 'foreign';
    this.status.viewsProblem = error.message;
    return error;
  }

  /** Says that views of other rules are being rebuilt (null: no longer); the views served stay served meanwhile. */
  noteRulesRebuild(rebuild: RulesRebuild | null): void {
    this.status.rulesRebuild = rebuild;
  }

  /** The look at the views' rules failed and is taken again (null: it was answered). */
  noteRulesUnknown(unknown: RulesUnknown | null): void {
    this.status.rulesUnknown = unknown;
  }

  /** This node's rebuild for the rules switched the views to `generation` (said by its own line, not again). */
  noteOwnSwitch(generation: string): void {
    this.ownSwitches.add(generation);
  }

  /** Says why the views are not served while something else (a take-over) makes them this log's (null: served again). */
  noteViewsProblem(problem: string | null): void {
    this.status.viewsProblem = problem;
  }

  /**
   * The views are another log's: the projector found it (displaced), or a look of the store did (a read, /readyz)
   * before the projector's. A command's events are then durable in this log and will not show in these views.
   */
  viewsOfAnotherLog(): boolean {
    return this.displaced || (this.projections.viewsOfAnotherLog?.() ?? null) !== null;
  }

  getStatus(): RunnerStatus {
    const rebuilding = this.lostViews.current();
    return {
      ...this.status,
      rebuildingLostViews: rebuilding,
      viewsProblem: this.status.viewsProblem ?? this.lostViews.refusal()?.message ?? null,
      lagging: this.status.lagging && { ...this.status.lagging },
      // A follower's as of now (the lease it saw runs out as time goes, the store may not answer): the copy kept was
      // refreshed only by a checkpoint read that succeeded, and stood still, naming a live leader, while Redis was down.
      leadership:
        this.lease && !this.leading && !this.lease.keeper.leading
          ? this.lease.keeper.leadership()
          : { ...this.status.leadership },
      rulesRebuild: this.status.rulesRebuild && { ...this.status.rulesRebuild },
    };
  }

  /**
   * Resolves true once the views include `position` (read-your-writes), false
   * after the timeout; then the runner reports itself lagging until it gets there.
   */
  async waitFor(position: bigint, timeoutMs = 2000): Promise<boolean> {
    if (this.halted) return this.hasApplied(position); // stopped: the views will not get there while it waits
    if (this.viewsOfAnotherLog()) return false; // another log's views never show this log's events: no wait
    const reached = await this.waiters.waitFor(position, timeoutMs);
    if (this.halted || this.displaced) return reached;
    if (!reached && !this.hasApplied(position)) {
      const lagging = this.status.lagging;
      if (lagging === null) this.status.lagging = { position: position.toString(), since: new Date().toISOString() };
      else if (position > BigInt(lagging.position)) lagging.position = position.toString();
    }
    return reached;
  }

  /**
   * `listener` is told each time the views include a later log position than before: an apply of this node's, or, on a
   * node following another's projector, the shared checkpoint it reads (every FOLLOWER_POLL_MS). Returns the unsubscribe.
   * `advance` says whether a task may have changed: false only when this node applied the events and none opened or
   * changed a task (a follower, or a resume from the stored checkpoint, cannot tell: true).
   */
  onAdvance(listener: (position: bigint, advance: ViewsAdvance) => void): () => void {
    this.advanceListeners.add(listener);
    return () => void this.advanceListeners.delete(listener);
  }

  private hasApplied(position: bigint): boolean {
    return this.status.checkpoint !== null && BigInt(this.status.checkpoint) >= position;
  }

  private async catchUp(term: number | null = null): Promise<void> {
    const started = Date.now();
    let after = await this.projections.checkpoint();
    if (after === null) await this.buildingFromNothing();
    const progress = new CatchUpProgress(() => this.clock.now().getTime(), after);
    let total = 0;
    while (!(term !== null && this.ended(term)) && !this.interrupted?.aborted) {
      const page = await this.store.readAll(after, MAX_BATCH).catch((error: unknown) => this.ofTheLog(error));
      if (page.length === 0) break;
      try {
        await this.apply(page);
      } catch (error) {
        if (!(error instanceof ProjectionCheckpointRewound)) throw error;
        this.logger.warn({ reason: error.message }, 'projection views lost; rebuilding them from the log');
        this.viewsLost(error.expected);
        after = error.checkpoint;
        continue;
      }
      after = page[page.length - 1].position;
      total += page.length;
      if (progress.due()) {
        const head = await this.store.headPosition().catch(() => null); // only for the report: a failure reads on
        const report = progress.report(total, after, head);
        this.logger.info(report, describeCatchUp(report));
      }
    }
    if (total > 0 && !this.interrupted?.aborted) {
      const ms = Date.now() - started;
      this.logger.info({ events: total, ms, perSecond: Math.round((total / Math.max(ms, 1)) * 1000) }, 'projections caught up');
    }
  }

  /**
   * The views hold nothing (a first start on a log, views lost while the mailbox was stopped, memory views at every
   * start): what the log holds already is history. Its wakes went out when its events were first projected (or the
   * moment for them passed with the process that appended them), so they are applied without wakes up to the head as
   * it is now; what is appended from here on wakes as usual. Found: a start on a Redis that had lost its data while the
   * mailbox was stopped published a wake for every message ever sent to every listener on other nodes (heartbeat
   * daemons, other API nodes' streams, which record what they deliver as WakeObserved), with made-up unread counts.
   * A process that knows how far the wakes went (views lost while it runs) keeps that mark instead
   * (wakesSentThrough.ts).
   */
  private async buildingFromNothing(): Promise<void> {
    // A process that saw the views include events knows how far the wakes went: what came after its mark never woke
    // (sends while Redis was down, then Redis back empty and this node leading again), so it keeps its own mark.
    if (this.wakesSent.known()) return;
    const head = await this.store.headPosition().catch(() => null); // unknown: applied as before, with its wakes
    if (head === null) return;
    this.wakesSent.reached(head);
    this.logger.info(
      { head: head.toString() },
      'projections: building the views from the log; the wakes of the events already in it are not published again',
    );
  }

  /** True once this loop's term is over: stopped, displaced, or (with a lease) no longer leading this term. */
  private ended(term: number | null): boolean {
    return this.stopped || this.displaced || (term !== null && (term !== this.term || !this.leading));
  }

  private async follow(signal: AbortSignal, term: number | null = null): Promise<void> {
    let failures = 0;
    while (!this.ended(term)) {
      try {
        this.status.running = true;
        const stored = await this.projections.checkpoint();
        if (stored !== null) this.reached(stored);
        await this.consume(stored, term);
        failures = 0;
      } catch (error) {
        if (error instanceof ProjectorDeposed) {
          await this.lease?.keeper.deposed(error.current);
          break;
        }
        this.failed(error);
        if (error instanceof ViewsOfAnotherLog) {
          await this.displace(await this.projections.binding().catch(() => null), error.owner);
          break;
        }
        if (error instanceof ProjectionCheckpointRewound) {
          this.logger.warn({ reason: error.message }, 'projection views lost; rebuilding them from the log');
          this.viewsLost(error.expected);
          continue;
        }
        if (this.ended(term)) break; // a failure that came after a step-down (or a stop) is not this node's to say
        const delay = Math.round(backoffDelay(this.resubscribe, ++failures));
        this.retrying(error, delay);
        this.status.retryingBy = new Date(Date.now() + delay).toISOString();
        try {
          await sleep(delay, signal);
        } finally {
          this.status.retryingBy = null;
        }
      }
    }
  }

  /** Applies the subscription in batches, reading at most MAX_QUEUED events ahead of the store (see batchedConsumer.ts). */
  private async consume(after: bigint | null, term: number | null): Promise<void> {
    const subscription = (this.subscription = this.store.subscribe(after));
    if (this.ended(term)) await subscription.close(); // stop() came while the checkpoint was being read
    try {
      await consumeInBatches(this.markingFailures(subscription), {
        maxQueued: MAX_QUEUED,
        maxBatch: MAX_BATCH,
        splitFrom: SPLIT_FROM,
        together: (before, after) => before.streamName === after.streamName, // one append's events: one command waits for all
        apply: (batch) => this.apply(batch),
        close: () => subscription.close(),
      });
    } catch (error) {
      if (error instanceof ProjectorDeposed || !this.ended(term)) throw error; // one ended by stop(), displacement or a step-down is no failure
    }
  }

  /**
   * Every second while following: the views must still be this log's (a
   * take-over by another mailbox moves them to its log: stop applying and say
   * so) and not ahead of the log; the writer mark is renewed. A stored
   * checkpoint behind what this runner applied means the views were lost (e.g.
   * Redis restarted empty) while no event arrived to reveal it: end the
   * subscription so that the follow loop resumes from the stored one.
   */
  private async watchCheckpoint(): Promise<void> {
    if (this.stopped || this.displaced || this.watching) return; // a frozen store: one look at a time, not one more per second
    this.watching = true;
    try {
      await this.lookAtViews();
    } finally {
      this.watching = false;
    }
  }

  private async lookAtViews(): Promise<void> {
    // What this runner had applied, read before the views: an apply that lands while they are read moves both on, and
    // read after, it stood ahead of the binding read before it, which looked like views gone back (measured: three false
    // 'went back' warnings in 12 s of 250 sends/s, each ending the subscription to replay from the stored checkpoint).
    const applied = this.status.checkpoint;
    let binding: ViewsBinding;
    let head: bigint | null;
    try {
      binding = await this.projections.binding();
      head = await this.store.headPosition(); // after the binding: the head only grows
    } catch {
      return; // Unreachable store: the next apply reports it and the follow loop retries.
    }
    this.logAnswers();
    const verdict = judgeViews(this.logIdentity(), head, binding);
    if (verdict.kind === 'foreign' || verdict.kind === 'ahead') {
      await this.displace(binding, verdict.kind === 'foreign' ? verdict.owner : binding.logIdentity, verdict);
      return;
    }
    this.sayGenerationSwitched(binding);
    await this.projections.markLiveWriter(this.logIdentity()).catch(() => undefined);
    const stored = binding.checkpoint;
    if (applied === null || (stored !== null && stored >= BigInt(applied))) return;
    if (this.lease && !this.leading) {
      // A follower rebuilds nothing: the lease's holder does, once (its own line says so). This node only stops
      // answering reads from the views until they are back where they stood (they would say messages are gone).
      const leadership = this.lease.keeper.leadership();
      const leader = leadership.role === 'following' ? leadership.leader : null;
      this.logger.warn(
        { applied, stored: stored?.toString() ?? null, leader },
        `projection checkpoint went back (the views store lost its data?); ` +
          `${leader === null ? 'the node that takes the projector lease' : `${leader}, which holds the projector lease,`} ` +
          `rebuilds the views from the log, not this node (it follows); until they are back at position ${applied}, ` +
          `this node answers no read from them`,
      );
    } else
      this.logger.warn(
        { applied, stored: stored?.toString() ?? null },
        'projection checkpoint went back; rebuilding views from it',
      );
    this.viewsLost(BigInt(applied));
    this.status.checkpoint = stored?.toString() ?? null;
    await this.subscription?.close().catch(() => undefined);
  }

  /**
   * A rebuild run beside this server (`mailbox projections rebuild`, an operator's act) switches the views to a new
   * generation, and the server followed it in silence: an operator reading its log never saw the views replaced. Said
   * once at info, as an admin's act on the registry is, by each node that sees it; not this node's own rebuild for the
   * rules, whose lines say it.
   */
  private sayGenerationSwitched(binding: ViewsBinding): void {
    const previous = this.seenGeneration;
    this.seenGeneration = binding.generation;
    if (previous === null || previous === binding.generation) return;
    if (this.ownSwitches.delete(binding.generation) || this.status.rulesRebuild !== null) return;
    // Views that hold no log (Redis flushed: back at the first generation, empty) were lost, not switched to; so were
    // views at a generation no rebuild switched to, built again in place after the loss before this look.
    if (binding.logIdentity === null || binding.switchedTo === false) return;
    this.logger.info(
      {
        adminAction: 'views switched',
        by: 'mailbox projections rebuild',
        location: binding.location,
        generation: binding.generation,
        previous,
        checkpoint: binding.checkpoint?.toString() ?? null,
      },
      `projections: the views in ${binding.location} were switched to generation ${binding.generation} ` +
        `(from ${previous}) by a rebuild run beside this server (mailbox projections rebuild); this node serves them now`,
    );
  }

  /**
   * The subscription as it is, its failures marked as the log's: the marking rides on the promise each next() returns
   * (a handler beside the caller's, not a layer in front of it), so the items are handed over in the same turns.
   */
  private markingFailures(subscription: EventSubscription): AsyncIterable<StoredEvent> {
    return {
      [Symbol.asyncIterator]: () => {
        const iterator = subscription[Symbol.asyncIterator]();
        return {
          next: () => {
            const next = iterator.next();
            next.catch((error: unknown) => this.markLogFailure(error));
            return next;
          },
          return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
        };
      },
    };
  }

  private markLogFailure(error: unknown): void {
    // A stored event this build cannot read is no outage of the log: the log answering again does not end it, and
    // /readyz kept lastError null while the projector failed on it at every retry (a silent stall).
    if (error instanceof InvalidStoredEvent) return;
    if (typeof error === 'object' && error !== null) this.logFailures.add(error);
  }

  private ofTheLog(error: unknown): never {
    this.markLogFailure(error);
    throw error;
  }

  /** The views are no longer this log's: stop applying (for good) and serving them; readiness says why. */
  private async displace(
    binding: ViewsBinding | null,
    owner: string | null,
    verdict: ViewsVerdict = { kind: 'foreign', owner },
  ): Promise<void> {
    if (this.displaced) return;
    this.displaced = true;
    // Views ahead of the log: the log may have been replaced (EventStoreDB reset to an empty database) while this
    // process kept the old log's identity, under which the store would go on serving the old log's views and
    // checking commands against them. Bind to the log as it is now, so that reads refuse the old views (503).
    if (verdict.kind === 'ahead' && (await this.rebindToCurrentLog()))
      verdict = { kind: 'foreign', owner: binding?.logIdentity ?? owner };
    const problem = binding
      ? new ForeignViews(binding, this.logIdentity(), verdict).message
      : `The views belong to ${owner ?? 'an unknown log'}, not to this event log (${this.logIdentity()}).`;
    this.status.views = 'foreign';
    this.status.viewsProblem = problem;
    this.status.running = false;
    this.waiters.releaseAll(); // a command waiting for its events is answered now: these views will never show them
    this.logger.error(
      { logIdentity: this.logIdentity(), viewsOf: owner, reason: problem },
      'projections: the views now belong to another log; this mailbox stopped applying to and serving them',
    );
    await this.subscription?.close().catch(() => undefined);
  }

  /** True when the log now has another identity than the one read at start (the store is then bound to it). */
  private async rebindToCurrentLog(): Promise<boolean> {
    const current = await this.store.logIdentity().catch(() => null);
    if (current === null || current === this.status.logIdentity) return false;
    this.status.logIdentity = current;
    await this.projections.claim(current).catch(() => undefined); // views held already: nothing written, reads checked
    return true;
  }

  private async apply(events: StoredEvent[]): Promise<void> {
    // Views lost and rebuilt from the log: what they had included before goes in again without its wakes (they went
    // out then), what comes after it is news however old it is (wakesSentThrough.ts). Live batches are all fresh.
    const { replayed, fresh } = this.wakesSent.split(events);
    const [replayedViews, freshViews] = [replayed.map(projectStored), fresh.map(projectStored)];
    if (replayedViews.length > 0) await this.projections.applyBatch(replayedViews, { publishWakes: false });
    if (freshViews.length > 0) await this.projections.applyBatch(freshViews);
    this.reached(events[events.length - 1].position, {
      tasksMayHaveChanged: replayedViews.some(changesATask) || freshViews.some(changesATask),
    });
    this.status.lastAppliedAt = new Date().toISOString();
    this.recovered();
  }

  /**
   * A views store that does not answer (Redis failing over) is one warn line, then debug (support/storeOutage.ts): it
   * logged an error with its stack at every retry. Any other failure keeps its error line, with the stack, each time.
   */
  private retrying(error: unknown, delay: number): void {
    if (error instanceof InvalidStoredEvent) return this.unreadable(error, delay);
    const outage = this.isLogFailure(error) ? this.logOutage : this.outage;
    if (outage.failed(error, { retryInMs: delay })) return;
    this.logger.error({ err: error, retryInMs: delay }, 'projection subscription failed; resubscribing from checkpoint');
  }

  /**
   * A stored event this build cannot read stops the projector there until the log is mended (nothing after it is
   * applied, nothing is skipped): one error line naming it, the retries on it at debug. It was an error line with the
   * stack at every retry, and lastError was cleared each second.
   */
  private unreadable(error: InvalidStoredEvent, delay: number): void {
    const fields = {
      position: error.position.toString(),
      stream: error.streamName,
      type: error.type,
      field: error.field,
      reason: error.message,
      retryInMs: delay,
    };
    if (this.unreadableSaid === error.message) {
      this.logger.debug(fields, 'projections: still stopped at the stored event it cannot read');
      return;
    }
    this.unreadableSaid = error.message;
    this.status.stoppedAtUnreadable = error.position.toString();
    this.logger.error(
      fields,
      `projections: stopped at log position ${error.position}: the stored event there cannot be read; nothing after it ` +
        'is applied until the log is mended (restore it from a backup, or add an upcaster)',
    );
  }

  private isLogFailure(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.logFailures.has(error);
  }

  private failed(error: unknown): void {
    this.status.lastError = error instanceof Error ? error.message : String(error);
    this.status.lastErrorAt = new Date().toISOString();
    this.lastErrorFromLog = this.isLogFailure(error);
  }

  /**
   * The log answered a read (the look each second): an outage of the log is over, and said so, and a failure of the
   * log's is no longer the one the runner is in. On a quiet mailbox no batch came to say it: /readyz kept the log's
   * lastError, and the log kept its outage open, until the next send, however long after.
   */
  private logAnswers(): void {
    this.logOutage.answered();
    if (!this.lastErrorFromLog) return;
    this.lastErrorFromLog = false;
    this.status.lastError = null;
    this.status.lastErrorAt = null;
  }

  /**
   * A batch landed (or, following, the shared checkpoint was read): an earlier failure is over, and no longer said, and
   * an outage is said to be over. Not at the leader's checkpoint read before it applies: on a Cluster one node may
   * answer it while the apply's node is still down.
   */
  private recovered(): void {
    this.outage.answered();
    this.logOutage.answered();
    this.lastErrorFromLog = false;
    this.unreadableSaid = null;
    this.status.stoppedAtUnreadable = null;
    this.status.lastError = null;
    this.status.lastErrorAt = null;
  }

  /**
   * The views held at least `heldThrough` (what the store had committed), or as far as this runner saw them: until the
   * rebuild gets back there, they hold only part of the log, and no read is answered from them (lostViews.ts).
   */
  private viewsLost(heldThrough: bigint | null): void {
    const seen = this.status.checkpoint === null ? null : BigInt(this.status.checkpoint);
    const through = heldThrough === null || (seen !== null && seen > heldThrough) ? seen : heldThrough;
    if (through !== null) this.lostViews.lost(through, this.clock.now());
  }

  /**
   * The views include `position`: from an apply of ours, or from the stored checkpoint when resuming (a batch
   * whose answer timed out, e.g. Redis stopped mid-call, may still have been applied: its waiters must hear it).
   */
  private reached(position: bigint, advance: ViewsAdvance = { tasksMayHaveChanged: true }): void {
    this.wakesSent.reached(position); // also the shared checkpoint a follower reads: its leader published those wakes
    this.lostViews.reached(position);
    const advanced = this.status.checkpoint === null || position > BigInt(this.status.checkpoint);
    if (advanced) this.status.checkpoint = position.toString();
    if (this.status.lagging !== null && position >= BigInt(this.status.lagging.position)) this.status.lagging = null;
    this.waiters.reached(position);
    if (advanced) for (const listener of this.advanceListeners) listener(position, advance);
  }
}
