/**
 * Views built by another version of the read model's rules (readModel/readModelVersion.ts). The SQLite views file
 * rebuilds them at open (its schema row); Redis keeps its views across upgrades, so a mailbox of a newer version
 * found them as they stood, and what its rules compute differently showed only for events applied from then on
 * (audit verify reported the rest as drift). Here such views are rebuilt from the log with this version's rules,
 * beside the ones served (blue/green), and switched to when done: reads keep being answered meanwhile, from views
 * that differ from this version's only where the rules changed.
 *
 * One rebuild at a time: a node that finds a live rebuild building (another node of the same version that started
 * first) leaves it to that one. Two that start at the same moment both build; the second to finish finds the views
 * switched and drops its generation (rebuild.ts: 'moved').
 */
import type { Logger } from 'pino';
import type { EventStore } from '../events/eventStore';
import { READ_MODEL_VERSION } from '../projections/readModel/readModelVersion';
import { rebuildProjections, RebuildInterrupted, type ViewsPlace } from '../projections/rebuild';
import { GenerationLost, type ProjectionGenerations } from '../projections/rebuildGenerations';
import type { RulesRebuild, RulesUnknown } from '../projections/projectionRunner';
import { isMailboxError } from '../errors';
import { backoffDelay, sleep as realSleep, type Backoff, type Sleep } from '../support/retry';

/** How the views' rules version reads in a log line: an unrecorded one is 1, before views recorded theirs. */
export const rulesVersionText = (rules: string | null): string =>
  rules === null ? '1 (recorded by none before version 2)' : rules;

/** What the rebuild reports while it runs: `rebuilding(rebuild)` at its start, `rebuilding(null)` when it is over. */
export interface RulesRebuildWatch {
  now: () => Date;
  rebuilding: (rebuild: RulesRebuild | null) => void;
  /** The rebuild switched the views to `generation`. */
  switched?: (generation: string) => void;
}

/**
 * Starts the rebuild when the active views were built by other rules, and resolves when it is over (switched, left
 * to another node, interrupted by `signal`, or failed: each said in the log). Resolves at once when they are this
 * version's, or the store has no generations.
 */
export async function rebuildViewsOfOtherRules(
  log: EventStore,
  generations: ProjectionGenerations,
  views: ViewsPlace,
  logger: Logger,
  signal: AbortSignal,
  watch?: RulesRebuildWatch,
): Promise<void> {
  const active = await generations.active();
  if (active.rules === READ_MODEL_VERSION) return;
  const details = { location: views.location, generation: active.name, viewsRules: active.rules, rules: READ_MODEL_VERSION };
  const building = (await generations.beingBuilt?.()) ?? [];
  if (building.length > 0) {
    logger.info(
      { ...details, building },
      `projections: the views in ${views.location} were built by the read model's rules of version ` +
        `${rulesVersionText(active.rules)}; a rebuild is building ${building.join(', ')} now: it is left to finish`,
    );
    return;
  }
  logger.warn(
    details,
    `projections: the views in ${views.location} were built by the read model's rules of version ` +
      `${rulesVersionText(active.rules)}, this mailbox's are version ${READ_MODEL_VERSION}: rebuilding them from the ` +
      'log beside the ones served (which answer meanwhile), switching when done',
  );
  // Said by /readyz while it runs (before, only the start's log line said it): the node stays ready, the views of the
  // earlier rules answering meanwhile.
  const viewsRules = active.rules ?? '1';
  watch?.rebuilding({
    viewsRules,
    rules: READ_MODEL_VERSION,
    since: watch.now().toISOString(),
    note:
      `the views are being rebuilt from the log with the read model's rules of version ${READ_MODEL_VERSION}, beside ` +
      `the ones served, which answer meanwhile by the rules of version ${viewsRules} (they differ ` +
      'only where the rules changed); the switch comes when the rebuild has caught up',
  });
  try {
    const result = await rebuildProjections(log, generations, {
      views,
      signal,
      onProgress: ({ phase, retry, position }) => {
        if (phase === 'retrying')
          logger.warn(
            { ...details, ...retry, position: position?.toString() ?? null },
            'projections: the rebuild for the rules could not copy for now; trying again from where it stands',
          );
      },
    });
    watch?.switched?.(result.generation);
    const notDeleted = result.previousNotDeleted;
    // A delete that failed after the switch is said as such (it was logged as the rebuild's failure, 'the views of the
    // earlier rules are still served', over views it had switched to).
    logger[notDeleted === null ? 'info' : 'warn'](
      {
        ...details,
        generation: result.generation,
        previous: result.previous,
        events: result.events,
        ms: result.ms,
        ...(notDeleted === null ? {} : { previousNotDeleted: notDeleted.reason }),
      },
      `projections: rebuilt the views with the rules of version ${READ_MODEL_VERSION} (${result.events} events); ` +
        `generation ${result.generation} is active, ${result.previous} ${
          notDeleted === null
            ? 'was dropped'
            : `could not be dropped (${notDeleted.reason}): ${
                notDeleted.markedForDrop
                  ? 'the next rebuild drops it (`mailbox projections status` lists it in leftoverGenerations)'
                  : 'it stays until deleted (see docs/operators.md)'
              }`
        }`,
    );
  } catch (error) {
    if (error instanceof RebuildInterrupted) {
      logger.info(
        { ...details, dropped: error.dropped },
        `projections: the rebuild for the rules stopped with the mailbox; the next start begins it again`,
      );
      return;
    }
    if (error instanceof GenerationLost) {
      // Redis lost its data while the rebuild ran: the projector rebuilds the served views in place from the log, by
      // this version's rules (it records them so); the half-lost generation was dropped, never switched to.
      const now = await generations.active().catch(() => null);
      const rebuiltInPlace = now?.rules === READ_MODEL_VERSION;
      logger.warn(
        { ...details, lost: error.generation, activeRules: now?.rules ?? null },
        `projections: the views store lost its data while the views were rebuilt for the rules (Redis restarted ` +
          `empty or flushed); generation ${error.generation} was dropped, not switched to. ` +
          (rebuiltInPlace
            ? `The projector rebuilds the served views from the log with the rules of version ${READ_MODEL_VERSION}: no other rebuild is needed`
            : 'The projector rebuilds the served views from the log; the next start looks at their rules again'),
      );
      return;
    }
    logger.error(
      { ...details, err: error },
      'projections: the rebuild for the rules failed; the views of the earlier rules are still served ' +
        '(run `mailbox projections rebuild`, or restart to try again)',
    );
  } finally {
    watch?.rebuilding(null);
  }
}

/** Looks again after 1 s, 2 s, 4 s ... up to a minute between looks. */
export const RULES_LOOK_BACKOFF: Backoff = { initialDelayMs: 1_000, maxDelayMs: 60_000 };

export interface RulesLook {
  /** One look (and the rebuild it starts): rebuildViewsOfOtherRules. Rejects when the look itself failed. */
  look: () => Promise<void>;
  logger: Logger;
  signal: AbortSignal;
  now: () => Date;
  /** Said by /readyz while the look fails (null once it was answered). */
  unknown: (unknown: RulesUnknown | null) => void;
  sleep?: Sleep;
  backoff?: Backoff;
}

/**
 * Looks at which rules built the views until it is told, with backoff (RULES_LOOK_BACKOFF), while the views are served
 * as they are. A look that failed (the store did not answer it) was said with a whole stack and 'the next start looks
 * again', and nothing looked again until a restart: views of an earlier version's rules were served for good, unsaid.
 * Now the first failure is one warn line naming when it looks again, the next ones debug lines, /readyz says it
 * (projections.rulesUnknown), and one info line says when a look was answered.
 */
export async function lookAtRulesUntilTold({
  look,
  logger,
  signal,
  now,
  unknown,
  sleep = realSleep,
  backoff = RULES_LOOK_BACKOFF,
}: RulesLook): Promise<void> {
  let failing: { since: Date; looks: number } | null = null;
  for (;;) {
    try {
      await look();
    } catch (error) {
      if (signal.aborted) return;
      failing ??= { since: now(), looks: 0 };
      failing.looks += 1;
      const delayMs = backoffDelay(backoff, failing.looks);
      const lastError = error instanceof Error ? error.message : String(error);
      const nextLookAt = new Date(now().getTime() + delayMs).toISOString();
      unknown({
        since: failing.since.toISOString(),
        lastError,
        nextLookAt,
        note:
          'could not tell which rules built the views: they are served as they are (if an earlier version built them, ' +
          "its answers differ where the rules changed); looked at again with backoff, rebuilt if they are not this version's",
      });
      // A store that did not answer is no bug: its reason, no stack. Anything else keeps its stack.
      const reason = isMailboxError(error) ? { reason: lastError } : { reason: lastError, err: error };
      if (failing.looks === 1)
        logger.warn(
          { ...reason, nextLookMs: delayMs },
          `projections: could not tell which rules built the views (${lastError}); they are served as they are ` +
            `meanwhile; looking again in ${Math.round(delayMs / 100) / 10} s (then less and less often, up to every ` +
            `${Math.round(backoff.maxDelayMs / 1000)} s)`,
        );
      else
        logger.debug(
          { reason: lastError, looks: failing.looks, nextLookMs: delayMs },
          'projections: still could not tell which rules built the views',
        );
      await sleep(delayMs, signal);
      if (signal.aborted) return;
      continue;
    }
    unknown(null);
    if (failing)
      logger.info(
        { looks: failing.looks + 1, unknownForMs: now().getTime() - failing.since.getTime() },
        'projections: told which rules built the views at last (what was done about them is said above)',
      );
    return;
  }
}
