/**
 * Blue/green rebuild of the projections: build every view from the log into a
 * new generation while requests keep reading the active one, catch up with
 * the live projector, then switch atomically (the switch only happens when
 * both generations stand at the same checkpoint, so no event is counted twice
 * or missed, and the live projector keeps publishing exactly one wake per
 * delivery). The previous generation is dropped after a grace period.
 */
import { isMailboxError, needsOperator, operatorNeeded } from '../errors';
import type { EventStore } from '../events/eventStore';
import { backoffDelay, sleep, type Backoff, type Sleep } from '../support/retry';
import { projectStored } from './projector';
import {
  GenerationBlocked,
  GenerationGap,
  GenerationLost,
  type ActivationResult,
  type ActiveGeneration,
  type ProjectionGeneration,
  type ProjectionGenerations,
} from './rebuildGenerations';
import type { ViewsBinding } from './projectionStore';
import { ForeignViews, judgeViews } from './viewsOwnership';

export interface RebuildProgress {
  /** 'retrying': a copy failed for now (the views or the log unavailable); it goes on from where the new generation stands. */
  phase: 'building' | 'catching up' | 'switching' | 'switched' | 'retrying';
  events: number;
  position: bigint | null;
  /** The log head when the rebuild started. */
  head: bigint | null;
  /** From 'switched' on: the generation switched away from, and where it stood then (null: it held no views). */
  previous?: PreviousGeneration;
  /** Phase 'retrying': what failed, and when the next try is. */
  retry?: RebuildRetry;
}

export interface RebuildRetry {
  /** Tries since the new generation last moved on (a page went in): 1 = the first wait. */
  attempt: number;
  reason: string;
  delayMs: number;
  /** The rebuild gives up after failing this long in a row (RebuildOptions.outageMs). */
  outageMs: number;
}

export interface PreviousGeneration {
  name: string;
  checkpoint: bigint | null;
}

export interface RebuildOptions {
  onProgress?: (progress: RebuildProgress) => void;
  pageSize?: number;
  /** A live projector behind the new generation gets this long to catch up before the switch happens anyway. */
  settleMs?: number;
  /** After this many catch-ups that the live projector outran, hold it still (at most holdMs) to meet it. */
  chasesBeforeHold?: number;
  holdMs?: number;
  /** Gives up (and drops the new generation) when the switch has not happened after this long. */
  switchTimeoutMs?: number;
  /** The previous generation is deleted this long after the switch (readers cache the active one briefly); null keeps it. */
  dropPreviousAfterMs?: number | null;
  /**
   * Views of another log (or ahead of this log's head) are refused unless this
   * is set; then they are replaced by this log's, switched to without waiting
   * for a live projector, once no projector of the other log is live.
   */
  takeOver?: boolean;
  /**
   * Where the views live and how a mailbox gets views of its own instead (the store's ViewsBinding), for a refusal's
   * words: without it a refusal spoke of "the projection store" and gave the Redis remedy (another
   * MAILBOX_REDIS_NAMESPACE), also to the SQLite views file, which has no namespace.
   */
  views?: ViewsPlace;
  /**
   * Aborted to stop the rebuild (the CLI's SIGINT/SIGTERM): it ends after the batch in progress, its new generation is
   * dropped (an interrupted rebuild left its partial tables in the views file for good), and it rejects with
   * RebuildInterrupted. The active views are untouched. Not once switched: what is left then is the wait to drop the
   * previous generation, which completes.
   */
  signal?: AbortSignal;
  /**
   * How long copying may fail in a row for a transient reason (UNAVAILABLE: Redis unreachable or failing over, a
   * deadline missed under load, the log unavailable) before the rebuild gives up; meanwhile it waits (with backoff,
   * each wait reported as phase 'retrying') and goes on from where the new generation stands. Default 60 s; 0 gives
   * up at the first failure. An UNAVAILABLE that needs an operator (operatorNeeded) ends the rebuild at once.
   */
  outageMs?: number;
  /**
   * Time for the waits between tries and the outage's length, the switch's wait for the live projector (its
   * switchTimeoutMs and settleMs) and the grace before the previous generation is deleted (tests pass one that needs
   * no real time).
   */
  clock?: RebuildClock;
}

export interface RebuildClock {
  now(): number;
  sleep: Sleep;
}

/** Waits between tries of a failed copy: quick at first, at most 5 s apart. */
const COPY_RETRY: Backoff = { initialDelayMs: 200, maxDelayMs: 5000, jitter: 0.2 };

/** A rebuild stopped by its signal before the switch: nothing of it is left, the active views are as they were. */
export class RebuildInterrupted extends Error {
  constructor(
    readonly position: bigint | null,
    readonly head: bigint | null,
    readonly dropped: string,
    readonly active: string,
  ) {
    super(
      `rebuild interrupted at position ${position ?? 'none'} of ${head ?? 'none'}: the active views (${active}) are ` +
        `unchanged, and the partial generation ${dropped} was dropped`,
    );
    this.name = 'RebuildInterrupted';
  }
}

/** ViewsBinding's words on where the views are: location, and elsewhere (absent: another MAILBOX_REDIS_NAMESPACE). */
export type ViewsPlace = Pick<ViewsBinding, 'location' | 'elsewhere'>;

export interface RebuildResult {
  generation: string;
  previous: string;
  /**
   * Where the previous generation stood at the switch; null: it held no views (a first build, or views of an empty
   * log), so nothing of it was deleted or kept that a reader could have seen.
   */
  previousCheckpoint: bigint | null;
  events: number;
  checkpoint: bigint | null;
  /** From the start to the switch: building and catching up (the rate of a rebuild is events / buildMs). */
  buildMs: number;
  /** From the start to the end, the wait before the previous generation is dropped included. */
  ms: number;
  /** True when the live projector was behind (or absent) and the switch did not wait for it. */
  forced: boolean;
  /** The log the views were rebuilt from, and the one they belonged to before (when another: a take-over). */
  logIdentity: string;
  tookOverFrom: string | null;
  /**
   * This log's own views, found standing ahead of its head (the log was replaced by an older copy, or lost events) and
   * replaced (--take-over): where they stood and the head. Not a take-over from another log: tookOverFrom is null then
   * (it named this log as the one taken over from).
   */
  replacedAhead: { checkpoint: bigint; head: bigint | null } | null;
  /** Generations that rebuilds killed outright had left (ProjectionGenerations.leftovers), dropped before this one began. */
  droppedLeftovers: string[];
  /**
   * The previous generation's delete after the grace failed (null: deleted, kept on purpose, or none): why, and whether
   * it is marked to be deleted (ProjectionGenerations.markForDrop: `projections status` lists it, the next rebuild
   * deletes it) or is left for an operator to delete by hand. The switch stands: the rebuilt views are served. It
   * ended the rebuild as a failure, the store's raw error, over views it had switched to.
   */
  previousNotDeleted: PreviousNotDeleted | null;
}

export interface PreviousNotDeleted {
  reason: string;
  markedForDrop: boolean;
}

export async function rebuildProjections(
  log: EventStore,
  generations: ProjectionGenerations,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const {
    onProgress,
    pageSize = 2000,
    settleMs = 2000,
    switchTimeoutMs = 60_000,
    dropPreviousAfterMs = 5000,
    chasesBeforeHold = 3,
    holdMs = 2000,
  } = options;
  const started = Date.now();
  const clock = options.clock ?? { now: () => Date.now(), sleep };
  const logIdentity = await log.logIdentity();
  const before = await generations.active();
  const head = await log.headPosition(); // after the active checkpoint: the head only grows
  const views = options.views ?? { location: 'the projection store' };
  const binding = { ...before, ...views, generation: before.name };
  const verdict = judgeViews(logIdentity, head, binding);
  const foreign = verdict.kind === 'foreign' || verdict.kind === 'ahead';
  if (foreign && !options.takeOver) throw new ForeignViews(binding, logIdentity, verdict);
  if (foreign && before.liveWriter !== null && before.liveWriter !== logIdentity)
    throw new LiveWriterOfAnotherLog(before.liveWriter, views);
  // What rebuilds killed outright left (partial copies of the views that nothing else deletes) goes first.
  const droppedLeftovers = (await generations.leftovers?.()) ?? [];
  for (const name of droppedLeftovers)
    await generations.drop(name).catch((error: unknown) => {
      // Blocked (the views file locked): said as a blocked copy is, nothing built yet. It printed SQLite's words alone.
      if (!(error instanceof GenerationBlocked)) throw error;
      throw blockedFailure(error, { rebuilt: '', previous: before.name, active: before.name, dropped: null });
    });
  // Blocked while it was made (its name '' when not numbered yet): what was made of it carries its building mark, a
  // leftover once that lapses, so the line says nothing of it.
  const generation = await generations.create(logIdentity).catch((error: unknown) => {
    if (!(error instanceof GenerationBlocked)) throw error;
    throw blockedFailure(error, { rebuilt: error.generation, previous: before.name, active: before.name, dropped: null });
  });
  let events = 0;
  let position: bigint | null = null;
  let previous: PreviousGeneration | undefined;
  let switchedTo = false;
  const progress = (phase: RebuildProgress['phase'], retry?: RebuildRetry) =>
    onProgress?.({ phase, events, position, head, ...(previous ? { previous } : {}), ...(retry ? { retry } : {}) });
  const outage = {
    outageMs: options.outageMs ?? 60_000,
    backoff: COPY_RETRY,
    clock,
    onRetry: (retry: RebuildRetry) => progress('retrying', retry),
    views: views.location,
  };
  const copyUntil = async (until: bigint | null, phase: RebuildProgress['phase']) => {
    const copied = (count: number, last: bigint) => {
      events += count;
      position = last;
      progress(phase);
    };
    position = await copy({ log, generation, until, pageSize, signal: options.signal, onPage: copied }, position, outage);
  };

  try {
    // 1. Everything up to the head as it was when the rebuild started.
    progress('building');
    if (head !== null) await copyUntil(head, 'building');
    // 2. Until the switch: follow the live projector's checkpoint, then switch atomically; a take-over has no live projector to meet.
    const outcome = foreign
      ? await switchNow(generations, generation, before, () => progress('switching'))
      : await switchWhenCaughtUp(
          generations,
          generation,
          before,
          { settleMs, switchTimeoutMs, chasesBeforeHold, holdMs, clock },
          (live) => copyUntil(live, 'catching up'),
          () => progress('switching'),
        );
    switchedTo = true;
    previous = { name: outcome.previous, checkpoint: outcome.previousCheckpoint };
    progress('switched');
    const buildMs = Date.now() - started;
    const checkpoint = await generation.checkpoint().catch(() => position);
    const previousNotDeleted =
      dropPreviousAfterMs !== null && outcome.previous !== generation.name
        ? await dropPrevious(generations, outcome.previous, dropPreviousAfterMs, clock)
        : null;
    return {
      generation: generation.name,
      previous: outcome.previous,
      previousCheckpoint: outcome.previousCheckpoint,
      events,
      checkpoint,
      buildMs,
      ms: Date.now() - started,
      forced: outcome.forced,
      logIdentity,
      tookOverFrom: verdict.kind === 'foreign' ? (verdict.owner ?? 'an unknown log') : null,
      replacedAhead: verdict.kind === 'ahead' ? { checkpoint: verdict.checkpoint, head: verdict.head } : null,
      droppedLeftovers,
      previousNotDeleted,
    };
  } catch (error) {
    const active = await generations.active().catch(() => null);
    // Never the generation switched to (a failure after the switch: the previous one's drop), even when the active one
    // could not be read: Redis deletes any generation it is told to, the active one too.
    const dropped =
      !switchedTo &&
      active?.name !== generation.name &&
      (await generations.drop(generation.name).then(
        () => true,
        () => false,
      ));
    if (error === STOPPED) throw new RebuildInterrupted(position, head, generation.name, active?.name ?? before.name);
    const at = { rebuilt: generation.name, previous: before.name, active: active?.name ?? null, dropped };
    if (error instanceof SwitchFailed) throw switchFailure(error, at, views);
    if (error instanceof GenerationBlocked) throw blockedFailure(error, at);
    throw error;
  }
}

/**
 * A take-over refuses while the other log's projector is live on the views: both would write to one set of views.
 * Another MAILBOX_REDIS_NAMESPACE is a remedy only where the views are in Redis (no `elsewhere`, as in ViewsBinding):
 * the SQLite views file lies beside its log, so the other mailbox must be stopped.
 */
export class LiveWriterOfAnotherLog extends Error {
  constructor(
    readonly liveWriter: string,
    views: Partial<ViewsPlace> = {},
  ) {
    super(
      `A projector of another event log (${liveWriter}) is live on these views (it renewed its mark within the last few seconds); ` +
        `refusing to take them over while it runs: stop that mailbox first${
          views.elsewhere === undefined ? ', or use another MAILBOX_REDIS_NAMESPACE for this one' : ''
        }.`,
    );
    this.name = 'LiveWriterOfAnotherLog';
  }
}

/**
 * After the switch: the previous generation marked to be deleted, the grace waited, then deleted. A failed delete is
 * said (RebuildResult.previousNotDeleted), not thrown: the switch stands, and the views served are the rebuilt ones.
 */
async function dropPrevious(
  generations: ProjectionGenerations,
  previous: string,
  graceMs: number,
  clock: RebuildClock,
): Promise<PreviousNotDeleted | null> {
  const markedForDrop =
    generations.markForDrop !== undefined &&
    (await generations.markForDrop(previous, graceMs).then(
      () => true,
      () => false,
    ));
  await clock.sleep(graceMs);
  return generations.drop(previous).then(
    () => null,
    // Blocked (the views file locked): the store's own words, as any other failure's; the warning says what to do.
    (error: unknown) => ({
      reason: reasonOf(error instanceof GenerationBlocked && error.cause !== undefined ? error.cause : error),
      markedForDrop,
    }),
  );
}

/** How a switch went: the generation it left (and where that stood), and whether it met the live projector. */
type Switched = { previous: string; previousCheckpoint: bigint | null; forced: boolean };
const switched = ({ previous, previousCheckpoint }: Omit<Switched, 'forced'>, forced: boolean): Switched => ({
  previous,
  previousCheckpoint,
  forced,
});

/**
 * The switch step did not switch: the store failed it (a Redis deadline), another rebuild
 * switched first ('moved'), or the live projector was never met ('timeout'). The rebuild says it with which views are
 * served (switchFailure): it printed {"error":"Projections command failed","code":"INTERNAL",...} without saying whether
 * the previous views were still served, nor what to do.
 */
class SwitchFailed extends Error {
  /** What to do instead of running the rebuild again at once, when the reason calls for it (a timeout). */
  readonly remedy: string | undefined;

  constructor(
    readonly kind: 'failed' | 'moved' | 'timeout',
    readonly reason: string,
    options?: ErrorOptions & { remedy?: string },
  ) {
    super(reason, options);
    this.name = 'SwitchFailed';
    this.remedy = options?.remedy;
  }
}

/**
 * A call of the switch step; its failure a SwitchFailed, but for what says its own remedy: the generation lost
 * (GenerationLost: the CLI's 'Rebuild lost its views'), an operator's refusal (a damaged views file) and the store
 * blocked (GenerationBlocked: the views file locked by another process, said as when the copy meets it).
 */
const atSwitch = <T>(step: Promise<T>): Promise<T> =>
  step.catch((error: unknown) => {
    if (error instanceof GenerationLost || error instanceof GenerationBlocked || (isMailboxError(error) && needsOperator(error)))
      throw error;
    throw new SwitchFailed('failed', reasonOf(error), { cause: error });
  });

/** Which generations stood where once a switch step failed: `active` null when that could not be read. */
interface AfterSwitch {
  rebuilt: string;
  previous: string;
  active: string | null;
  /** The rebuilt generation was dropped (false: it is active, or its drop failed too; null: it was never made). */
  dropped: boolean | null;
}

/** A failed switch step as an operator reads it: which views are served, what became of the rebuilt ones, what to do. */
function switchFailure(error: SwitchFailed, at: AfterSwitch, views: ViewsPlace): Error {
  const what = `${error.kind === 'failed' ? 'The switch to the rebuilt views failed' : 'The rebuilt views were not switched to'} (${error.reason.replace(/\.$/, '')})`;
  const again =
    error.remedy ??
    `run \`mailbox projections rebuild\` again${error.kind === 'failed' ? ` once ${views.location} can be written` : ''}`;
  const [served, operatorAction] = whatIsServed(at, again);
  return operatorNeeded(`${what}: ${served}.`, operatorAction, {
    generation: at.rebuilt,
    activeGeneration: at.active,
  });
}

/**
 * A rebuild the store blocked before the switch (GenerationBlocked: the views file locked by another process): the
 * store's words of what holds it and what to do, with which views are served and what became of the rebuilt ones.
 */
function blockedFailure(error: GenerationBlocked, at: AfterSwitch): Error {
  const [served, operatorAction] = whatIsServed(at, error.operatorAction);
  return operatorNeeded(`${error.message.replace(/\.$/, '')}. Nothing was switched: ${served}.`, operatorAction, {
    ...error.details,
    ...(at.rebuilt === '' ? {} : { generation: at.rebuilt }),
    activeGeneration: at.active,
  });
}

/** Which views are served once a rebuild failed, what became of its generation, and what to do (`again`, when it is still to do). */
function whatIsServed(at: AfterSwitch, again: string): [served: string, operatorAction: string] {
  const rebuilt =
    at.dropped === null
      ? ''
      : at.dropped
        ? `; the rebuilt generation ${at.rebuilt} was dropped`
        : `; the rebuilt generation ${at.rebuilt} is left (\`mailbox projections status\` lists it once its mark lapses, and the next rebuild drops it)`;
  return at.active === null
    ? [
        `which views are served could not be read${rebuilt}`,
        `run \`mailbox projections status\`: if its activeGeneration is still ${at.previous}, ${again}`,
      ]
    : at.active === at.rebuilt
      ? [
          `the switch went through all the same: the rebuilt views (${at.rebuilt}) are served, and the previous generation ${at.previous} was kept`,
          `nothing to rebuild: the rebuilt views are served (\`mailbox projections status\` shows them)`,
        ]
      : at.active === at.previous
        ? [`the previous views (${at.previous}) are still served, unchanged${rebuilt}`, again]
        : [
            `the views of generation ${at.active} are served (another rebuild switched to them)${rebuilt}`,
            `nothing to rebuild: \`mailbox projections status\` shows the views served`,
          ];
}

/** The generation a switch expects to find active, and where it stood when the rebuild began. */
type Expected = Pick<ActiveGeneration, 'name' | 'checkpoint'>;

/**
 * generations.activate(), where a failure after the switch went through (its answer lost to a Redis deadline) is the
 * switch: the active generation says so. Said as a failure, it left the rebuilt views served and the previous
 * generation never deleted.
 */
async function activate(
  generations: ProjectionGenerations,
  generation: ProjectionGeneration,
  expected: Expected,
  force: boolean,
): Promise<ActivationResult> {
  try {
    return await generations.activate(generation, expected.name, force);
  } catch (error) {
    const active = await generations.active().catch(() => null);
    if (active?.name === generation.name)
      return { outcome: 'switched', previous: expected.name, previousCheckpoint: expected.checkpoint };
    throw error;
  }
}

/** Take-over: the other log's views are not met, only replaced (the expected active generation must still be the one checked). */
async function switchNow(
  generations: ProjectionGenerations,
  generation: ProjectionGeneration,
  expected: Expected,
  switching: () => void,
): Promise<Switched> {
  switching();
  const result = await atSwitch(activate(generations, generation, expected, true));
  if (result.outcome === 'switched') return switched(result, true);
  throw new SwitchFailed(
    'moved',
    `the active views changed meanwhile (${result.outcome === 'moved' ? result.active : 'differ'}); nothing was taken over`,
  );
}

/**
 * How many times a rebuild holds the live projector still, at most (a hold lapsed is taken again, after the live
 * projector moved on). Bounded: a live projector held waits at most 10 s in all within one batch (the stores'
 * MAX_FENCE_WAIT_MS) before its batch fails, and its recipients' wakes wait for as long as it is held.
 */
const MAX_HOLDS = 3;

interface SwitchOptions {
  settleMs: number;
  switchTimeoutMs: number;
  chasesBeforeHold: number;
  holdMs: number;
  clock: RebuildClock;
}

/**
 * Switches once the new generation stands exactly where the live projector
 * does: so every event the live one applied (and woke recipients for) is in
 * the new views, and every later one is applied there by the live projector,
 * with its wake. On a busy log the live projector moves while we catch up, so
 * after a few chases it is held still for the last catch-up and the switch.
 */
async function switchWhenCaughtUp(
  generations: ProjectionGenerations,
  generation: ProjectionGeneration,
  expected: Expected,
  options: SwitchOptions,
  catchUp: (live: bigint) => Promise<void>,
  switching: () => void,
): Promise<Switched> {
  const { clock } = options;
  const deadline = clock.now() + options.switchTimeoutMs;
  const moved = (active: string) => new SwitchFailed('moved', `another rebuild switched the views to ${active} meanwhile`);
  let lastLive: bigint | null | undefined;
  let liveMovedAt = clock.now();
  let chases = 0;
  let holding = false;
  /** Holds taken, and those found lapsed (the live projector moved on while held: the hold's time ran out). */
  const holds = { taken: 0, lapsed: 0, ms: options.holdMs };
  /** Where the live projector stood at the first try after the hold was taken (undefined: not read since). */
  let heldAt: bigint | null | undefined;
  try {
    for (;;) {
      switching();
      const result = await atSwitch(activate(generations, generation, expected, false));
      if (result.outcome === 'switched') return switched(result, false);
      if (result.outcome === 'moved') throw moved(result.active);
      const { live, built } = result;
      if (clock.now() > deadline) throw notMet(options.switchTimeoutMs, live, built, holds);
      if (live !== null && (built === null || live > built)) {
        // Held, it no longer moves: moved on since, its hold lapsed (the catch-up outlasted it). It was never taken
        // again, and the rebuild chased a busy log without it until its time ran out, as if it still held it.
        if (holding && heldAt !== undefined && live !== heldAt) {
          holding = false;
          holds.lapsed++;
        }
        const chased = ++chases > options.chasesBeforeHold;
        if (chased && !holding && holds.taken < MAX_HOLDS) {
          await atSwitch(generations.holdLive(generation, options.holdMs));
          holding = true;
          holds.taken++;
          heldAt = undefined;
          continue; // read the live checkpoint again: it no longer moves
        }
        if (holding) heldAt ??= live;
        await catchUp(live); // the live projector is ahead: copy the events it already has
        continue;
      }
      // The live projector is behind (or absent): give it time to arrive, then switch without it.
      if (live !== lastLive) {
        lastLive = live;
        liveMovedAt = clock.now();
      }
      if (holding || clock.now() - liveMovedAt >= options.settleMs) {
        const forced = await atSwitch(activate(generations, generation, expected, true));
        if (forced.outcome === 'switched') return switched(forced, true);
        if (forced.outcome === 'moved') throw moved(forced.active);
      }
      await clock.sleep(20);
    }
  } finally {
    if (holds.taken > 0) await generations.releaseLive(generation).catch(() => undefined); // a no-op once switched or lapsed
  }
}

/**
 * The live projector (a running mailbox's, writing the active views) was never met within the switch's time: still
 * ahead at each try (events arrived faster than the rebuild copied them, and holding it still did not stop it for
 * long enough), or behind and still moving (catching up on a backlog). Each said as it was, with its remedy: it said
 * 'did not meet the rebuilt views within 60000 ms', and to run the rebuild again, which met the same log.
 */
function notMet(
  timeoutMs: number,
  live: bigint | null,
  built: bigint | null,
  holds: { taken: number; lapsed: number; ms: number },
): SwitchFailed {
  const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
  const time = seconds(timeoutMs);
  const where = `at log position ${live ?? 'none'}, the rebuilt views at ${built ?? 'none'}`;
  const times = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);
  // Said only when a hold lapsed: the line claimed nothing of the holds, and one that lapsed read as one never taken.
  const lapses =
    holds.lapsed !== holds.taken
      ? `when the hold lapsed, ${times(holds.lapsed)}`
      : `${holds.taken === 1 ? 'when' : 'each time'} the hold lapsed`;
  const held =
    holds.lapsed === 0
      ? ''
      : ` (held still ${times(holds.taken)} for ${seconds(holds.ms)} at most${holds.taken === 1 ? '' : ' each'}, it moved on ${lapses})`;
  return live !== null && (built === null || live > built)
    ? new SwitchFailed(
        'timeout',
        `the live projector of the running mailbox was still ahead of them after ${time} of catching up (${where}): ` +
          `events arrived faster than the rebuild copied them${held}`,
        { remedy: 'run `mailbox projections rebuild` again when fewer events arrive' },
      )
    : new SwitchFailed(
        'timeout',
        `the live projector of the running mailbox was still catching up on the log, behind them, after ${time} (${where})`,
        {
          remedy:
            'run `mailbox projections rebuild` again once the running mailbox has caught up (`mailbox projections ' +
            'status` says upToDate)',
        },
      );
}

/** Thrown by copy when the rebuild's signal aborts: the rebuild drops its generation and says RebuildInterrupted. */
const STOPPED = new Error('rebuild stopped by its signal');

/** What a copy takes from the log into the generation: (after, until], pageSize events a page, reported by onPage. */
interface Copying {
  log: EventStore;
  generation: ProjectionGeneration;
  until: bigint | null;
  pageSize: number;
  signal: AbortSignal | undefined;
  onPage: (count: number, last: bigint) => void;
}

/** How copy rides out a transient failure of the views or the log (see RebuildOptions.outageMs). */
interface OutagePolicy {
  outageMs: number;
  backoff: Backoff;
  clock: RebuildClock;
  onRetry: (retry: RebuildRetry) => void;
  /** Where the views are, for the words of giving up. */
  views: string;
}

/**
 * A failure worth waiting out: the store or the log said it is unavailable for now (MailboxError UNAVAILABLE), or a
 * batch was refused because the one before it had failed (GenerationGap). Not an UNAVAILABLE that names an operator's
 * remedy (operatorNeeded: EventStoreDB refusing the mailbox's credentials, a stream deleted for good): no wait mends
 * it, and the rebuild waited a minute before giving up with words that hid the remedy.
 */
const transient = (error: unknown): boolean =>
  (isMailboxError(error) && error.code === 'UNAVAILABLE' && !needsOperator(error)) || error instanceof GenerationGap;
/**
 * An error's own words. By its message, not `instanceof Error`: an error made in another realm is no instance of this
 * one's Error (better-sqlite3's addon, loaded once per process, throws the SqliteError class it was last given, which
 * under jest is another test file's sandbox's), and String() of it added its class name ("SqliteError: database is
 * locked": rebuildViewsChangedCli.int failed so in a whole-suite run, after another file had loaded better-sqlite3).
 */
const reasonOf = (error: unknown): string => {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
};

/** How a run of pages ended: all copied, or a failure, with what is known of the batches in flight. */
type Pages =
  | { ok: true; after: bigint | null }
  /** settled: the last position of the batches confirmed applied; unsettled: the positions of those sent but not confirmed. */
  | { ok: false; error: unknown; settled: bigint | null; unsettled: readonly bigint[] };

/**
 * Copies events in (after, until] into the generation (copyPages), riding out transient failures (a Redis outage or
 * failover, a deadline missed under load): a failed run is resumed from where the new generation stands. That is
 * exact: every apply is atomic with its checkpoint, skips what the checkpoint covers, and names the position it follows
 * (a batch behind one that failed, perhaps never sent, is refused: no hole). Not when the generation lost what it held
 * (a Redis restarted empty): then the rebuild fails (GenerationLost). Found: one apply that missed the 1 s Redis
 * deadline under load ended a rebuild outright and dropped everything it had built.
 */
async function copy(copying: Copying, after: bigint | null, outage: OutagePolicy): Promise<bigint | null> {
  const { generation, signal, onPage } = copying;
  let streak: { since: number; attempts: number } | null = null;
  for (;;) {
    const run = await copyPages(copying, after, (count, last) => {
      streak = null; // a page went in: a later failure starts a new streak
      onPage(count, last);
    });
    if (run.ok) return run.after;
    if (!transient(run.error) || signal?.aborted) throw run.error;
    after = run.settled;
    // Wait, then read where the generation stands (that read may fail too while the outage lasts).
    let stands: bigint | null | undefined;
    while (stands === undefined) {
      const now = outage.clock.now();
      streak ??= { since: now, attempts: 0 };
      const failingMs = now - streak.since;
      if (failingMs >= outage.outageMs) throw gaveUp(run.error, failingMs, after, outage);
      const delayMs = Math.min(backoffDelay(outage.backoff, ++streak.attempts), outage.outageMs - failingMs);
      outage.onRetry({ attempt: streak.attempts, reason: reasonOf(run.error), delayMs, outageMs: outage.outageMs });
      await outage.clock.sleep(delayMs, signal);
      if (signal?.aborted) throw STOPPED;
      try {
        stands = await generation.checkpoint();
      } catch (error) {
        if (!transient(error)) throw error;
      }
    }
    // GenerationLost, as the switch says it (the CLI printed this one as INTERNAL 'Projections command failed').
    if (after !== null && (stands === null || stands < after))
      throw new GenerationLost(
        generation.name,
        `The views being rebuilt lost what they held while ${outage.views} was unavailable (they stood at ${after}, ` +
          `now at ${stands ?? 'nothing'}): run the rebuild again.`,
        { cause: run.error },
      );
    // Batches whose answers were lost may have gone in, in part or whole: what the generation holds is counted now.
    const applied = run.unsettled.filter((p) => stands !== null && p <= stands && (after === null || p > after)).length;
    if (applied > 0) onPage(applied, stands!);
    // The generation moved on since this run's last confirmed page (batches whose answers were lost went in): the copy
    // progresses, so a later failure starts a new streak. Counted as one, rare failures each a step further on added up
    // to the outage budget, and a rebuild that was getting on gave up.
    if (stands !== null && (after === null || stands > after)) streak = null;
    after = stands;
  }
}

/** The rebuild stopped for good (nothing switched): only an operator's run after the outage goes on, so it says so. */
function gaveUp(error: unknown, failingMs: number, after: bigint | null, outage: OutagePolicy): Error {
  return operatorNeeded(
    `The rebuild could not write to ${outage.views} for ${Math.round(failingMs / 1000)} s in a row (last: ${reasonOf(error)}); ` +
      `it stopped after position ${after ?? 'none'}. Run it again once the views are reachable.`,
    `make ${outage.views} reachable, then run \`mailbox projections rebuild\` again`,
    { stoppedAfter: after?.toString() ?? null },
  );
}

/**
 * Copies events in (after, until] into the generation with two pages in
 * flight: the next page is read and projected while Redis applies the
 * previous one. Progress is reported once a page is committed. Stops (STOPPED) at a page boundary once `signal` aborts.
 * A failure ends the run with what is known of the batches in flight (copy decides whether to go on).
 */
async function copyPages(
  { log, generation, until, pageSize, signal }: Copying,
  after: bigint | null,
  onPage: (count: number, last: bigint) => void,
): Promise<Pages> {
  let settled = after;
  /** Batches issued and not yet settled, oldest first: the next page is read and sent while the store applies the last. */
  const pending: Array<{ applied: Promise<void>; positions: bigint[] }> = [];
  const settleOldest = async () => {
    const { applied, positions } = pending[0];
    await applied;
    pending.shift();
    settled = positions[positions.length - 1];
    onPage(positions.length, settled);
  };
  try {
    for (let more = true; more;) {
      if (signal?.aborted) {
        while (pending.length > 0) await settleOldest(); // the batch in progress completes (and is reported) before the generation is dropped
        throw STOPPED;
      }
      const page = await log.readAll(after, pageSize);
      const wanted = until === null ? page : page.filter((event) => event.position <= until);
      if (wanted.length === 0) break;
      const last = wanted[wanted.length - 1].position;
      more = wanted.length === pageSize && (until === null || last < until);
      const positions = wanted.map((event) => event.position);
      const applied = generation.applyBatch(wanted.map(projectStored), after);
      applied.catch(() => undefined); // awaited by settleOldest(), in order
      pending.push({ applied, positions });
      if (pending.length > 1) await settleOldest();
      after = last;
    }
    while (pending.length > 0) await settleOldest();
    return { ok: true, after };
  } catch (error) {
    if (error === STOPPED) throw error;
    return { ok: false, error, settled, unsettled: pending.flatMap(({ positions }) => positions) };
  } finally {
    // Never leave a batch running: one sent behind a batch that failed may still land (the one before it went in, its
    // answer lost), and it must have settled before the run ends: before copy reads where the generation stands and
    // sends again, or the rebuild drops its generation and says it failed.
    await Promise.all(pending.map(({ applied }) => applied.catch(() => undefined)));
  }
}
