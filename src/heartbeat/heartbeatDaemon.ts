/**
 * The heartbeat daemon's shell: each tick (1) samples the pipeline (log head
 * vs checkpoint) for the stall alarm, (2) reads every agent's heartbeat counts,
 * (3) looks up the newest unread message of the agents that may need a nudge
 * (which tasks wait on them is in their counts), (4) asks the pure decider, (5) records and dispatches the nudges. All the
 * judgement is in nudgeDecider.ts and pipelineWatch.ts; this file only does I/O.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { EventStore } from '../events/eventStore';
import type { ListQuery } from '../projections/listQuery';
import type { ProjectionStore } from '../projections/projectionStore';
import { StoreOutage } from '../support/storeOutage';
import type { WakeBus } from '../projections/wakeBus';
import { mapBounded } from './boundedQueue';
import type { HeartbeatMetrics } from './heartbeatMetrics';
import { nudgePolicy, type HeartbeatSettings } from './heartbeatSettings';
import {
  decideNudges,
  isEarlierSignature,
  mayNudge,
  nudgeRecord,
  recordNudges,
  rememberedNudges,
  type AgentSnapshot,
  type RememberedAgent,
  type Decision,
  type NudgeRecord,
  type NudgeState,
  type Verdict,
} from './nudgeDecider';
import type { DeliveryReport, NudgeDispatcher } from './nudgeDispatcher';
import { initialPipelineState, observePipeline, type PipelineState } from './pipelineWatch';
import { WakeWatcher } from './wakeWatcher';
import type { WakeRecorder } from '../application/wakeRecorder';
import { UnwokenEscalation, wakeVia, type EscalationReport } from './unwokenEscalation';
import { ReplyOverdueEscalation, type ReplyOverdueReport } from './replyOverdueEscalation';
import { isEmpty, settingsForNobody, type SettingsForNobody } from './settingsForNobody';
import { ViewsGoneBack, ViewsOfThisLog } from './viewsGoneBack';
import { viewsLag } from '../application/viewsLag';
import type { SharedNudges } from './sharedNudges';

/** What the daemon reads: a Mailbox satisfies this, and so do the stores opened by `mailbox heartbeat`. */
export interface HeartbeatSources {
  eventStore: EventStore;
  projections: ProjectionStore;
  wakeBus: WakeBus;
  /**
   * The mailbox's own logger (a Mailbox has one: createMailbox's logLevel, or the logger it was given): startHeartbeat
   * logs there unless told otherwise, so that `createMailbox({ logLevel: 'warn' })` keeps the heartbeat's info lines out.
   */
  logger?: Logger;
  /**
   * The views are kept by a projector in another process (the server's: `mailbox heartbeat` without a projector of its
   * own): each tick looks for its live mark on them (`pipeline.projectorLive`), so that a stopped server is an alarm.
   * Without it, a daemon beside a stopped server said healthy for as long as nothing was appended to the log.
   */
  projectorElsewhere?: boolean;
  /**
   * With projectorElsewhere: no mark is looked at once more after this long (default 1500 ms, longer than the 1 s in
   * which every live server renews it), so that one node of several restarting is no alarm for a whole interval (nor
   * exit code 1 of `mailbox heartbeat --once`, which looks so too); 0 for one look.
   */
  projectorRelookMs?: number;
}

export interface PipelineReport {
  /** Log positions (EventStoreDB's are byte offsets in its log, hundreds apart for one event). */
  head: string | null;
  checkpoint: string | null;
  /** Events in the log after the checkpoint up to the head (counted as /readyz counts them: application/viewsLag.ts). */
  lag: string;
  /** Present when the count stopped at LAG_COUNTED_UP_TO: the views are `lag` or more events behind. */
  lagAtLeast?: true;
  stalled: boolean;
  stuckForMs: number;
  /**
   * Only when the views are kept by another process's projector (the server's): whether one renewed its live mark on
   * them within the last 5 s. False: no mailbox server is keeping these views (stopped, or hung), the alarm
   * `projector_absent`.
   */
  projectorLive?: boolean;
  /**
   * Only in `mailbox heartbeat --once`'s report, when the views lagged the log and no projector kept them: their
   * checkpoint was not watched for --stall-after (nobody would move it), so `stalled: false` says nothing of a projector.
   */
  lagNotWatched?: { reason: 'projector_absent' };
}

export interface TickReport {
  at: string;
  /** Registered agents (retired included; not auditors) with heartbeat counts. */
  agents: number;
  /** Agents that can read their unread mail (retired ones, which never can again, are under `retiredWithUnread`). */
  withUnread: number;
  /** Retired agents holding unread mail: their token no longer works, so they are never nudged nor counted above. */
  retiredWithUnread: number;
  /**
   * Identities that have mail but are not agents: never registered (direct sends in permissive mode), or registered as
   * auditors (no inbox: they can neither list nor mark read). Never nudged.
   */
  unregisteredWithMail: number;
  /** Identities the settings name (opt-out, agents file) that are not registered, or retired: applied to nobody. */
  settingsForNobody: SettingsForNobody;
  verdicts: Partial<Record<Verdict, number>>;
  /** Identities nudged by this tick through a target that serves them (dispatched; see `settled()` for delivery). */
  nudged: string[];
  /**
   * Identities due a nudge that no target serves (no Redis channel, webhook or hook configured for them): the nudge
   * was written to the log only, so nobody was told. Listed apart, so that the report never claims a nudge it did not
   * make.
   */
  loggedOnly: string[];
  /**
   * Only while no projector keeps the views (`pipeline.projectorLive` false): nobody is nudged about unread mail, which
   * no agent can read without a server (and whose counts stand where it left them); `identities` were due a nudge and
   * are nudged by the first tick once a server keeps the views.
   */
  held?: { reason: 'projector_absent'; identities: string[] };
  /**
   * Only in a settled report (`settledReport`, `mailbox heartbeat --once`): each target that finally failed a nudge of
   * this tick (after its retries), with the error; `reason` for an escalation's nudge. An identity whose nudge no
   * target took is then no longer under `nudged`; one that another target took stays there too. A running daemon's
   * report is made at dispatch, before any delivery: it logs and counts failures, and retries per its policy.
   */
  failed?: NudgeFailure[];
  /**
   * Only in a settled report: identities whose nudge was published but heard by nobody (a Redis channel with no
   * subscriber: outcome 'unheard') and that no other target told. Not under `nudged`: nobody was told. Not a failure
   * either (the publish worked; the agent was not listening): no retry, exit code unchanged. An escalation's nudge
   * (unwoken, reply-overdue) heard by nobody lists its agent here too (escalations are never under `nudged`).
   */
  unheard?: string[];
  pipeline: PipelineReport;
  /** The unwoken alarm: messages past the wake SLA that woke nobody, and those this tick escalated (issue 13). */
  unwoken: EscalationReport;
  /** Reply obligations this tick found overdue (issue 13). */
  replies: ReplyOverdueReport;
  durationMs: number;
}

export interface NudgeFailure {
  identity: string;
  /** The nudge's reason when it was an escalation's ('unwoken', 'reply-overdue'); absent for the unread set. */
  reason?: NonNullable<DeliveryReport['nudge']['reason']>;
  /**
   * The message an escalation's nudge was about (with `reason`): an escalation is claimed once and never tried again,
   * so this says which message's recipient was not told (one agent's failures were otherwise the same line each). A
   * nudge that carried several messages (an escalation's: one per recipient per tick) fails once for each of them.
   */
  messageId?: string;
  target: string;
  error: string;
}

/** Longer than the 1 s in which every live server renews its mark on the views (projectionRunner's checkpoint watch). */
const PROJECTOR_RELOOK_MS = 1500;
const UNREAD_NEWEST_FIRST: ListQuery = { box: 'inbox', status: 'unread', limit: 1, before: null };
const LOOKUP_CONCURRENCY = 32;

export class HeartbeatDaemon {
  private state: NudgeState = new Map();
  private pipelineState: PipelineState = initialPipelineState;
  private readonly policy;
  private readonly wakes: WakeWatcher;
  private readonly escalation: UnwokenEscalation;
  private readonly overdueReplies: ReplyOverdueEscalation;
  /** Registered, not retired, not opted out: who an escalation may nudge (refreshed every tick). */
  private nudgeable = new Set<string>();
  private lastReport: TickReport | null = null;
  /** Whether the last tick found a projector keeping the views (null: not looked yet, or not watched). */
  private projectorWasLive: boolean | null = null;
  /** Whether ALARM projection stalled was said (and not yet cleared): not said while no projector keeps the views. */
  private stallSaid = false;
  /** Whether this absence of the projector was said to hold the nudges and escalations back (said once per absence). */
  private nudgesHeldSaid = false;
  /**
   * The projector look of `watchPipelineBeforeTick` when it returned at once, taken by the tick that follows (--once): a
   * second look beside a stopped server waited another 1.5 s for the same answer.
   */
  private projectorLooked: boolean | null = null;
  /** --once saw the views lag with no projector keeping them, and did not watch their checkpoint (nobody moves it). */
  private lagNotWatched = false;
  /** The second look's wait while it runs: stop() ends it at once (a SIGTERM is not held up to 1.5 s by it). */
  private relook: { timer: NodeJS.Timeout; end: () => void } | null = null;
  private closing = false;
  /** What the last warning about settings that apply to nobody said (warned again only when it changes). */
  private warnedForNobody = '';
  private lastError: string | null = null;
  /** When the ticks began to fail (the injected clock's ms; null: the last tick ran), and how many have failed since. */
  private failingSince: number | null = null;
  private failedTicks = 0;
  /** A store that does not answer a tick is said once, not at every tick (support/storeOutage.ts). */
  private readonly outage: StoreOutage;
  /** Views that went back (lost and being rebuilt) are part of the log: no tick reads them until they are whole. */
  private readonly goneBack = new ViewsGoneBack();
  private readonly viewsBehind: StoreOutage;
  /** Views of another log, or ahead of this one's head (a log restored from an older backup): never read. */
  private readonly ofThisLog = new ViewsOfThisLog();
  private readonly viewsNotOurs: StoreOutage;
  /** The delivery reports of each tick's nudges (escalations included), for its settled report. */
  private readonly deliveriesOf = new WeakMap<TickReport, DeliveryReport[]>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;
  /** Scheduled ticks run only while this says so (several daemons: the holder of the heartbeat lease). */
  mayTick: () => boolean = () => true;
  /**
   * Several daemons (the heartbeat lease): the nudge records the lease's holders share, read at each tick in place of
   * this daemon's own and written before its nudges go out (null: this daemon is the only one).
   */
  shared: SharedNudges | null = null;
  /**
   * The last nudges the log recorded before this daemon's first tick, read then, each taken into its state
   * (rememberedNudges) at the first tick its agent may be nudged: its newest unread message is looked up only then.
   */
  private loggedNudges: Map<string, { at: string }> | null = null;
  /** Called when the shared records refused this daemon's write: it no longer holds the lease (it steps down). */
  onFenced: () => Promise<void> = async () => undefined;

  constructor(
    private readonly sources: HeartbeatSources,
    private readonly settings: HeartbeatSettings,
    private readonly dispatcher: NudgeDispatcher,
    private readonly metrics: HeartbeatMetrics,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly recorder: WakeRecorder,
  ) {
    this.policy = nudgePolicy(settings);
    this.outage = new StoreOutage(logger, now, {
      down: 'heartbeat: the store does not answer; no agent is nudged until a tick reads it again (each interval)',
      stillDown: 'heartbeat: the store still does not answer',
      back: 'heartbeat: the store answers again; ticking',
      stoppedAsking:
        'heartbeat: the store had not answered when this daemon lost the lease; it no longer ticks, nor says when the store answers',
      failuresField: 'failedTicks',
      refused: {
        down: 'heartbeat: the store answers and refuses its calls; no agent is nudged until a tick is taken again (each interval)',
        back: 'heartbeat: the store takes its calls again; ticking',
        stoppedAsking:
          'heartbeat: the store still refused its calls when this daemon lost the lease; it no longer ticks, nor says when the store takes them',
      },
    });
    this.viewsBehind = new StoreOutage(logger, now, {
      down:
        'heartbeat: the views went back (they lost what they held); no agent is nudged and no message escalated from ' +
        'part of them until they are back where they were (checked each interval)',
      stillDown: 'heartbeat: the views are still behind what they held',
      back: 'heartbeat: the views are back where they were; ticking',
      stoppedAsking:
        'heartbeat: the views were still behind what they held when this daemon lost the lease; it no longer ticks, nor says when they are back',
      failuresField: 'skippedTicks',
    });
    this.viewsNotOurs = new StoreOutage(logger, now, {
      down:
        "heartbeat: the views are not this event log's (ahead of its head, or another log's); no agent is nudged and " +
        'no message escalated from them until they are (checked each interval)',
      stillDown: "heartbeat: the views are still not this event log's",
      back: "heartbeat: the views are this event log's again; ticking",
      stoppedAsking:
        "heartbeat: the views were still not this event log's when this daemon lost the lease; it no longer ticks, nor " +
        'says when they are',
      failuresField: 'skippedTicks',
    });
    this.wakes = new WakeWatcher(sources.wakeBus, now);
    this.escalation = new UnwokenEscalation(sources, dispatcher, recorder, metrics, logger, settings.wakeSlaMs, (identity) =>
      this.nudgeable.has(identity),
    );
    this.overdueReplies = new ReplyOverdueEscalation(sources, dispatcher, recorder, metrics, logger, (identity) =>
      this.nudgeable.has(identity),
    );
  }

  async tick(): Promise<TickReport> {
    const started = performance.now();
    const now = this.now();
    const pipeline = await this.watchPipeline(now);
    const lagNotWatched = this.lagNotWatched;
    this.lagNotWatched = false;
    const notOurs = await this.viewsNotOfThisLog();
    if (notOurs !== null) throw notOurs;
    const behind = this.goneBack.check(
      pipeline.checkpoint === null ? null : BigInt(pipeline.checkpoint),
      pipeline.head === null ? null : BigInt(pipeline.head),
    );
    if (behind !== null) throw behind;
    const [allCounts, agents] = await Promise.all([
      this.sources.projections.allHeartbeats(),
      this.sources.projections.listAgents(),
    ]);
    // Mail addressed to an identity nobody registered, or to an auditor, has counts too; neither is an agent with an
    // inbox to read: never nudged nor counted as one.
    const registered = new Set(agents.filter((agent) => agent.role === 'agent').map((agent) => agent.identity));
    const counts = allCounts.filter((agent) => registered.has(agent.identity));
    const retired = new Set(agents.filter((agent) => agent.retired).map((agent) => agent.identity));
    this.nudgeable = new Set(
      agents
        .filter((agent) => registered.has(agent.identity) && !agent.retired && !this.policy.optedOut.has(agent.identity))
        .map((agent) => agent.identity),
    );
    const forNobody = settingsForNobody(this.settings, agents);
    this.warnForNobody(forNobody);
    await this.wakes.watch(counts.filter((agent) => !retired.has(agent.identity)).map((agent) => agent.identity));
    const snapshots = await mapBounded(counts, LOOKUP_CONCURRENCY, async (agent): Promise<AgentSnapshot & RememberedAgent> => {
      const screened = { ...agent, lastWakeAt: this.wakes.lastWakeFor(agent.identity), retired: retired.has(agent.identity) };
      // Which tasks wait on it is in its counts (tasksWaitingSince: the last change that made one begin waiting on it),
      // read with them: no task list is read.
      const newest = mayNudge(screened, now, this.policy)
        ? (await this.sources.projections.listMessages(agent.identity, UNREAD_NEWEST_FIRST)).messages[0]
        : undefined;
      return { ...screened, newestUnreadId: newest?.messageId ?? null, newestUnreadSentAt: newest?.sentAt ?? null };
    });
    // Several daemons: what the lease's holders nudged, this daemon's predecessors included. One alone: at its first
    // tick, what earlier daemons nudged as the log recorded it (a cron job's --once, a restart).
    if (this.shared !== null) this.state = await this.sharedState(snapshots, now);
    else {
      const logged = (this.loggedNudges ??= await this.sources.projections.lastNudges());
      const nudgeable = snapshots.filter((agent) => logged.has(agent.identity) && mayNudge(agent, now, this.policy));
      this.state = rememberedNudges(this.state, nudgeable, logged);
      for (const agent of nudgeable) logged.delete(agent.identity);
    }
    // No projector keeps the views (a stopped server): an agent cannot read its mail, and the counts stand where the
    // server left them. Whoever is due a nudge is held (verdict projector_absent): not recorded, so that the first tick
    // once a server keeps the views nudges it as it would have.
    const projectorAbsent = pipeline.projectorLive === false;
    const decided = decideNudges(snapshots, this.state, now, this.policy);
    const decisions: Decision[] = projectorAbsent
      ? decided.map((decision) =>
          decision.nudge === undefined
            ? decision
            : { identity: decision.identity, verdict: 'projector_absent', signature: decision.signature },
        )
      : decided;
    const nudgesHeld = decided.filter((decision) => projectorAbsent && decision.nudge !== undefined).map((d) => d.identity);
    let toNudge = decisions.filter((decision) => decision.nudge !== undefined);
    // Where each delivered nudge is recorded (a WakeObserved): under the newest unread message, or for a nudge about
    // tasks alone, under the message of the task that began waiting on the agent last (its counts' tasksWaitingSince).
    const byIdentity = new Map(snapshots.map((agent) => [agent.identity, agent]));
    const recordUnder = new Map(
      toNudge.map(({ nudge }) => {
        const { identity, newestUnreadId, tasksWaiting } = nudge!;
        const taskOnly = newestUnreadId === null && tasksWaiting > 0;
        return [identity, taskOnly ? (byIdentity.get(identity)?.tasksWaitingSince?.taskId ?? null) : newestUnreadId] as const;
      }),
    );
    const previous = new Map(toNudge.map((decision) => [decision.identity, this.state.get(decision.identity)]));
    if (!(await this.recordShared(toNudge, now))) toNudge = [];
    this.state = recordNudges(this.state, toNudge, now);
    const deliveries: DeliveryReport[] = [];
    this.dispatcher.collectInto(deliveries);
    let unwoken: EscalationReport;
    let replies: ReplyOverdueReport;
    try {
      for (const decision of toNudge) {
        const under = recordUnder.get(decision.identity) ?? null;
        this.dispatcher.dispatch(decision.nudge!, (report) =>
          this.onDelivered(report, now, previous.get(decision.identity), under),
        );
      }
      // No projector keeps the views (a stopped server): an escalation is a one-time claim in the log, and views that
      // nobody keeps may miss a wake or a reply appended since. None is looked at until a server keeps them again.
      if (projectorAbsent) {
        this.sayNudgesHeld();
        const notLooked = await this.escalation.notLookedAt(now, 'projector_absent');
        const notDue = await this.overdueReplies.notLookedAt(now, 'projector_absent');
        unwoken = notLooked.report;
        replies = notDue.report;
        this.metrics.heldEscalations({ reason: 'projector_absent', count: notLooked.awaiting + notDue.due });
      } else {
        this.nudgesHeldSaid = false;
        unwoken = await this.escalation.run(now);
        replies = await this.overdueReplies.run(now);
        const held = unwoken.held?.reason === 'no_nudge_target' ? unwoken.held.messageIds.length : 0;
        this.metrics.heldEscalations(held > 0 ? { reason: 'no_nudge_target', count: held } : null);
      }
    } finally {
      this.dispatcher.collectInto(null);
    }

    const verdicts: Partial<Record<Verdict, number>> = {};
    for (const { verdict } of decisions) verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
    for (const [verdict, n] of Object.entries(verdicts)) this.metrics.decisions.inc({ verdict }, n);
    // A retired agent can never read its mail again: counting it "with unread" (as it was) showed an operator agents
    // to chase that nobody can answer for. Said apart.
    const holdingUnread = counts.filter((agent) => agent.unread > 0);
    const retiredWithUnread = holdingUnread.filter((agent) => retired.has(agent.identity)).length;
    const withUnread = holdingUnread.length - retiredWithUnread;
    this.metrics.agentsWithUnread.set(withUnread);
    this.metrics.wakesReceived.inc(this.wakes.takeReceivedCount());
    for (const ms of await this.wakes.takeLatenciesMs(this.sources.eventStore)) this.metrics.wakeLatency.observe(ms / 1000);
    const durationMs = performance.now() - started;
    this.metrics.ticks.inc();
    this.metrics.tickDuration.observe(durationMs / 1000);
    const nudged = toNudge.map((decision) => decision.identity);
    const report: TickReport = {
      at: new Date(now).toISOString(),
      agents: counts.length,
      withUnread,
      retiredWithUnread,
      // Only those that hold unread mail: every auditor has counts (all zero), and was counted as an identity "with
      // mail", sending an operator after misaddressed mail that does not exist.
      unregisteredWithMail: allCounts.filter((agent) => agent.unread > 0 && !registered.has(agent.identity)).length,
      settingsForNobody: forNobody,
      verdicts,
      nudged: nudged.filter((identity) => this.dispatcher.servedBy(identity)),
      loggedOnly: nudged.filter((identity) => !this.dispatcher.servedBy(identity)),
      ...(projectorAbsent ? { held: { reason: 'projector_absent' as const, identities: nudgesHeld } } : {}),
      pipeline: lagNotWatched ? { ...pipeline, lagNotWatched: { reason: 'projector_absent' } } : pipeline,
      unwoken,
      replies,
      durationMs: Math.round(durationMs),
    };
    if (durationMs > this.settings.intervalMs) {
      this.logger.warn(
        { durationMs: report.durationMs, intervalMs: this.settings.intervalMs },
        'heartbeat tick took longer than the interval',
      );
    }
    this.logger.debug({ ...report }, 'heartbeat tick');
    this.deliveriesOf.set(report, deliveries);
    this.lastReport = report;
    this.lastError = null;
    this.failingSince = null;
    this.failedTicks = 0;
    return report;
  }

  /**
   * Several daemons: the records the lease's holders keep, and for an agent that may be nudged and has none, its last
   * nudge as the log recorded it (rememberedNudges, as a daemon alone reads it at its first tick). Redis restarted
   * empty or flushed loses the records (the views are rebuilt from the log, their last nudges with them): the holder
   * nudged every idle agent once more, its unread set unchanged, under the same nudgeId.
   */
  private async sharedState(snapshots: Array<AgentSnapshot & RememberedAgent>, now: number): Promise<NudgeState> {
    const shared = await this.shared!.read();
    // A record an earlier version wrote under its signature (upgraded daemons, the records kept in Redis): judged by its
    // time as a record from the log is (the newest unread mail and the last task to begin waiting not after it: the same
    // set). Compared as it was, it never equalled this version's signature, and the agent was nudged once more about
    // mail and tasks it had been nudged about, under a new nudgeId.
    const earlier = snapshots.filter(
      (agent) => isEarlierSignature(shared.get(agent.identity)?.signature ?? '') && mayNudge(agent, now, this.policy),
    );
    let state: NudgeState = shared;
    if (earlier.length > 0) {
      const times = new Map(
        earlier.map((agent) => [agent.identity, { at: new Date(shared.get(agent.identity)!.at).toISOString() }]),
      );
      const rest = new Map(shared);
      for (const agent of earlier) rest.delete(agent.identity);
      state = rememberedNudges(rest, earlier, times);
    }
    const unrecorded = snapshots.filter((agent) => !shared.has(agent.identity) && mayNudge(agent, now, this.policy));
    if (unrecorded.length === 0) return state;
    return rememberedNudges(state, unrecorded, await this.sources.projections.lastNudges());
  }

  /**
   * Several daemons: records the nudges about to go out where the next holder reads them, fenced by the lease. False
   * when this daemon no longer holds it (another took it while this tick ran): nothing is sent, and it steps down.
   */
  private async recordShared(toNudge: readonly Decision[], now: number): Promise<boolean> {
    if (this.shared === null || toNudge.length === 0) return true;
    const records = new Map(toNudge.map((decision) => [decision.identity, nudgeRecord(decision, now)]));
    if (await this.shared.record(records)) return true;
    this.logger.warn(
      { identities: toNudge.map((decision) => decision.identity) },
      `heartbeat: the lease was no longer this daemon's when its tick was about to nudge ${toNudge.length} agent(s); ` +
        'nothing was sent (the holder nudges them)',
    );
    await this.onFenced();
    return false;
  }

  /** The refusal of views that are not this log's (read binding first, then the head: judgeViews), or null. */
  private async viewsNotOfThisLog() {
    const binding = await this.sources.projections.binding();
    const head = await this.sources.eventStore.headPosition();
    return this.ofThisLog.check(await this.sources.eventStore.logIdentity(), binding, head);
  }

  /**
   * Says once per absence of the projector that nobody is nudged meanwhile: neither about unread mail nor by an
   * escalation (each run of --once says it).
   */
  private sayNudgesHeld(): void {
    if (this.nudgesHeldSaid) return;
    this.nudgesHeldSaid = true;
    this.logger.warn(
      { held: 'projector_absent' },
      'heartbeat: no agent is nudged about its unread mail and no message is escalated (unwoken, reply overdue) while ' +
        'no projector keeps the views: without a server no agent can read its mail, and the unread counts stand where ' +
        'it left them; the escalations were not looked at, since views nobody keeps may miss a wake or a reply the log ' +
        'has, and each escalation is claimed once for good. Nudges and escalations resume at the first tick once a ' +
        'server keeps the views again',
    );
  }

  /** Says once (and again when it changes) which configured identities no active agent answers to. */
  private warnForNobody(forNobody: SettingsForNobody): void {
    const said = JSON.stringify(forNobody);
    if (said === this.warnedForNobody) return;
    this.warnedForNobody = said;
    if (isEmpty(forNobody)) return;
    const parts = [
      forNobody.unregistered.length > 0 ? `not registered: ${forNobody.unregistered.join(', ')}` : null,
      forNobody.retired.length > 0 ? `retired: ${forNobody.retired.join(', ')}` : null,
    ].filter((part): part is string => part !== null);
    this.logger.warn(
      { ...forNobody },
      `heartbeat settings (--opt-out, --agents-file) name identities that no active agent answers to (${parts.join('; ')}); ` +
        'their entries apply to nobody: check the spelling, or register the agent',
    );
  }

  /** Resolves once every nudge dispatched so far was delivered or finally failed. */
  settled(): Promise<void> {
    return this.dispatcher.settled();
  }

  /**
   * The tick's report once its nudges settled, saying what became of each: delivered (`nudged`), written to the log
   * only (`loggedOnly`), published but heard by nobody (`unheard`), or failed (`failed`, per target). A nudge no
   * target told (every target failed, or the only ones that took it heard by nobody) leaves `nudged`.
   */
  async settledReport(report: TickReport): Promise<TickReport> {
    await this.settled();
    const deliveries = this.deliveriesOf.get(report) ?? [];
    // By agent (each nudge's targets in their order): nudges settle concurrently, and a report in settle order came out
    // shuffled from one run to the next (a cron log that diffs reports, or a test, saw a change where none was).
    const byAgent = [...deliveries].sort((a, b) =>
      a.nudge.identity < b.nudge.identity ? -1 : a.nudge.identity > b.nudge.identity ? 1 : 0,
    );
    // An escalation's nudge carries every message escalated to its agent that tick: its failure is one per message,
    // each of which was claimed once and is not tried again.
    const failed: NudgeFailure[] = byAgent.flatMap(({ nudge, failures }) =>
      failures.flatMap(({ target, error }) =>
        (nudge.messageIds ?? [undefined]).map((messageId) => ({
          identity: nudge.identity,
          ...(nudge.reason === undefined ? {} : { reason: nudge.reason }),
          ...(messageId === undefined ? {} : { messageId }),
          target,
          error,
        })),
      ),
    );
    const unreadSet = deliveries.filter(({ nudge }) => nudge.reason === undefined);
    const told = ({ outcomes }: DeliveryReport) => Object.values(outcomes).includes('delivered');
    const untold = new Set(unreadSet.filter((delivery) => !told(delivery)).map(({ nudge }) => nudge.identity));
    // Taken by a target, yet told nobody: every target that took it published to no listener (none said 'delivered').
    // A nudge no target serves is 'logged' (and counted done) but was published nowhere: it is loggedOnly, never unheard.
    const loggedOnly = ({ outcomes }: DeliveryReport) => outcomes.log === 'logged';
    const heardByNobody = (delivery: DeliveryReport) => delivery.delivered && !told(delivery) && !loggedOnly(delivery);
    const unheard = unreadSet.filter(heardByNobody).map(({ nudge }) => nudge.identity);
    const listed = report.nudged.filter((identity) => unheard.includes(identity));
    // An escalation's nudge (unwoken, reply-overdue) is said as the unread set's are: its agent under nudged (told),
    // loggedOnly (no target serves it) or unheard (published to no listener), after the unread set's agents (sorted:
    // escalations deliver concurrently), each once. Failures are under `failed`, with the reason.
    const escalations = deliveries.filter((delivery) => delivery.nudge.reason !== undefined);
    const escalated = (outcome: (delivery: DeliveryReport) => boolean, already: readonly string[]): string[] => {
      const more = escalations.filter(outcome).map(({ nudge }) => nudge.identity);
      return [...already, ...[...new Set(more)].filter((identity) => !already.includes(identity)).sort()];
    };
    return {
      ...report,
      nudged: escalated(
        told,
        report.nudged.filter((identity) => !untold.has(identity)),
      ),
      loggedOnly: escalated(loggedOnly, report.loggedOnly),
      unheard: escalated(heardByNobody, listed),
      failed,
    };
  }

  /**
   * Before a lone tick (`mailbox heartbeat --once`): a stall is a checkpoint that stays behind the log head for
   * `stallAfterMs`, which one sample cannot see (a lone tick reported `stalled: false` whatever the views did, so --once
   * never exited 1). While the views lag the log, this watches their checkpoint (every `pollMs`) until it moves, the lag
   * closes, or `stallAfterMs` has passed since the first sample: the tick that follows then tells a stalled projector
   * (alarm, `stalled: true`) from one that moves. Without lag it returns at once.
   */
  async watchPipelineBeforeTick(wait: (ms: number) => Promise<void>, pollMs = 250): Promise<void> {
    const started = this.now();
    const first = await this.watchPipeline(started);
    this.projectorLooked = first.projectorLive ?? null;
    if (first.lag === '0') return;
    const { lag, lagAtLeast, checkpoint, head } = first;
    if (first.projectorLive === false) {
      // Nobody would move the checkpoint: watching it for --stall-after held a cron job a minute for nothing. The
      // alarm projector_absent (exit code 1) already says what is wrong.
      this.lagNotWatched = true;
      this.logger.warn(
        { lag, ...(lagAtLeast ? { lagAtLeast } : {}), checkpoint, head, lagNotWatched: 'projector_absent' },
        `the views are behind the log (lag ${lagText(first)}) and no projector keeps them: their checkpoint was not ` +
          'watched for --stall-after, since nobody would move it (so the report cannot say whether a projector would ' +
          'be stalled: pipeline.lagNotWatched); start the server',
      );
      return;
    }
    this.projectorLooked = null; // the watch takes a while: the tick looks again
    this.logger.info(
      { lag, ...(lagAtLeast ? { lagAtLeast } : {}), checkpoint, head, stallAfterMs: this.settings.stallAfterMs },
      `the views are behind the log (lag ${lagText(first)}): watching their checkpoint for up to ` +
        `${this.settings.stallAfterMs} ms (--stall-after) to tell a stalled projector from a slow one`,
    );
    for (;;) {
      const left = started + this.settings.stallAfterMs - this.now();
      if (left <= 0) return;
      await wait(Math.min(pollMs, left));
      const checkpoint = (await this.sources.projections.checkpoint())?.toString() ?? null;
      if (checkpoint !== first.checkpoint) return; // it moved (or the views were rebuilt): not stalled
    }
  }

  /** Ticks now and then every interval (each tick starts `intervalMs` after the previous one ended). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const run = async () => {
      this.timer = null;
      if (!this.mayTick()) {
        // Another daemon ticks (or none, the store down for all): an outage this one was saying ends with its own line,
        // not with a downMs counting the time it did not tick, whenever it holds the lease and gets an answer again.
        this.outage.stoppedAsking();
        this.viewsBehind.stoppedAsking();
        this.viewsNotOurs.stoppedAsking();
        if (!this.stopped) this.timer = setTimeout(run, this.settings.intervalMs);
        return;
      }
      this.running = this.tick().then(
        () => {
          this.outage.answered();
          this.viewsBehind.answered();
          this.viewsNotOurs.answered();
        },
        (error: unknown) => {
          this.lastError = error instanceof Error ? error.message : String(error);
          this.failingSince ??= this.now();
          this.failedTicks += 1;
          this.metrics.tickFailures.inc();
          // Views that went back answer: said as such, not as a store that does not (and the other way round).
          if (this.goneBack.refused(error)) {
            this.outage.answered();
            this.viewsNotOurs.answered();
            this.viewsBehind.failed(error);
            return;
          }
          if (this.ofThisLog.refused(error)) {
            this.outage.answered();
            this.viewsBehind.answered();
            this.viewsNotOurs.failed(error);
            return;
          }
          // A store that does not answer (a Redis failover) is one warn line, not an error with its stack each tick.
          if (!this.outage.failed(error)) this.logger.error({ err: error }, 'heartbeat tick failed; trying again next interval');
        },
      );
      await this.running;
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(run, this.settings.intervalMs);
    };
    void run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.relook) {
      clearTimeout(this.relook.timer);
      this.relook.end();
    }
    await this.running;
    await this.settled();
    await this.recorder.close();
    await this.wakes.close();
  }

  health() {
    const pipeline = this.lastReport?.pipeline ?? null;
    const stalled = pipeline?.stalled ?? false;
    const alarms: Array<Record<string, unknown>> = [];
    const projectorAbsent = pipeline?.projectorLive === false;
    // With no projector the views stall for that one cause: one alarm, with the lag (it was two, paging twice).
    if (projectorAbsent) {
      const { checkpoint, head, lag, lagAtLeast } = pipeline!;
      alarms.push({ alarm: 'projector_absent', checkpoint, head, lag, ...(lagAtLeast ? { lagAtLeast } : {}) });
    } else if (stalled) {
      const { lag, lagAtLeast, checkpoint, head, stuckForMs } = pipeline!;
      alarms.push({ alarm: 'projection_stalled', lag, ...(lagAtLeast ? { lagAtLeast } : {}), checkpoint, head, stuckForMs });
    }
    // An unhealthy answer names why: a failing tick was said only in lastError, beside an empty alarm list.
    if (this.lastError !== null && this.failingSince !== null) {
      const since = new Date(this.failingSince).toISOString();
      alarms.push({ alarm: 'ticks_failing', error: this.lastError, since, failedTicks: this.failedTicks });
    }
    // Escalations refused for what only an operator mends (their stream deleted under the mailbox): each named, with
    // the remedy; the tick itself went on.
    const refused = [...(this.lastReport?.unwoken.refused ?? []), ...(this.lastReport?.replies.refused ?? [])];
    for (const refusal of refused) alarms.push({ alarm: 'escalation_refused', ...refusal });
    // The delivery ledger's stream refused the wakes its nudges made (deleted under the mailbox): kept, not written.
    const ledger = this.recorder.refusal();
    if (ledger !== null) alarms.push({ alarm: 'wakes_refused', ...ledger });
    return {
      healthy: !stalled && !projectorAbsent && this.lastError === null && refused.length === 0 && ledger === null,
      alarms,
      lastTick: this.lastReport,
      lastError: this.lastError,
    };
  }

  private async watchPipeline(now: number): Promise<PipelineReport> {
    // Head first: an append racing these two reads can then only hide lag for a tick, never invent it.
    const head = await this.sources.eventStore.headPosition();
    const checkpoint = await this.sources.projections.checkpoint();
    const looked = this.projectorLooked;
    this.projectorLooked = null;
    const projectorLive = this.sources.projectorElsewhere ? (looked ?? (await this.projectorKeepsViews())) : undefined;
    const seen = observePipeline(this.pipelineState, { head, checkpoint }, now, this.settings.stallAfterMs);
    this.pipelineState = seen.state;
    this.metrics.head.set(Number(head ?? 0n));
    this.metrics.checkpoint.set(Number(checkpoint ?? 0n));
    // In events, as /readyz counts them: EventStoreDB's positions are byte offsets (one event behind was "lag 807").
    const counted = seen.lag === 0n ? { events: 0, atLeast: false } : await viewsLag(this.sources.eventStore, head, checkpoint);
    this.metrics.lag.set(Number(seen.lag));
    this.metrics.lagEvents.set(counted.events);
    this.metrics.lagEventsAtLeast.set(counted.atLeast ? 1 : 0);
    this.metrics.stalled.set(seen.stalled ? 1 : 0);
    this.metrics.stuckSeconds.set(seen.stuckForMs / 1000);
    const report: PipelineReport = {
      head: head?.toString() ?? null,
      checkpoint: checkpoint?.toString() ?? null,
      lag: counted.events.toString(),
      ...(counted.atLeast ? { lagAtLeast: true as const } : {}),
      stalled: seen.stalled,
      stuckForMs: seen.stuckForMs,
      ...(projectorLive === undefined ? {} : { projectorLive }),
    };
    if (projectorLive !== undefined) this.sayProjector(projectorLive, report);
    // A stall is said while a projector keeps the views (hung, or too slow): with none, ALARM no projector says the
    // cause, and a stall alarm beside it paged twice for one stopped server. Said once the projector is back and the
    // checkpoint still does not move; cleared only if said.
    if (seen.stalled && projectorLive !== false && !this.stallSaid) {
      this.stallSaid = true;
      this.logger.error(
        { alarm: 'projection_stalled', ...report, stallAfterMs: this.settings.stallAfterMs },
        `ALARM projection stalled: the views are ${lagText(report)} behind the log head and their checkpoint is not advancing`,
      );
    } else if (!seen.stalled && this.stallSaid) {
      this.stallSaid = false;
      this.logger.info({ alarm: 'projection_stalled', ...report }, 'alarm cleared: projection checkpoint advancing again');
    }
    return report;
  }

  /**
   * Whether a server's projector keeps the views: its live mark on them. A server that stops cleanly removes the mark
   * that every node of the same log shares, and the others renew it within a second: no mark is looked at once more
   * after RELOOK_MS, so that one node of several restarting is no alarm for a whole interval.
   */
  private async projectorKeepsViews(): Promise<boolean> {
    if ((await this.sources.projections.binding()).liveWriter !== null) return true;
    const relookMs = this.sources.projectorRelookMs ?? PROJECTOR_RELOOK_MS;
    if (relookMs === 0) return false;
    await new Promise<void>((end) => (this.relook = { timer: setTimeout(end, relookMs), end }));
    this.relook = null;
    // Stopping: no second look, and no alarm raised on the way out.
    if (this.closing) return true;
    return (await this.sources.projections.binding()).liveWriter !== null;
  }

  /** Whether a projector keeps the views: said once when none does (at error), and once when one does again. */
  private sayProjector(live: boolean, report: PipelineReport): void {
    this.metrics.projectorLive.set(live ? 1 : 0);
    const was = this.projectorWasLive;
    this.projectorWasLive = live;
    if (!live && was !== false) {
      this.logger.error(
        { alarm: 'projector_absent', checkpoint: report.checkpoint, head: report.head },
        // A server that runs but cannot write the views (the file held by another process, a full disk) renews no mark
        // either: "start the server" alone sent its operator after a server that was running.
        'ALARM no projector keeps the views: no mailbox server has renewed its live mark on them for 5 s: none runs ' +
          '(agents can neither send nor read), one hangs, or one runs but cannot write the views (another process ' +
          'holds the views file, the disk is full: its log says which); what is appended to the log reaches no inbox ' +
          'meanwhile. Start the server, or mend what its log names',
      );
    } else if (live && was === false) {
      this.logger.info(
        { alarm: 'projector_absent', checkpoint: report.checkpoint },
        'alarm cleared: a projector keeps the views again',
      );
    }
  }

  private onDelivered(
    report: DeliveryReport,
    nudgedAt: number,
    previous: NudgeRecord | undefined,
    recordUnder: string | null,
  ): void {
    // A nudge a target delivered woke the agent for its newest unread message (the delivery ledger's `woken`), or, about
    // tasks alone, for the newest waiting task's message: the views keep it as the agent's last nudge either way.
    const via = wakeVia(report);
    if (via !== null && recordUnder !== null) this.recorder.observed(recordUnder, report.nudge.identity, via);
    if (report.delivered) return;
    // No target took it: restore the agent's previous record so that the next tick tries again
    // (unless a newer nudge has replaced this one meanwhile).
    const identity = report.nudge.identity;
    if (this.state.get(identity)?.at === nudgedAt) {
      const next = new Map(this.state);
      if (previous) next.set(identity, previous);
      else next.delete(identity);
      this.state = next;
      // Shared: the next tick reads the shared records, so they must be restored too for the nudge to be retried.
      this.shared?.record(new Map([[identity, previous ?? null]])).catch((error: unknown) => {
        this.logger.warn({ identity, err: error }, 'heartbeat: could not restore the shared nudge record; retried later');
      });
    }
    this.logger.error(
      { identity: report.nudge.identity, nudgeId: report.nudge.nudgeId, outcomes: report.outcomes },
      'nudge reached no target; it will be retried at the next tick',
    );
  }
}

/** "1 event", "2 events", "at least 10001 events": the lag as a person reads it. */
const lagText = ({ lag, lagAtLeast }: PipelineReport) =>
  `${lagAtLeast ? 'at least ' : ''}${lag} event${lag === '1' && !lagAtLeast ? '' : 's'}`;
