/**
 * `mailbox projections rebuild | status | drop` for the shared views: Redis (MAILBOX_REDIS_URL) or the SQLite views file.
 * rebuild: every view rebuilt from the log into a new generation while requests
 * keep reading the active one, then an atomic switch (blue/green). Progress is a
 * bar when stdout is a terminal, plain lines otherwise (logs, CI).
 */
import type * as CliProgress from 'cli-progress';
import { Option, type Command } from 'commander';
import type * as Pino from 'pino';
import { z } from 'zod';
import type * as CompositionRoot from '../../compositionRoot';
import { parseInput } from '../../commands/validation';
import type { MailboxConfig } from '../../config';
import { isMailboxError, MailboxError, operatorNeeded } from '../../errors';
import {
  LiveWriterOfAnotherLog,
  rebuildProjections,
  RebuildInterrupted,
  type PreviousGeneration,
  type RebuildClock,
  type RebuildProgress,
  type RebuildResult,
} from '../../projections/rebuild';
import { READ_MODEL_VERSION } from '../../projections/readModel/readModelVersion';
import { rulesVersionText } from '../../application/olderRules';
import { GenerationBlocked, GenerationLost, type ActiveGeneration } from '../../projections/rebuildGenerations';
import { aheadOfThisLog, ForeignViews } from '../../projections/viewsOwnership';
import { fromDecimalText } from '../../support/decimalText';
import { durationMeantMs } from '../../support/duration';
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from '../../support/timerLimit';
import { commandConfig, readingFailure, reportCommandFailure, toolLogLevel } from './commandConfig';
import { logUnknownVariables } from './envWarnings';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded when a command runs: --help and a usage error do not */
/** The stores (the composition root), the logger and the progress bar. */
const root = () => require('../../compositionRoot') as typeof CompositionRoot;
const loadPino = () => (require('pino') as typeof Pino).pino;
const loadCliProgress = () => require('cli-progress') as typeof CliProgress;
/* eslint-enable @typescript-eslint/no-require-imports */

export interface ProjectionsIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The rebuild's time for its waits (RebuildOptions.clock: tests pass one that needs no real time); absent: the real one. */
  clock?: RebuildClock;
}

const processIo: ProjectionsIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

/**
 * A flag's milliseconds, in plain decimal digits (z.coerce.number() read --grace-ms 0x10 as 16 and 1e3 as 1000). Keyed
 * by the option as typed, so that the error names '--grace-ms', not 'graceMs'.
 */
const milliseconds = (flag: string, fallback: number, max?: number) => {
  const teaches = `takes a whole number of milliseconds${max === undefined ? '' : ` up to ${max}`} (e.g. ${flag} ${fallback})`;
  const ms = z.number({ error: teaches }).int({ error: teaches }).min(0, { error: teaches });
  // --grace-ms 2s: ": did you mean 2000?" (the number the duration stands for), never taken for it.
  const checked = max === undefined ? ms : ms.max(max, { error: `must be ${MAX_TIMER_TEXT}` });
  return fromDecimalText(checked, { teaches, meant: durationMeantMs }).default(fallback);
};

/** Rebuild's defaults: its schema's and its --help's (as numbers: given as text, commander showed them quoted). */
const GRACE_MS = 5000;
const SETTLE_MS = 2000;

const rebuildFlagsSchema = z.strictObject({
  keepPrevious: z.boolean().optional(),
  // The grace becomes a timer: beyond the longest one Node keeps it would fire at once and delete the previous views.
  '--grace-ms': milliseconds('--grace-ms', GRACE_MS, MAX_TIMER_MS),
  '--settle-ms': milliseconds('--settle-ms', SETTLE_MS),
  takeOver: z.boolean().optional(),
  progress: z.boolean().optional(),
});

/** MAILBOX_VIEWS=memory: the default is the file; on EventStoreDB the default is memory, and the file must be asked for. */
const viewsFileRemedy = (config: MailboxConfig): string =>
  config.views === 'memory'
    ? `${root().sqliteViewsRemedy(config)}, the default`
    : `${root().sqliteViewsRemedy(config)}: on EventStoreDB the views are in memory unless it is set`;

/** Logs go to stderr (stdout carries the command's output), at warn unless MAILBOX_LOG_LEVEL says otherwise. */
const toolLogger = (io: ProjectionsIo) => {
  const pino = loadPino();
  return pino({ level: toolLogLevel(io.env), name: 'mailbox-projections' }, pino.destination({ dest: 2, sync: true }));
};

function viewsConfig(io: ProjectionsIo): MailboxConfig {
  const config = commandConfig(io.env); // a bad value: serve's words for it, as VALIDATION_FAILED
  // The log first: a memory log (out of reach of this process, always empty here) is refused whatever the views, so
  // that a rebuild never replaces a server's Redis views with those of an empty log.
  root().requireExistingLog(config);
  if (config.redisUrl === undefined && root().sqliteViewsFile(config) === null) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `mailbox projections needs views outside the server: the SQLite views file (${viewsFileRemedy(config)}) or ` +
        'Redis (MAILBOX_REDIS_URL=redis://host:6379); in-memory views live inside the server and are rebuilt from the log at every start.',
      { field: config.views === 'memory' ? 'MAILBOX_VIEWS' : 'MAILBOX_REDIS_URL' },
    );
  }
  return config;
}

/**
 * Where the copy is against the head the rebuild started from. Past it (sends went on while it caught up), it says
 * so: "position 1890 of 1858" read as a miscount.
 */
function whereInLog(p: RebuildProgress): string {
  const position = p.position ?? '-';
  if (p.head !== null && p.position !== null && p.position > p.head)
    return `position ${position}, ${p.position - p.head} past the head of ${p.head} when the rebuild began`;
  return `position ${position} of ${p.head ?? '-'}`;
}

/** A copy that failed for now: what failed, and when the rebuild tries again (RebuildOptions.outageMs). */
export function retryLine(p: RebuildProgress): string {
  const retry = p.retry!;
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  return (
    `rebuild: could not copy at ${whereInLog(p)} (${retry.reason}); trying again in ${seconds(retry.delayMs)} ` +
    `(try ${retry.attempt}; gives up after ${seconds(retry.outageMs)} of failures in a row)`
  );
}

/**
 * A bar on a terminal; otherwise one line per 10% and per phase, and one per retry. `shown` false (`--no-progress`):
 * neither, only the retries (a rebuild that waits says why).
 */
export function progressReporter(stdout: ProjectionsIo['stdout'], shown = true) {
  if (!shown) {
    return {
      update(p: RebuildProgress) {
        if (p.phase === 'retrying') stdout.write(`${retryLine(p)}\n`);
      },
      stop: () => undefined,
    };
  }
  const percent = (p: RebuildProgress) =>
    p.head === null || p.head === 0n ? 100 : Math.min(100, Math.floor((Number(p.position ?? 0n) / Number(p.head)) * 100));
  if (stdout.isTTY) {
    const cliProgress = loadCliProgress();
    const bar = new cliProgress.SingleBar(
      {
        format: 'rebuild |{bar}| {percentage}% | {events} events | {phase}',
        stream: stdout as NodeJS.WriteStream,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(p: RebuildProgress) {
        const phase = p.phase === 'retrying' ? retryLine(p).replace(/^rebuild: /, '') : p.phase;
        if (!started) bar.start(100, percent(p), { events: p.events, phase });
        else bar.update(percent(p), { events: p.events, phase });
        started = true;
      },
      stop: () => bar.stop(),
    };
  }
  let lastLine = '';
  return {
    update(p: RebuildProgress) {
      if (p.phase === 'retrying') {
        stdout.write(`${retryLine(p)}\n`);
        lastLine = '';
        return;
      }
      const step = p.phase === 'building' ? Math.floor(percent(p) / 10) * 10 : percent(p);
      const line = `rebuild: ${p.phase} ${step}% (${p.events} events, ${whereInLog(p)})`;
      if (line.replace(/\(.*\)/, '') !== lastLine.replace(/\(.*\)/, '')) stdout.write(`${line}\n`);
      lastLine = line;
    },
    stop: () => undefined,
  };
}

/**
 * What became of the previous generation, as it was: one that held no views (a first build, or views of an empty log)
 * is not said to be "deleted" or "kept", which read as if views were thrown away or are still there to go back to.
 * Its empty generation is still cleared away after the grace (a reader may be on it until then).
 */
function previousFate(previous: PreviousGeneration, graceMs: number | null, notDeleted: boolean): string {
  if (notDeleted)
    return `previous generation ${previous.name} could not be deleted (the warning line on stderr says why and what to do)`;
  if (previous.checkpoint === null) {
    return graceMs === null
      ? `previous generation ${previous.name} held no views: nothing to keep`
      : `previous generation ${previous.name} held no views: nothing to delete (the empty generation was cleared away after the ${graceMs} ms grace)`;
  }
  return `previous generation ${previous.name} ${graceMs === null ? 'kept' : `deleted after the ${graceMs} ms grace`}`;
}

/** The switch line's word on the previous generation (said before the grace is waited). */
function switchedNote(previous: PreviousGeneration | undefined, graceMs: number | null): string {
  if (graceMs === null) return '';
  if (previous?.checkpoint === null)
    return `; the previous one held no views (its empty generation is cleared away in ${graceMs} ms)`;
  return `; the previous one is deleted in ${graceMs} ms`;
}

/**
 * What a take-over did, in the words of where the views are: a Redis namespace is taken over; the SQLite views file
 * has no namespace (it lies beside its log): its active generation, the other log's views, was replaced by this log's.
 * Views of this log that stood ahead of its head were taken over from no other log: said as what they were (the
 * line named this log's own id as the log the views were taken over from).
 */
function tookOver(config: MailboxConfig, result: RebuildResult): string {
  const sqlite = config.redisUrl === undefined;
  if (result.replacedAhead !== null) {
    const stood = `stood ${aheadOfThisLog(result.replacedAhead, result.logIdentity)}`;
    return sqlite
      ? `replaced views ahead of this log's head: the active generation ${result.previous} of the SQLite views file ` +
          `${root().sqliteViewsFile(config)} ${stood}, and was replaced by ${result.generation}, built from this log`
      : `replaced views ahead of this log's head: the views in Redis namespace '${config.redisNamespace}' ${stood}, ` +
          `and were replaced by ${result.generation}, built from this log`;
  }
  if (!sqlite) return `took the namespace over from log ${result.tookOverFrom}`;
  return (
    `took over the SQLite views file ${root().sqliteViewsFile(config)} from log ${result.tookOverFrom}: its active generation ` +
    `${result.previous} (views of log ${result.tookOverFrom}) was replaced by ${result.generation}, built from this log ` +
    `(${result.logIdentity})`
  );
}

/** The rebuild's word on the generations that rebuilds killed outright had left (dropped before it began). */
function leftoversDropped(result: RebuildResult): string {
  const names = result.droppedLeftovers;
  if (names.length === 0) return '';
  return (
    `; dropped ${names.join(', ')}: ${names.length === 1 ? 'a generation' : 'generations'} left by a rebuild killed ` +
    'before it finished, or switched away from and not deleted'
  );
}

/**
 * The previous generation could not be deleted after the switch (RebuildResult.previousNotDeleted): one line on stderr,
 * as JSON as the command's other lines there, saying that the switch stands (the rebuilt views are served), why the
 * delete failed and how the previous generation goes: marked, the next rebuild deletes it; not marked, by hand. Exit
 * code 0: the views are right. It printed the store's raw error as the rebuild's failure, exit code 2.
 */
function previousNotDeletedWarning(config: MailboxConfig, result: RebuildResult, graceMs: number): string {
  const { previous, generation } = result;
  const { reason, markedForDrop } = result.previousNotDeleted!;
  const sqlite = config.redisUrl === undefined;
  const where = sqlite ? `the SQLite views file ${root().sqliteViewsFile(config)}` : `Redis namespace '${config.redisNamespace}'`;
  const byHand = `delete it with \`mailbox projections drop ${previous}\` once ${sqlite ? 'the views file can be written' : 'Redis takes writes'}`;
  const warning = {
    warning: 'Previous generation not deleted',
    message:
      `The switch went through: the rebuilt views (${generation}) are served. The previous generation ${previous} ` +
      `could not be deleted after the ${graceMs} ms grace (${reason.replace(/\.$/, '')}); it stays in ${where} until deleted.`,
    operatorAction: markedForDrop
      ? `nothing to rebuild now: \`mailbox projections status\` lists ${previous} in leftoverGenerations, and the next ` +
        `\`mailbox projections rebuild\` deletes it before it builds`
      : `nothing to rebuild; ${byHand}`,
    generation,
    previousGeneration: previous,
  };
  return `${JSON.stringify(warning)}\n`;
}

export async function runRebuild(rawFlags: Record<string, unknown>, io: ProjectionsIo = processIo): Promise<number> {
  const { graceMs, settleMs, ...others } = rawFlags;
  const {
    '--grace-ms': graceMsGiven,
    '--settle-ms': settleMsGiven,
    ...flags
  } = parseInput(rebuildFlagsSchema, { ...others, '--grace-ms': graceMs, '--settle-ms': settleMs }, 'projections rebuild');
  const logger = toolLogger(io);
  logUnknownVariables(io.env, logger); // first: a misspelled MAILBOX_DATA_DIR is said beside 'no event log'
  const config = viewsConfig(io);
  const { log, generations, views, close } = await root().openProjectionMaintenance(config, logger, { rebuildOtherSchema: true });
  const progress = progressReporter(io.stdout, flags.progress !== false);
  // Ctrl-C or SIGTERM: stop after the batch in progress and drop the partial generation (killed outright, a rebuild
  // left its tables in the views file for good, one more set per interrupted run). A second signal exits at once.
  const stop = new AbortController();
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled !== null) process.exit(signal === 'SIGINT' ? 130 : 143);
    signalled = signal;
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const grace = flags.keepPrevious ? null : graceMsGiven;
    const result = await rebuildProjections(log, generations, {
      signal: stop.signal,
      settleMs: settleMsGiven,
      dropPreviousAfterMs: grace,
      takeOver: flags.takeOver ?? false,
      views,
      clock: io.clock,
      onProgress: (p) => {
        progress.update(p);
        if (p.phase === 'switched') {
          progress.stop();
          io.stdout.write(`switched the active views to the rebuilt generation${switchedNote(p.previous, grace)}\n`);
        }
      },
    });
    io.stdout.write(
      `rebuilt ${result.events} events into ${result.generation} in ${result.buildMs} ms ` +
        `(${Math.round((result.events / Math.max(result.buildMs, 1)) * 1000)} events/s); ` +
        `${previousFate({ name: result.previous, checkpoint: result.previousCheckpoint }, grace, result.previousNotDeleted !== null)}${leftoversDropped(result)}${
          result.tookOverFrom !== null || result.replacedAhead !== null
            ? `; ${tookOver(config, result)}`
            : result.forced
              ? '; no live projector was following, switched without it'
              : ''
        }\n`,
    );
    if (result.previousNotDeleted !== null) io.stderr.write(previousNotDeletedWarning(config, result, grace ?? 0));
    return 0;
  } catch (error) {
    if (!(error instanceof RebuildInterrupted)) throw error;
    progress.stop();
    io.stdout.write(`${error.message} (${signalled})\n`);
    return signalled === 'SIGINT' ? 130 : 143;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.stop();
    await close();
  }
}

/**
 * What status says, and no more. With no views (no views file, or views that hold nothing and belong to no log: never
 * built), viewsBuilt is false, upToDate false and viewsOfThisLog null, with a note saying who builds them: before,
 * such views read as another log's (viewsOfThisLog: false) and, on an empty log, as up to date. Views of another log
 * are never up to date with this one, whatever their checkpoint.
 */
function statusOf(
  config: MailboxConfig,
  active: ActiveGeneration | null,
  head: bigint | null,
  logIdentity: string,
  leftovers?: string[],
  kept?: string[],
): Record<string, unknown> {
  const sqlite = config.redisUrl === undefined;
  const where = sqlite ? { file: root().sqliteViewsFile(config) } : { namespace: config.redisNamespace };
  // No checkpoint and no log: judgeViews's 'unclaimed', views nobody built (a projector claims them at its start).
  const built = active !== null && (active.checkpoint !== null || active.logIdentity !== null);
  const ofThisLog = built ? active.logIdentity === logIdentity : null;
  // This log's views past its head (a backup restored beside the newer log's views): neither up to date nor behind.
  const ahead =
    ofThisLog === true && active?.checkpoint != null && (head === null || active.checkpoint > head)
      ? { checkpoint: active.checkpoint, head }
      : null;
  const holdsNone =
    active === null ? 'there is no views file' : `the ${sqlite ? 'views file' : 'namespace'} holds none, of any log`;
  // A log with events and no views file beside it is also the log of a server whose views are elsewhere: run without
  // its MAILBOX_REDIS_URL, status said only "no views yet" of a server serving its views from Redis.
  const elsewhere =
    sqlite && active === null && head !== null
      ? ', unless it keeps them elsewhere: in Redis (give this command the MAILBOX_REDIS_URL the server has) or in its ' +
        'memory (MAILBOX_VIEWS=memory: no views file is kept)'
      : '';
  return {
    ...where,
    viewsBuilt: built,
    activeGeneration: active?.name ?? null,
    checkpoint: active?.checkpoint?.toString() ?? null,
    logHead: head?.toString() ?? null,
    upToDate: ofThisLog === true && active?.checkpoint === head,
    viewsLogIdentity: active?.logIdentity ?? null,
    logIdentity,
    viewsOfThisLog: ofThisLog,
    liveWriter: active?.liveWriter ?? null,
    // Partial generations that rebuilds killed outright left in the views file (said when there are): the next rebuild drops them.
    ...(leftovers !== undefined && leftovers.length > 0 ? { leftoverGenerations: leftovers } : {}),
    // Generations kept on purpose (rebuild --keep-previous, a take-over at start): said, they were listed nowhere.
    ...(kept !== undefined && kept.length > 0 ? { keptGenerations: kept } : {}),
    ...(built
      ? {}
      : {
          note: `no views yet: ${holdsNone}; the server (mailbox serve) builds them from the log at its next start${elsewhere}`,
        }),
    ...(ahead ? { note: aheadNote(sqlite, ahead, logIdentity) } : {}),
    ...(built && active.rules !== READ_MODEL_VERSION ? otherRules(active.rules) : {}),
  };
}

/** Views built by another version's rules (Redis keeps them across upgrades): said, with who rebuilds them. */
function otherRules(rules: string | null): Record<string, string> {
  return {
    viewsRules: rules ?? '1',
    rules: READ_MODEL_VERSION,
    rulesNote:
      `the views were built by the read model's rules of version ${rulesVersionText(rules)}; this version's are ` +
      `${READ_MODEL_VERSION}: mailbox serve of this version rebuilds them at its start (beside the ones served), or ` +
      'run `mailbox projections rebuild`',
  };
}

/**
 * Views of this log standing ahead of its head read as views catching up (upToDate false, exit 0, no word), where
 * the server refuses to start on them and audit verify to compare them: said, with the server's remedy.
 */
function aheadNote(sqlite: boolean, ahead: { checkpoint: bigint; head: bigint | null }, logIdentity: string): string {
  const elsewhere = sqlite
    ? 'move the views file away (it is then rebuilt from this log at start)'
    : 'use another MAILBOX_REDIS_NAMESPACE for this mailbox';
  return (
    `the views stand ${aheadOfThisLog(ahead, logIdentity)}: the log was replaced or lost events (a backup restored ` +
    `beside the views of the newer log?). The server refuses to start on them, and audit verify to compare them: ` +
    `${elsewhere}, or replace them with this log's (\`mailbox projections rebuild --take-over\`).`
  );
}

export async function runStatus(io: ProjectionsIo = processIo): Promise<number> {
  const logger = toolLogger(io);
  logUnknownVariables(io.env, logger); // first: a misspelled MAILBOX_DATA_DIR is said beside 'no event log'
  const config = viewsConfig(io);
  const write = (status: Record<string, unknown>) => io.stdout.write(`${JSON.stringify(status)}\n`);
  if (root().missingSqliteViewsFile(config) !== null) {
    // A reader leaves the data dir as it found it: the log is read, the views file is not opened (that would create it).
    const log = await root().openEventLog(config, logger);
    try {
      write(statusOf(config, null, await log.headPosition(), await log.logIdentity()));
      return 0;
    } finally {
      await log.close();
    }
  }
  const { log, generations, close } = await root().openProjectionMaintenance(config, logger, { rebuildOtherSchema: false });
  try {
    const active = await generations.active();
    const head = await log.headPosition(); // after the active checkpoint: the head only grows
    const leftovers = await generations.leftovers?.();
    const kept = (await generations.droppable?.())?.filter((name) => !(leftovers ?? []).includes(name));
    write(statusOf(config, active, head, await log.logIdentity(), leftovers, kept));
    return 0;
  } finally {
    await close();
  }
}

/**
 * `mailbox projections drop <generation>`: deletes one generation that nothing else deletes (kept by --keep-previous or
 * a take-over at start, or a leftover), to free its space. Never the active one, one a rebuild is building, nor one a
 * rebuild deletes after its grace: each refused in one line saying why, with the generations it can drop. Before it,
 * a kept generation of the SQLite views file stayed for good: no command deleted it, and the only way to be rid of it
 * was to stop the mailbox and move the views file away (the views then rebuilt from the whole log at the next start).
 * No generation named (`mailbox projections drop`): a usage error (exit code 2) saying the form and the generations it
 * can drop, as a wrong name is; commander's "missing required argument 'generation'" named neither.
 */
export async function runDrop(generation: string | undefined, io: ProjectionsIo = processIo): Promise<number> {
  const logger = toolLogger(io);
  logUnknownVariables(io.env, logger);
  const config = unnamedWithoutLog(generation, () => viewsConfig(io));
  const sqlite = config.redisUrl === undefined;
  const where = sqlite ? `the SQLite views file ${root().sqliteViewsFile(config)}` : `Redis namespace '${config.redisNamespace}'`;
  if (root().missingSqliteViewsFile(config) !== null)
    throw generation === undefined
      ? unnamed(`there is no views file (${root().sqliteViewsFile(config)}): no generation to drop`)
      : new MailboxError(
          'NOT_FOUND',
          'No such generation',
          `There is no views file (${root().sqliteViewsFile(config)}): no generation to drop.`,
          { generation },
        );
  const { generations, close } = await root().openProjectionMaintenance(config, logger, { rebuildOtherSchema: false });
  try {
    if (generations.droppable === undefined) {
      throw new MailboxError(
        'VALIDATION_FAILED',
        'Generation not dropped',
        `mailbox projections drop deletes generations of the SQLite views file; in ${where} delete one by hand: ` +
          `redis-cli --scan --pattern '${generation ?? '<generation>'}*' | xargs redis-cli unlink (never the active one: \`mailbox projections status\` names it).`,
        generation === undefined ? {} : { generation },
      );
    }
    const active = await generations.active();
    const droppable = await generations.droppable();
    const others = droppable.length === 0 ? 'it holds no other generation to drop' : `it can drop ${droppable.join(', ')}`;
    if (generation === undefined)
      throw unnamed(`in ${where}, besides the active one (${active.name}), ${others}`, {
        activeGeneration: active.name,
        droppable,
      });
    if (generation === active.name)
      throw new MailboxError(
        'VALIDATION_FAILED',
        'Generation not dropped',
        `Generation ${generation} is the active one, the views served: it is never dropped (\`mailbox projections ` +
          `rebuild\` replaces it with a new one); ${others}. Nothing was changed.`,
        { generation, activeGeneration: active.name, droppable },
      );
    if (((await generations.beingBuilt?.()) ?? []).includes(generation))
      throw new MailboxError(
        'VALIDATION_FAILED',
        'Generation not dropped',
        `Generation ${generation} is being built by a rebuild running now: stop that rebuild (Ctrl-C: it drops its ` +
          `generation itself) rather than drop it under it; ${others}. Nothing was changed.`,
        { generation, activeGeneration: active.name, droppable },
      );
    if (!droppable.includes(generation))
      throw new MailboxError(
        'NOT_FOUND',
        'No such generation',
        `${where.replace(/^t/, 'T')} holds no generation '${generation}' to drop (a rebuild that switched away from one deletes it ` +
          `itself after its grace); besides the active one (${active.name}), ${others}. Nothing was changed.`,
        { generation, activeGeneration: active.name, droppable },
      );
    await generations.drop(generation).catch((error: unknown) => {
      // The views file locked by another process: the rebuild's words for it, said of this command.
      if (!(error instanceof GenerationBlocked)) throw error;
      throw operatorNeeded(
        `${error.message.replace('the rebuild waited', 'it waited')} Nothing was dropped: the views file is as it was.`,
        error.operatorAction.replace('`mailbox projections rebuild`', `\`mailbox projections drop ${generation}\``),
        { ...error.details, generation },
      );
    });
    io.stdout.write(`dropped generation ${generation} from ${where}; the active views (${active.name}) are unchanged\n`);
    return 0;
  } finally {
    await close();
  }
}

/** `mailbox projections drop` with no generation: the form, and what it can drop (`said`); nothing changed. */
const unnamed = (said: string, details: Record<string, unknown> = {}) =>
  new MailboxError(
    'VALIDATION_FAILED',
    'No generation named',
    `Name the generation to drop: \`mailbox projections drop <generation>\`; ${said}. Nothing was changed.`,
    details,
  );

/** No generation named and no event log: still the usage error (exit code 2), with the log's words for its absence. */
function unnamedWithoutLog<T>(generation: string | undefined, open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (generation !== undefined || !isMailboxError(error) || error.status !== 404) throw error;
    const { error: _title, code: _code, message, ...details } = error.envelope;
    throw unnamed(`there is none to name: ${message.charAt(0).toLowerCase()}${message.slice(1).replace(/\.$/, '')}`, details);
  }
}

/** Runs a projections command; a failure is one line on stderr, or its envelope with --json (`json`). */
async function run(io: ProjectionsIo, json: boolean, work: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await work();
  } catch (caught) {
    // Views of another log are refused (2): a rebuild or a status is about to touch them, not to find nothing.
    const out = { stderr: io.stderr, json };
    process.exitCode = reportCommandFailure(readingFailure(caught, io.env), out, 'Projections command failed', (error) =>
      error instanceof ForeignViews || error instanceof LiveWriterOfAnotherLog
        ? { envelope: { error: 'Views of another log', code: 'FOREIGN_VIEWS', message: error.message }, notFound: false }
        : error instanceof GenerationLost
          ? // Was {"error":"Projections command failed","code":"INTERNAL",...} naming no remedy: the next run rebuilds anew.
            { envelope: rebuildLost(error), notFound: false }
          : undefined,
    );
  }
}

/** Redis lost its data (flushed, restarted empty) while the rebuild built its generation: nothing switched, run it again. */
const rebuildLost = (error: GenerationLost) => ({
  error: 'Rebuild lost its views',
  code: 'UNAVAILABLE' as const,
  message:
    `The views store lost its data while the rebuild was building (Redis restarted empty or flushed): ${error.generation} ` +
    'was not switched to and nothing else changed. Run `mailbox projections rebuild` again.',
  generation: error.generation,
});

/**
 * `mailbox projections rebuild` as the CLI runs it: a failure as one line on stderr (`mailbox: <message>`), or with
 * --json as one JSON envelope line; exit code 1 or 2.
 */
export const runRebuildCommand = (io: ProjectionsIo, { json, ...flags }: Record<string, unknown>): Promise<void> =>
  run(io, json === true, () => runRebuild(flags, io));

/** `mailbox projections status` as the CLI runs it (failures as runRebuildCommand's). */
export const runStatusCommand = (io: ProjectionsIo, flags: { json?: boolean } = {}): Promise<void> =>
  run(io, flags.json === true, () => runStatus(io));

/** `mailbox projections drop <generation>` as the CLI runs it (failures as runRebuildCommand's). */
export const runDropCommand = (
  io: ProjectionsIo,
  generation: string | undefined,
  flags: { json?: boolean } = {},
): Promise<void> => run(io, flags.json === true, () => runDrop(generation, io));

/** --json of each projections command, in its --help. */
const JSON_FAILURE = 'a failure as the JSON error envelope on stderr (else one line, mailbox: <message>)';

export function registerProjectionsCommands(program: Command): void {
  const projections = program
    .command('projections')
    .description('the views in Redis (MAILBOX_REDIS_URL) or in the SQLite views file: blue/green rebuild, status, drop')
    .addHelpText(
      'after',
      '\nStores come from MAILBOX_DATA_DIR / MAILBOX_EVENTSTORE_URL / MAILBOX_REDIS_URL, as for `mailbox serve`.\n' +
        'Exit codes: 0 ok, 1 no event log (not found), 2 configuration error, views of another log, a views file that ' +
        'cannot be opened (damaged, locked), views lost during a rebuild (run it again) or any other failure. ' +
        'See docs/operators.md.',
    );
  projections
    .command('rebuild')
    .description('rebuild every view from the log into a new generation, then switch to it atomically')
    .option('--keep-previous', 'keep the previous generation instead of deleting it after the grace period')
    .addOption(
      new Option(
        '--grace-ms <ms>',
        'delete the previous generation this long after the switch (readers cache the active one ~1 s)',
      ).default(GRACE_MS),
    )
    .addOption(
      new Option('--settle-ms <ms>', 'wait this long for a live projector that is behind before switching without it').default(
        SETTLE_MS,
      ),
    )
    .option(
      '--take-over',
      "replace views of another event log (or ahead of this one) with this log's; refused while that log's projector is live",
    )
    // `mailbox audit` takes it: a user who ran `audit verify --no-progress` was refused here, "unknown option".
    .option('--no-progress', 'no progress bar (on a terminal) nor progress lines: the result line only (and any retry)')
    .option('--json', `${JSON_FAILURE}; the result line is text either way`)
    .addHelpText(
      'after',
      '\nExit codes: 0 rebuilt and switched (the previous generation not deleted after the switch is said by a warning ' +
        'line on stderr: the views served are the rebuilt ones), 1 no event log, 2 usage or configuration error, views of another log ' +
        '(without --take-over), a views file that cannot be opened (damaged, locked), the views lost or unreachable ' +
        'for a minute in a row while it rebuilt (nothing switched; its line says so: run it again once they answer) ' +
        'or any other failure. See docs/operators.md.',
    )
    .action(async (flags: Record<string, unknown>) => runRebuildCommand(processIo, flags));
  projections
    .command('status')
    .description('the active generation, its checkpoint and the log head, as JSON')
    .addHelpText(
      'after',
      '\nFields: file (SQLite views) or namespace (Redis); viewsBuilt; activeGeneration; checkpoint and logHead (log ' +
        'positions: upToDate when equal); viewsLogIdentity and logIdentity (viewsOfThisLog: whether the views were built ' +
        'from this log); liveWriter (a running projector, or null); leftoverGenerations, only when there are some: ' +
        'partial generations left by rebuilds killed before they finished, and previous generations a rebuild could ' +
        'not delete after its switch, dropped by the next ' +
        '`mailbox projections rebuild`; keptGenerations, only when there are some: previous ' +
        'generations kept by `rebuild --keep-previous` or a take-over at start, deleted by `mailbox projections drop`; note, when no views are built yet, or when they stand ahead of the log head ' +
        '(the server refuses them; the note says the remedy).\n' +
        'Reads only: safe while the server runs.\n' +
        'Exit codes: 0 the status printed, 1 no event log, 2 usage or configuration error, views of another log, a ' +
        'views file that cannot be opened (damaged, locked) or any other failure.',
    )
    // Taken as every command that prints JSON takes it (a script passing --json everywhere was refused here).
    .option('--json', `the status as JSON (it always is), and ${JSON_FAILURE}`)
    .action(async (flags: { json?: boolean }) => runStatusCommand(processIo, flags));
  projections
    .command('drop')
    // Optional to commander, so that its absence is said with the generations there are to name (runDrop).
    .argument('[generation]', 'the generation to delete, as status or the rebuild named it (e.g. g2, or mailbox:v2: in Redis)')
    .usage('[options] <generation>')
    .description(
      'delete one old generation of the views (SQLite views file or Redis), to free its space: one kept by `rebuild --keep-previous` ' +
        'or a take-over at start, or a leftover; never the active one',
    )
    .addHelpText(
      'after',
      '\nSafe while the server runs: it serves the active generation only. A rebuild deletes the generation it ' +
        'switched away from itself, after its grace; leftovers are also dropped by the next rebuild. A wrong name is ' +
        'refused with the generations it can drop.\n' +
        'Exit codes: 0 dropped, 1 no event log, or no such generation to drop, 2 usage or configuration error, the active ' +
        'generation or one being built (refused: nothing changed), a views file that cannot be opened (damaged, locked) ' +
        'or any other failure.',
    )
    .option('--json', `${JSON_FAILURE}; the result line is text either way`)
    .action(async (generation: string | undefined, flags: { json?: boolean }) => runDropCommand(processIo, generation, flags));
}
