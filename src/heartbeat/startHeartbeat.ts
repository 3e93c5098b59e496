/**
 * Starts the heartbeat daemon against any mailbox pipeline: in process
 * (`startHeartbeat(mailbox)`, e.g. from `mailbox serve`) or from the
 * `mailbox heartbeat` command with stores opened from configuration.
 */
import pino, { type Logger } from 'pino';
import type { Clock } from '../application/runtime';
import { HeartbeatDaemon, type HeartbeatSources, type TickReport } from './heartbeatDaemon';
import { HeartbeatMetrics } from './heartbeatMetrics';
import { parseHeartbeatSettings, webhookUrls, type HeartbeatSettings, type HeartbeatSettingsInput } from './heartbeatSettings';
import { startMetricsServer, type MetricsServer } from './metricsServer';
import { NudgeDispatcher } from './nudgeDispatcher';
import { sharedNudges } from './sharedNudges';
import type { NudgeTarget } from './nudgeTarget';
import { targetsFromSettings } from './targets/targetFactory';
import { hookCommandProblem } from './targets/commandHookTarget';
import { StartupError } from '../startupError';
import {
  LeaseKeeper,
  LeaseLoop,
  leaseTiming,
  tookOverFrom,
  tookOverText,
  type Leadership,
  type LeaseStore,
} from '../projections/projectorLease';
import { WakeRecorder } from '../application/wakeRecorder';
import { sleep } from '../support/retry';
import { FETCH_BLOCKED_PORT_REASON, FETCH_BLOCKED_PORTS } from '../support/fetchBlockedPorts';

export interface StartHeartbeatOptions {
  settings?: HeartbeatSettingsInput | HeartbeatSettings;
  /** Targets besides those the settings configure (Redis, webhooks, hook). */
  targets?: NudgeTarget[];
  /** Where the heartbeat logs; default: the sources' logger (a Mailbox's own), else a pino logger at info. */
  logger?: Logger;
  clock?: Clock;
  /** Waits `ms` (real timers by default): the waits of `watchPipelineBeforeTick`, on the clock's time. */
  sleep?: (ms: number) => Promise<void>;
  /** false: no timer; the caller runs `tick()` (tests, `--once`). Default true. */
  schedule?: boolean;
  /**
   * Several daemons on shared views (Redis): the scheduled ticks run only on the holder of this lease, so each idle
   * agent is nudged once. Absent: this daemon is the only one (embedded views). `tick()` called directly ignores it.
   */
  lease?: { store: LeaseStore; node: string; ttlMs: number };
  /** Observed wakes kept while the delivery ledger cannot be written, at most (default 100,000); beyond, dropped and counted. */
  wakeObservationsKept?: number;
}

export interface Heartbeat {
  settings: HeartbeatSettings;
  metrics: HeartbeatMetrics;
  /** The /metrics endpoint's base URL, or null when disabled. */
  metricsUrl: string | null;
  tick(): Promise<TickReport>;
  /**
   * Before a lone tick (--once): while the views lag the log, watches their checkpoint for up to the stall-after
   * setting, so that the tick can tell a stalled projector from a slow one (one sample cannot). At once without lag.
   */
  watchPipelineBeforeTick(): Promise<void>;
  /** Resolves once every nudge dispatched so far was delivered or finally failed, and the wakes they made are in the log. */
  settled(): Promise<void>;
  /** `report` once its nudges settled: delivered (`nudged`), logged only (`loggedOnly`) or failed (`failed`). */
  settledReport(report: TickReport): Promise<TickReport>;
  /** The nudges dispatched and not settled yet (in flight, with their retries, or queued): what stop() waits for. */
  pendingNudges(): number;
  /** The daemon's health; with a lease, `lease` says whether this daemon ticks (leading) or another does (following). */
  health(): ReturnType<HeartbeatDaemon['health']> & { lease?: Leadership };
  stop(): Promise<void>;
}

export async function startHeartbeat(sources: HeartbeatSources, options: StartHeartbeatOptions = {}): Promise<Heartbeat> {
  try {
    return await started(sources, options);
  } catch (error) {
    // A start refused before its targets were taken (settings, a hook that cannot run) closes the targets it was given
    // too, as a metrics port that cannot be listened on did: `mailbox heartbeat` left its nudge publisher open.
    await Promise.all((options.targets ?? []).map((target) => target.close().catch(() => undefined)));
    throw error;
  }
}

async function started(sources: HeartbeatSources, options: StartHeartbeatOptions): Promise<Heartbeat> {
  const settings = parseHeartbeatSettings(options.settings ?? {});
  refuseNudgesThatCannotGo(settings);
  // The mailbox's logger before a new one: a new one logged at info even for createMailbox({ logLevel: 'warn' }).
  const logger = (options.logger ?? sources.logger ?? pino({ name: 'mailbox-heartbeat' })).child({ component: 'heartbeat' });
  const clock = options.clock ?? { now: () => new Date() };
  const metrics = new HeartbeatMetrics();
  const own = targetsFromSettings(settings, logger, metrics);
  const targets = [...own, ...(options.targets ?? [])];
  const dispatcher = new NudgeDispatcher(targets, logger, metrics, settings.deliveryConcurrency);
  // Nudges a target delivered are wakes (the delivery ledger's `woken`): recorded in batches, like the API's.
  const recorder = new WakeRecorder(sources.eventStore, clock, logger, {
    actor: 'system:heartbeat',
    ...(options.wakeObservationsKept !== undefined ? { maxQueued: options.wakeObservationsKept } : {}),
  });
  metrics.recordsDropsOf(recorder);
  const daemon = new HeartbeatDaemon(sources, settings, dispatcher, metrics, logger, () => clock.now().getTime(), recorder);
  let lease: LeaseLoop | null = null;
  // With several daemons, whether this one ticks at all: a follower's /status said only {"healthy":true,"lastTick":null}
  // (or a last tick hours old, from before it lost the lease), which read as a daemon that had stopped ticking.
  const health = () => (lease === null ? daemon.health() : followerHealth(daemon.health(), lease.keeper.leadership()));
  let server: MetricsServer | null = null;
  try {
    if (settings.metricsPort !== null) {
      server = await startMetricsServer(metrics.registry, health, settings.metricsHost, settings.metricsPort);
    }
  } catch (error) {
    await Promise.all(own.map((target) => target.close())); // and those it was given, by startHeartbeat
    throw error;
  }
  const scheduled = options.schedule ?? true;
  const rules = {
    idleMs: settings.idleMs,
    cooldownMs: settings.cooldownMs,
    stallAfterMs: settings.stallAfterMs,
    targets: targets.map((target) => target.name),
    metrics: server?.url ?? null,
  };
  // With no target, every nudge is a line of this log that no agent hears: said once at start, where an operator who
  // forgot the Redis URL or the agents file looks, not only in each nudge's own line.
  if (targets.length === 0) {
    logger.warn(
      { targets: [] },
      'heartbeat: no nudge target is set (--redis-url or MAILBOX_REDIS_URL, a "webhook" in --agents-file, or --hook): ' +
        'each nudge will only be written to this log, and no agent told',
    );
  }
  // Unscheduled (`mailbox heartbeat --once`, tests): ticks only when asked; saying "daemon started" with an interval
  // would claim a schedule that is not there.
  if (scheduled) logger.info({ intervalMs: settings.intervalMs, ...rules }, 'heartbeat daemon started');
  else logger.info(rules, 'heartbeat: ticks on demand only (no schedule)');
  if (options.lease && scheduled) {
    const { store, node, ttlMs } = options.lease;
    // Real time, not the injected clock: the lease expires in Redis's time.
    const keeper = new LeaseKeeper(store, node, leaseTiming(ttlMs), Date.now, {
      lead: (token, previous) =>
        logger.info(
          { node, token: token.toString(), ...tookOverFrom(previous) },
          `heartbeat: this daemon holds the lease and nudges${tookOverText(previous)}`,
        ),
      // Unreachable, the store is most often down for every daemon: none nudges until one takes the lease again.
      stepDown: (reason, { storeUnreachable, vacant }) =>
        logger.warn(
          { node, reason },
          `heartbeat: stepped down (${reason}); ` +
            (storeUnreachable
              ? 'this daemon nudges nobody until it holds the lease again (it tries every ' +
                `${leaseTiming(ttlMs).lookMs} ms; another daemon that reaches the store may take it first)`
              : vacant
                ? `it takes the lease again at its next look (within ${leaseTiming(ttlMs).lookMs} ms), unless another ` +
                  'daemon takes it first'
                : 'another daemon nudges'),
        ),
      follow: (leader) =>
        logger.info(
          { node, leader: leader.node, token: leader.token.toString() },
          `heartbeat: following ${leader.node} (token ${leader.token}), which holds the lease and nudges`,
        ),
      // A daemon that does not hold the lease said nothing while the store was down (the holder's tick failures and
      // step-down said it): its operator could not tell an outage from a quiet follower.
      unreachable: (reason) =>
        logger.warn(
          { node, reason },
          `heartbeat: cannot reach the ${store.name} lease's store (${reason}); this daemon, which does not hold the ` +
            `lease, tries every ${leaseTiming(ttlMs).lookMs} ms and nudges nobody until it holds it`,
        ),
      reachable: () => logger.info({ node }, `heartbeat: the ${store.name} lease's store answers again`),
    });
    lease = new LeaseLoop(keeper);
    daemon.mayTick = () => keeper.leading;
    if (store.records) {
      // What each holder nudged, for the next one: a takeover nudged every unread set the previous holder had nudged.
      daemon.shared = sharedNudges(store.records, () => {
        const held = keeper.leadership();
        return held.role === 'leading' ? { node: held.node, token: BigInt(held.token) } : null;
      });
      daemon.onFenced = async () => keeper.deposed(await store.holder().catch(() => null));
    }
    await lease.start();
  }
  if (scheduled) daemon.start();
  return {
    settings,
    metrics,
    metricsUrl: server?.url ?? null,
    tick: () => daemon.tick(),
    watchPipelineBeforeTick: () => daemon.watchPipelineBeforeTick(options.sleep ?? ((ms) => sleep(ms))),
    settled: async () => {
      await daemon.settled();
      await recorder.flush();
    },
    settledReport: async (report) => {
      const settled = await daemon.settledReport(report);
      await recorder.flush();
      return settled;
    },
    health,
    pendingNudges: () => dispatcher.pending,
    stop: async () => {
      await daemon.stop();
      await lease?.stop();
      await server?.close();
      await Promise.all(targets.map((target) => target.close()));
      logger.info(scheduled ? 'heartbeat daemon stopped' : 'heartbeat: stopped');
    },
  };
}

/**
 * The health of a daemon with a lease. One that follows another daemon (seen holding the lease) does not tick: the
 * failure or stall of the last tick it ran as the holder is no fact of now. /healthz said it, 503, for as long as it
 * followed, while the store answered and the other daemon ticked (an orchestrator's probe restarts a healthy
 * follower). Its lastTick stays on /status. With nobody seen holding the lease (the store down for every daemon, or
 * between two holders) it is said as before.
 */
function followerHealth(health: ReturnType<HeartbeatDaemon['health']>, lease: Leadership) {
  // A follower that cannot reach the lease's store cannot take over from a holder that died: it said healthy, naming
  // the holder its last look found, while Redis was down for every daemon and none nudged.
  if (lease.role === 'following' && lease.storeUnreachableForMs !== undefined)
    return { ...health, healthy: false, lastError: lease.note ?? null, lease };
  if (lease.role !== 'following' || lease.leader === null || lease.leader === lease.node) return { ...health, lease };
  return { ...health, healthy: true, alarms: [], lastError: null, lease };
}

/** Nudges that could never go out (a webhook on a port fetch refuses, a hook that cannot be started): refused at start. */
export function refuseNudgesThatCannotGo(settings: HeartbeatSettings): void {
  refuseWebhooksOnBadPorts(settings);
  refuseHookThatCannotRun(settings);
}

/**
 * A webhook on a port fetch refuses to connect to (support/fetchBlockedPorts.ts: 6667, 10080, ...) was taken: each nudge
 * to it failed at once ("bad port"), after its retries, with nothing sent. Refused at start as serve refuses such a
 * MAILBOX_PORT. The URL is shown as its origin only (no path, no credentials).
 */
function refuseWebhooksOnBadPorts(settings: HeartbeatSettings): void {
  for (const [identity, webhook] of webhookUrls(settings)) {
    const url = new URL(webhook);
    const port = Number(url.port); // '' (the scheme's default, 80 or 443): 0, never a bad port
    if (!FETCH_BLOCKED_PORTS.has(port)) continue;
    throw new StartupError(
      `--agents-file / MAILBOX_HEARTBEAT_AGENTS_FILE: ${identity}'s webhook (${url.protocol}//${url.host}) is not a URL ` +
        `to nudge: port ${port} is ${FETCH_BLOCKED_PORT_REASON}, so every nudge to ${identity} would fail without a ` +
        'connection; give its webhook another port. Nothing was nudged.',
      { variable: 'MAILBOX_HEARTBEAT_AGENTS_FILE', field: `agents.${identity}.webhook` },
    );
  }
}

/**
 * A hook that cannot be started is refused before the first tick. It was taken: every nudge failed at `error`, and each
 * unwoken message's escalation, claimed in the log before its nudges go out, was used up for good (never retried).
 */
function refuseHookThatCannotRun(settings: HeartbeatSettings): void {
  if (settings.hook === undefined) return;
  const command = settings.hook[0];
  const problem = hookCommandProblem(command);
  if (problem === null) return;
  throw new StartupError(
    `--hook / MAILBOX_HEARTBEAT_HOOK: the hook's command '${command}' ${problem}: give the path of an executable file, ` +
      'or a JSON array ["command", "arg", ...] whose command is one (a name without a slash is looked up on PATH). ' +
      'Nothing was nudged.',
    { variable: 'MAILBOX_HEARTBEAT_HOOK', field: 'hook', command },
  );
}
