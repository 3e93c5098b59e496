/** `mailbox heartbeat`: the daemon that nudges idle agents with unread mail and watches the projection pipeline. */
import { type Command, Option } from 'commander';
import { RedisChannelTarget } from '../../heartbeat/targets/redisChannelTarget';
import type { NudgeTarget } from '../../heartbeat/nudgeTarget';
import { configFromEnv, DEFAULT_WAKE_SLA_MS, nodeIdOf, refuseEmpty, type MailboxConfig } from '../../config';
import { isStartupError, StartupError, StartupInterrupted } from '../../startupError';
import { cliLogger } from './cliLogger';
import { failureLine } from './commandConfig';
import { logStartWarnings, unknownVariableWarning, unknownVariables, withUnknownVariables } from './envWarnings';
import { isMailboxError, MailboxError } from '../../errors';
import { pathOfDuplicateKey } from '../../commands/jsonDuplicateKeys';
import { jsonField } from '../../commands/jsonDepth';
import { strictUtf8Text } from '../../support/utf8';
import { readFlagFile } from './flagFile';
import { NOT_DECIMAL } from '../../support/decimalText';
import { NOT_A_DURATION } from '../../support/duration';
import {
  HEARTBEAT_ENV,
  HEARTBEAT_FORM,
  heartbeatSettingsFromEnv,
  parseHeartbeatSettings,
  type HeartbeatSettings,
} from '../../heartbeat/heartbeatSettings';
import type { TickReport } from '../../heartbeat/heartbeatDaemon';
import { ForeignViews } from '../../projections/viewsOwnership';
import { checkMetricsAddressFree, checkMetricsPortReachable } from '../../heartbeat/metricsServer';

interface HeartbeatFlags {
  interval?: string;
  idle?: string;
  cooldown?: string;
  wakeGrace?: string;
  stallAfter?: string;
  optOut?: string;
  agentsFile?: string;
  hook?: string;
  redisUrl?: string;
  metricsHost?: string;
  metricsPort?: string;
  projector?: string;
  once?: boolean;
  json?: boolean;
}

const FLAG_OF: Record<string, string> = {
  intervalMs: '--interval',
  idleMs: '--idle',
  cooldownMs: '--cooldown',
  wakeGraceMs: '--wake-grace',
  stallAfterMs: '--stall-after',
  optOut: '--opt-out',
  agents: '--agents-file',
  hook: '--hook',
  redisUrl: '--redis-url',
  metricsHost: '--metrics-host',
  metricsPort: '--metrics-port',
  projector: '--projector',
};

function readAgentsFile(file: string): unknown {
  const bytes = readFlagFile(file, `--agents-file ${file}`, {
    field: '--agents-file',
    title: 'Invalid configuration',
    remedy: 'give the path of a readable JSON file, e.g. {"@agent": {"optOut": true, "webhook": "https://..."}}, and start again',
  });
  // Read as 'utf8', an invalid byte became U+FFFD: a webhook URL or hook changed without a word.
  const text = strictUtf8Text(
    bytes,
    (problem, offset) =>
      new MailboxError(
        'VALIDATION_FAILED',
        'Invalid configuration',
        `--agents-file ${file} is not UTF-8: ${problem}; convert it (e.g. iconv -f latin1 -t utf-8) and start again`,
        { field: '--agents-file', offset },
      ),
  );
  let agents: unknown;
  try {
    agents = JSON.parse(text);
  } catch (error) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `--agents-file ${file} is not JSON (${(error as Error).message}); expected {"@agent": {"optOut": true, "webhook": "https://..."}}`,
      { field: '--agents-file' },
    );
  }
  const repeated = pathOfDuplicateKey(text); // JSON.parse kept the last of a repeated key: which settings were meant?
  if (repeated !== null) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `--agents-file ${file} names '${jsonField(repeated)}' twice; give each agent (and each of its settings) once, in one entry`,
      { field: '--agents-file' },
    );
  }
  return agents;
}

/** Flags override MAILBOX_HEARTBEAT_* variables; Redis nudges default to MAILBOX_REDIS_URL. */
export function heartbeatSettingsFromCli(flags: HeartbeatFlags, env: NodeJS.ProcessEnv = process.env): HeartbeatSettings {
  refuseEmpty(env, 'MAILBOX_HEARTBEAT_AGENTS_FILE', HEARTBEAT_FORM.agentsFile); // an empty one read no file, unsaid
  const agentsFile = flags.agentsFile ?? env.MAILBOX_HEARTBEAT_AGENTS_FILE;
  const fromFlags: Record<string, unknown> = {
    intervalMs: flags.interval,
    idleMs: flags.idle,
    cooldownMs: flags.cooldown,
    wakeGraceMs: flags.wakeGrace,
    stallAfterMs: flags.stallAfter,
    optOut: flags.optOut,
    hook: flags.hook,
    redisUrl: flags.redisUrl,
    metricsHost: flags.metricsHost,
    metricsPort: flags.metricsPort,
    projector: flags.projector,
    agents: agentsFile ? readAgentsFile(agentsFile) : undefined,
  };
  const raw = {
    ...heartbeatSettingsFromEnv(env),
    ...Object.fromEntries(Object.entries(fromFlags).filter(([, v]) => v !== undefined)),
  };
  // Without --redis-url / MAILBOX_HEARTBEAT_REDIS_URL, nudges go through the mailbox's own Redis (nudgeTargetsOf): its
  // URL was copied here, and a Sentinel or Cluster URL was refused as a bad MAILBOX_HEARTBEAT_REDIS_URL.
  try {
    return parseHeartbeatSettings(raw);
  } catch (error) {
    if (!isMailboxError(error)) throw error;
    throw refusalAsTyped(error, (key) => ({
      source: fromFlags[key] !== undefined ? FLAG_OF[key] : HEARTBEAT_ENV[key as keyof HeartbeatSettings],
      value: (raw as Record<string, unknown>)[key],
    }));
  }
}

/**
 * A refused setting said as the user gave it: the flag they typed (`--interval`), or the variable when the value came
 * from the environment, with the valid form and the value. `mailbox heartbeat --interval abc` said "--interval /
 * MAILBOX_HEARTBEAT_INTERVAL: heartbeat settings: 'intervalMs' must be a duration ...", naming a field the user never
 * wrote, nor what they wrote. Per-agent fields (from --agents-file) keep their message, which names the agent and key.
 */
function refusalAsTyped(
  error: MailboxError,
  given: (key: string) => { source: string | undefined; value: unknown },
): MailboxError {
  const { error: title, code, message, ...details } = error.envelope;
  const issues = (details.issues ?? []) as { field: string; message: string }[];
  const where = given(String(details.field ?? '').split('.')[0]).source;
  if (where === undefined) return error;
  // A setting, or one entry of a list (--opt-out's 'optOut.1'): not an agent's entry in --agents-file.
  const plainField = /^([A-Za-z]+)(?:\.([0-9]+))?$/;
  const plain =
    issues.length > 0 && issues.every((issue) => plainField.exec(issue.field) && given(issue.field.split('.')[0]).source);
  // Not all plain settings: the old wording, with the option in front.
  if (!plain) return new MailboxError(code, title, `${where}: ${message}`, { ...details, option: where });
  const retold = issues.map((issue) => {
    const [, key, index] = plainField.exec(issue.field)!;
    const { source, value } = given(key);
    // The value as typed (the entry of a list), unless the message shows it already (a duration with spaces; an enum's
    // value, named by the schema as JSON: 'must be one of "auto", "on", "off", not "xyz"').
    const typed = typeof value !== 'string' ? undefined : index === undefined ? value : listEntries(value)[Number(index)];
    // A flag's number or duration, said as a command line says it: `--metrics-port: 'abc' is not a port number: ...`.
    const asFlag = typed !== undefined && source!.startsWith('--') ? flagValueRefusal(key, typed, issue.message) : undefined;
    if (asFlag !== undefined) return { field: source!, message: asFlag };
    // 'must be at most 65535, not 70000' shows it too: it was said twice ("not 70000, not '70000'").
    const showsIt =
      typed === undefined ||
      issue.message.includes(`not '`) ||
      issue.message.includes(JSON.stringify(typed)) ||
      issue.message.endsWith(`, not ${typed}`);
    const shown = showsIt ? '' : `, not '${typed}'`;
    return { field: source!, message: `${issue.message}${shown}` };
  });
  return new MailboxError(code, title, retold.map((issue) => `${issue.field}: ${issue.message}`).join('; '), {
    ...details,
    field: where,
    issues: retold,
    option: where,
  });
}

const DURATION_KEYS = new Set(['intervalMs', 'idleMs', 'cooldownMs', 'wakeGraceMs', 'stallAfterMs']);

/**
 * A duration or port flag refused, after its flag (the caller puts it in front): the value as typed, what it is not,
 * and what to give (`'abc' is not a duration: give one such as 250ms, ...`; `'70000' is not a port number: give an
 * integer 0..65535 ...`). They were said as the schema says them, the value last or twice: `--metrics-port: must be at
 * most 65535, not 70000, not '70000'`, `--metrics-port: must be written in plain decimal digits, not 'abc'` (not
 * saying that a port, or off, was asked). Undefined for the other settings: their message is kept.
 */
function flagValueRefusal(key: string, typed: string, issue: string): string | undefined {
  const reason = issue.replace(/, not '[^]*'$/, '').replace(/, not -?\d+$/, '');
  if (key === 'metricsPort') {
    const digits = issue.startsWith(NOT_DECIMAL) ? ', written in plain decimal digits' : '';
    return `'${typed}' is not a port number: give an integer 0..65535 (0 picks any free port)${digits}, or off`;
  }
  if (!DURATION_KEYS.has(key)) return undefined;
  if (reason.startsWith(NOT_A_DURATION))
    return `'${typed}' is not a duration: give one such as ${reason.slice('must be a duration such as '.length)}`;
  const bound = /^must be a duration of (at least|at most) (.*)$/.exec(reason);
  if (bound) return `'${typed}' is too ${bound[1] === 'at least' ? 'short' : 'long'}: give a duration of ${bound[1]} ${bound[2]}`;
  return `'${typed}' is not valid: ${reason.replace(/^must be /, 'give ')}`;
}

/** A comma-separated list's entries, as the settings read it (heartbeatSettings.ts identityList). */
const listEntries = (text: string): string[] =>
  text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

export function registerHeartbeatCommands(program: Command): void {
  program
    .command('heartbeat')
    .description('nudge idle agents that have unread mail, and alarm when the projection pipeline stalls')
    .option('--interval <duration>', 'how often to read the counts and check the pipeline (MAILBOX_HEARTBEAT_INTERVAL)')
    .option('--idle <duration>', 'nudge only agents that sent or read nothing for this long (MAILBOX_HEARTBEAT_IDLE)')
    .option('--cooldown <duration>', 'least time between two nudges to one agent, even for new mail (MAILBOX_HEARTBEAT_COOLDOWN)')
    .option('--wake-grace <duration>', 'after a wake event, let the agent react this long first (MAILBOX_HEARTBEAT_WAKE_GRACE)')
    .option(
      '--stall-after <duration>',
      'alarm when the views are behind the log and the checkpoint has not moved this long (MAILBOX_HEARTBEAT_STALL_AFTER)',
    )
    .option('--opt-out <identities>', 'comma-separated identities never to nudge (MAILBOX_HEARTBEAT_OPT_OUT)')
    .option(
      '--agents-file <path>',
      'per-agent JSON: {"@b": {"optOut": true}, "@c": {"webhook": "https://..."}} (MAILBOX_HEARTBEAT_AGENTS_FILE)',
    )
    .option(
      '--hook <command>',
      'command run per nudge (nudge JSON on stdin): a path or a JSON argv array (MAILBOX_HEARTBEAT_HOOK)',
    )
    .option(
      '--redis-url <url>',
      'publish nudges on mailbox:heartbeat:<identity> (MAILBOX_HEARTBEAT_REDIS_URL, else MAILBOX_REDIS_URL)',
    )
    .option('--metrics-host <host>', 'address of /metrics, /healthz, /status (MAILBOX_HEARTBEAT_METRICS_HOST)')
    .option('--metrics-port <port>', 'port of /metrics, or "off" (MAILBOX_HEARTBEAT_METRICS_PORT)')
    .addOption(
      new Option(
        '--projector <mode>',
        'run a projector in this process: auto = only when views are in memory (MAILBOX_HEARTBEAT_PROJECTOR)',
      ).choices(['auto', 'on', 'off']),
    )
    .option(
      '--once',
      'run one tick, wait for the deliveries, print the tick report as JSON on stdout (logs on stderr) and exit: ' +
        'nudged (delivered), loggedOnly (no target), unheard (published on Redis, nobody subscribed), failed (per ' +
        'target, with the error); exit code 1 when the pipeline ' +
        'stalled (views behind the log: it first watches their checkpoint for up to --stall-after) or no projector ' +
        'keeps the views (no server running: pipeline.projectorLive false, the alarm projector_absent; nobody is ' +
        'nudged nor any message escalated then, and a lag is not watched), 3 when a nudge failed, else 0; opens no ' +
        'metrics port, so it runs beside the daemon',
    )
    .option(
      '--json',
      'log lines as JSON even on a terminal (as MAILBOX_LOG_FORMAT=json, which it overrides), and a refusal of its ' +
        'settings as the error envelope (else one line); the --once report is JSON either way',
    )
    .addHelpText(
      'after',
      `
Durations: 250ms, 90s, 10m, 1h, 1d or milliseconds. Defaults: interval 60s, idle 10m, cooldown 15m,
wake grace 60s, stall after 60s, metrics on 127.0.0.1:7421.
Webhooks are signed with HMAC-SHA256 (header x-mailbox-signature: sha256=<hex> over "<timestamp>.<body>",
timestamp in x-mailbox-timestamp); the secret comes from MAILBOX_HEARTBEAT_WEBHOOK_SECRET only (never a flag).
Environment only (no flag): MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS (tries per webhook nudge, 1-20, default 5),
MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT (each try's deadline, a duration, default 5s), MAILBOX_HEARTBEAT_HOOK_TIMEOUT
(the hook is killed after it, default 10s), MAILBOX_WAKE_SLA_MS (a message that woke nobody this long is escalated,
default ${DEFAULT_WAKE_SLA_MS}).
The stores are those of the server: MAILBOX_DATA_DIR / MAILBOX_EVENTSTORE_URL / MAILBOX_REDIS_URL. A log or
views file no server has made is refused at start (exit code 2), never created. See docs/operators.md.`,
    )
    .action(async (flags: HeartbeatFlags) => {
      try {
        await runHeartbeat(flags);
      } catch (error) {
        if (isStartupError(error)) throw error; // one line, exit code 2 (bin/mailbox.js)
        const envelope = isMailboxError(error)
          ? error.envelope
          : { error: 'Heartbeat failed', code: 'INTERNAL', message: (error as Error).message };
        // A refusal of its own (a setting, the agents file, views not this log's at --once) is one line, as its refusals
        // at start (`mailbox: <message>`, with the remedy); the envelope with --json.
        process.stderr.write(flags.json ? `${JSON.stringify(envelope)}\n` : failureLine(envelope, 'Heartbeat failed'));
        process.exitCode = 2;
      }
    });
}

/**
 * Exit codes of --once, for a cron job: 1 the pipeline does not reach the inboxes (stalled, or no projector keeps the
 * views: the alarm projector_absent; it exited 0 beside a stopped server), 3 a nudge failed (after its retries), else 0.
 */
export const ONCE_EXIT = { stalled: 1, nudgeFailed: 3 } as const;

export function onceExitCode(report: TickReport): number {
  if (report.pipeline.stalled || report.pipeline.projectorLive === false) return ONCE_EXIT.stalled;
  return (report.failed ?? []).length > 0 ? ONCE_EXIT.nudgeFailed : 0;
}

/**
 * The settings, read before the logger exists: a refusal there is said after the misspelled variables' warnings, as
 * serve says its own (MAILBOX_DATA_DIRR beside MAILBOX_PORT=abc said only the port): a refusal's line carries them
 * (withUnknownVariables); the settings' refusal, printed by the action (a line, or the envelope with --json), gets them
 * as `mailbox: warning:` lines first.
 */
function readBeforeLogger<T>(read: () => T): T {
  try {
    return withUnknownVariables(read);
  } catch (error) {
    if (isMailboxError(error))
      for (const unknown of unknownVariables(process.env))
        process.stderr.write(`mailbox: warning: ${unknownVariableWarning(unknown)}\n`);
    throw error;
  }
}

async function runHeartbeat(flags: HeartbeatFlags): Promise<void> {
  const { config, fromFlagsAndEnv } = readBeforeLogger(() => ({
    config: flags.json ? { ...configFromEnv(), logFormat: 'json' as const } : configFromEnv(),
    fromFlagsAndEnv: heartbeatSettingsFromCli(flags),
  }));
  // One-shot: no metrics port (it would collide with a running daemon's), and stdout carries only the report.
  const settings = flags.once ? { ...fromFlagsAndEnv, metricsPort: null } : fromFlagsAndEnv;
  const logger = cliLogger({ name: 'mailbox-heartbeat', config, fd: flags.once ? 2 : 1 });
  logStartWarnings(process.env, config, logger);
  // Loaded once the settings are read: --help, a usage error or a refused setting load neither the stores nor the daemon.
  const { checkStoreNames } = await import('../../startupChecks');
  const { refuseNudgesThatCannotGo, startHeartbeat } = await import('../../heartbeat/startHeartbeat');
  const { refuseStoresNoServerMade } = await import('./heartbeatStores');
  const { waitForBackends, waitForNudgeRedis } = await import('../../startupBackends');
  const { openPipeline } = await import('../../compositionRoot');
  checkStoreNames(config); // a URL that names no log or no Redis: serve's line for it, not a failure to open
  refuseNudgesThatCannotGo(settings); // before the stores and the nudge publisher are opened, not after
  if (settings.metricsPort !== null) checkMetricsPortReachable(settings.metricsPort); // one no fetch reaches
  refuseStoresNoServerMade(config, { ownsViews: settings.projector === 'on' }); // opening them would create them
  // A metrics port in use is refused before the stores are opened (and before a wait for Redis at start).
  if (settings.metricsPort !== null) await checkMetricsAddressFree(settings.metricsHost, settings.metricsPort);
  // The daemon's signals are handled from here (--once keeps their default): a SIGTERM while it waits for Redis or
  // EventStoreDB at start (docker compose stopping a stack whose Redis never came up) ends that wait, says so and exits
  // 0, as mailbox serve does; it was killed by the signal without a line. Once running, it stops as before.
  let stopRunning: ((signal: string) => Promise<void>) | null = null;
  let signalledDuringStartup: string | null = null;
  const startup = new AbortController();
  if (!flags.once) {
    const onSignal = (signal: string) => {
      if (stopRunning) return void stopRunning(signal);
      if (signalledDuringStartup) process.exit(1); // a second one: do not wait
      signalledDuringStartup = signal;
      logger.info({ signal }, 'signal during startup: stopping at its next step');
      startup.abort();
    };
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
  }
  try {
    // Started beside Redis and EventStoreDB (docker compose): wait for them, bounded; its own nudge Redis too.
    await waitForBackends(config, logger, startup.signal);
    if (settings.redisUrl !== undefined) await waitForNudgeRedis(settings.redisUrl, config, logger, startup.signal);
  } catch (error) {
    if (!(error instanceof StartupInterrupted)) throw error;
    logger.info({ signal: signalledDuringStartup }, `stopped: ${error.message}; nothing nudged`);
    process.exit(0);
  }
  const pipeline = await openPipeline(config, logger, settings.projector).catch((error: unknown) => {
    // --projector on beside views of another log, or ahead of this one's head: refused in serve's line (exit code 2,
    // nothing written); it was {"error":"Heartbeat failed","code":"INTERNAL",...}, as if the daemon had broken.
    if (error instanceof ForeignViews) throw foreignViewsAtStart(error);
    throw error;
  });
  if (!flags.once && !pipeline.hearsWakes) {
    // Said once at start: the wake grace would otherwise look applied while it never holds a nudge back.
    logger.warn(
      { wakeGraceMs: settings.wakeGraceMs },
      'this daemon hears no wake events: on the embedded default (no MAILBOX_REDIS_URL) the server publishes them in ' +
        'its own process only, so --wake-grace holds no nudge back and an agent just woken may be nudged too; run the ' +
        'heartbeat in the server (mailbox serve --heartbeat) or use Redis for the grace to apply',
    );
  }
  const lease = pipeline.leases && {
    store: pipeline.leases.lease('heartbeat'),
    node: nodeIdOf(config),
    ttlMs: config.projectorLeaseMs,
  };
  const heartbeat = await nudgeTargetsOf(config, settings)
    .then((targets) =>
      startHeartbeat(
        // --once looks for the server's live mark as the daemon does (once more 1.5 s after none is seen): its exit code
        // says a missing projector, and one node of several restarting is not one.
        { ...pipeline, projectorElsewhere: !pipeline.runsProjector },
        { settings, targets, logger, schedule: !flags.once, lease: lease ?? undefined },
      ),
    )
    .catch(async (error) => {
      await pipeline.close();
      throw error;
    });
  if (flags.once) {
    let report: TickReport;
    try {
      // A stall is the views' checkpoint not moving for --stall-after while behind the log: one sample cannot see it.
      await heartbeat.watchPipelineBeforeTick();
      // The report once the deliveries settled: a nudge whose every target failed is under "failed", not "nudged".
      report = await heartbeat.settledReport(await heartbeat.tick());
    } catch (error) {
      // A refused tick (views of another log, or ahead of it; a store down): its connections closed, or the process
      // stayed up on them after the refusal's line, on Redis and Sentinel until killed.
      await heartbeat.stop().catch(() => undefined);
      await pipeline.close().catch(() => undefined);
      throw error;
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
    await heartbeat.stop();
    await pipeline.close();
    const code = onceExitCode(report);
    if (code !== 0) process.exitCode = code;
    return;
  }
  let stopping = false;
  stopRunning = async (signal: string) => {
    if (stopping) process.exit(1); // a second one: do not wait
    stopping = true;
    // Nudges still to deliver are said, with what a second signal leaves undone: a daemon whose webhook is slow or down
    // stayed up minutes after the signal (each nudge through its retries) saying only "the nudges in flight finish".
    const pending = heartbeat.pendingNudges();
    logger.info(
      { signal, ...(pending > 0 ? { nudgesPending: pending } : {}) },
      pending === 0
        ? 'heartbeat: stopping (the tick and the nudges in flight finish first)'
        : `heartbeat: stopping once the tick and ${pending} nudge(s) in flight or queued are delivered or have failed ` +
            '(each through its retries); a second signal exits at once, without them (an escalation among them is ' +
            'not tried again)',
    );
    await heartbeat.stop();
    await pipeline.close();
    process.exit(0);
  };
  if (signalledDuringStartup) await stopRunning(signalledDuringStartup); // asked to stop once the wait was over
}

/** Views the projector of --projector on may not write: serve's refusal (mailbox.ts handleForeignViews), one line. */
function foreignViewsAtStart(foreign: ForeignViews): StartupError {
  return new StartupError(foreign.message, {
    location: foreign.binding.location,
    viewsOf: foreign.binding.logIdentity,
    logIdentity: foreign.logIdentity,
  });
}

/**
 * The nudge targets the composition adds to those of the settings: without --redis-url / MAILBOX_HEARTBEAT_REDIS_URL,
 * the Redis channel on the mailbox's own Redis (MAILBOX_REDIS_URL, or the Sentinel or Cluster variables, with its
 * credentials), as the docs say.
 */
export async function nudgeTargetsOf(config: MailboxConfig, settings: HeartbeatSettings): Promise<NudgeTarget[]> {
  if (settings.redisUrl !== undefined) return [];
  const { openNudgePublisher } = await import('../../compositionRoot');
  const publisher = await openNudgePublisher(config);
  return publisher ? [new RedisChannelTarget(publisher)] : [];
}
