/** `mailbox serve`: runs the HTTP server with the configuration from MAILBOX_* (flags override). */
import type { Command } from 'commander';
import type { Logger } from 'pino';
import { configFromEnv, flagFromEnv, nodeIdOf, parseConfigForStartup } from '../../config';
import type { Mailbox } from '../../mailbox';
import { cliLogger } from './cliLogger';
import { logStartWarnings, withUnknownVariables } from './envWarnings';
import { isMailboxError } from '../../errors';
import type { HeartbeatSettings } from '../../heartbeat/heartbeatSettings';
import { StartupError, StartupInterrupted } from '../../startupError';

const SHUTDOWN_TIMEOUT_MS = 10_000;
const FLAG_NAMES = { host: '--host', port: '--port', dataDir: '--data-dir' } as const;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the mailbox HTTP server (configured by MAILBOX_* environment variables; see README)')
    .option('--host <host>', 'address to bind (MAILBOX_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port, 0 for any free one (MAILBOX_PORT, default 7420)')
    .option('--data-dir <dir>', 'SQLite log and admin token directory (MAILBOX_DATA_DIR, default ./data)')
    .option(
      '--heartbeat',
      'also run the heartbeat daemon in this process (MAILBOX_HEARTBEAT=1; settings from MAILBOX_HEARTBEAT_*, see docs/operators.md)',
    )
    .addHelpText(
      'after',
      '\nEvery other setting is a MAILBOX_* variable (README, "Configuration"). Exit codes: 0 stopped by SIGTERM or ' +
        'Ctrl-C,\n2 a setting, the port or a store refused at start (one line saying which and how to fix it).',
    )
    .action(async (options: { host?: string; port?: string; dataDir?: string; heartbeat?: boolean }) => {
      // Refused before the logger exists, a setting is said with the misspelled variables (MAILBOX_PROT) beside it.
      const { config, withHeartbeat, logger } = withUnknownVariables(() => {
        const fromEnv = configFromEnv();
        // A flag given is taken as given, empty too (`--data-dir "$DIR"` with DIR unset), for the config to refuse:
        // dropped, the server would start on the default data dir, another mailbox than the one named. A refusal
        // names the flag (`--port='abc'`), not MAILBOX_PORT, which may hold another value or none.
        const flags = { host: options.host, port: options.port, dataDir: options.dataDir };
        const given = Object.entries(flags).filter(([, value]) => value !== undefined);
        const config = parseConfigForStartup(
          { ...fromEnv, ...Object.fromEntries(given) },
          Object.fromEntries(given.map(([key]) => [key, FLAG_NAMES[key as keyof typeof flags]])),
        );
        // Read as every boolean variable is, before anything is created: MAILBOX_HEARTBEAT=enabled turned it off, unsaid.
        const heartbeatFromEnv = flagFromEnv(process.env, 'MAILBOX_HEARTBEAT'); // checked with --heartbeat too
        const withHeartbeat = options.heartbeat === true || heartbeatFromEnv === true;
        return { config, withHeartbeat, logger: cliLogger({ name: 'mailbox', config }) };
      });
      logStartWarnings(process.env, config, logger);
      // Handlers first: a signal during startup stops it at its next step (a batch of the views' catch-up, a wait for
      // Redis or EventStoreDB), closing what it opened: a first start on a long log builds its views for minutes,
      // and a SIGTERM waited for all of it (then listened, then stopped). The views keep what was built.
      let started: ((signal: string) => void) | null = null;
      let signalledDuringStartup: string | null = null;
      const startup = new AbortController();
      const onSignal = (signal: string) => {
        if (started) return started(signal);
        if (signalledDuringStartup) process.exit(1); // a second one: do not wait
        signalledDuringStartup = signal;
        logger.info({ signal }, 'signal during startup: stopping at its next step');
        startup.abort();
      };
      process.on('SIGINT', () => onSignal('SIGINT'));
      process.on('SIGTERM', () => onSignal('SIGTERM'));

      // The heartbeat's settings, read and checked before anything is opened or listened on (see heartbeatSettingsForServe).
      const heartbeatSettings = withHeartbeat ? await heartbeatSettingsForServe() : null;

      const { startServer } = await import('../../server'); // loaded here: client commands need none of it
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        // The heartbeat's own nudge Redis is checked as `mailbox heartbeat` checks it, before anything is opened: a
        // handshake it refuses was first met at a nudge (a failed publish), the server serving on, nudging nobody.
        if (heartbeatSettings?.redisUrl !== undefined) {
          const { waitForNudgeRedis } = await import('../../startupBackends');
          await waitForNudgeRedis(heartbeatSettings.redisUrl, config, logger, startup.signal);
        }
        server = await startServer(config, { logger, interrupted: startup.signal });
      } catch (error) {
        if (error instanceof StartupError) throw asFlagsGiven(error, options);
        if (!(error instanceof StartupInterrupted)) throw error;
        logger.info({ signal: signalledDuringStartup }, `stopped: ${error.message}; nothing served`);
        process.exit(0);
      }
      let heartbeat: Awaited<ReturnType<typeof startInProcessHeartbeat>> | null = null;
      try {
        if (heartbeatSettings) heartbeat = await startInProcessHeartbeat(server.mailbox, heartbeatSettings, logger);
      } catch (error) {
        // Refused at its start (a hook that cannot run, its metrics port in use): the server closes what it opened
        // before the one line is printed, rather than being cut off by the exit; a first start leaves no log behind.
        await server.closeRefused();
        throw error;
      }

      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          logger.warn({ signal }, 'second signal: exiting without waiting');
          process.exit(1);
        }
        stopping = true;
        logger.info({ signal }, 'shutting down: closing wake and audit streams, finishing requests in flight');
        setTimeout(() => {
          logger.error(`shutdown took longer than ${SHUTDOWN_TIMEOUT_MS} ms; exiting`);
          process.exit(1);
        }, SHUTDOWN_TIMEOUT_MS).unref();
        Promise.resolve(heartbeat?.stop())
          .then(() => server.close())
          .then(
            () => {
              logger.info('stopped: HTTP closed, views and event store closed');
              process.exit(0);
            },
            (error: unknown) => {
              logger.error({ err: error }, 'shutdown failed');
              process.exit(1);
            },
          );
      };
      started = stop;
      if (signalledDuringStartup) stop(signalledDuringStartup);
    });
}

const VARIABLE_OF_FLAG = { host: 'MAILBOX_HOST', port: 'MAILBOX_PORT', dataDir: 'MAILBOX_DATA_DIR' } as const;

/**
 * A refusal at start (a port in use, a host that is no address here, a data dir that cannot be one) of a setting the
 * user gave as a flag, said with the flag: `serve --port 80` was told "set MAILBOX_PORT to 1024 or above", `serve
 * --data-dir /etc/passwd/x` "MAILBOX_DATA_DIR='/etc/passwd/x' cannot be a directory", a variable they never set. The
 * flag overrides the variable, so every mention of the variable is of the flag's value.
 */
export function asFlagsGiven(error: StartupError, flags: { host?: string; port?: string; dataDir?: string }): StartupError {
  const variable = error.details.variable;
  const key = (Object.keys(VARIABLE_OF_FLAG) as Array<keyof typeof VARIABLE_OF_FLAG>).find(
    (name) => VARIABLE_OF_FLAG[name] === variable && flags[name] !== undefined,
  );
  if (key === undefined) return error;
  const flag = FLAG_NAMES[key];
  const message = error.message
    .replace(new RegExp(`${variable}='([^']*)'(:?)`, 'g'), (_all, value: string, colon: string) =>
      colon ? `${flag} '${value}':` : `${flag}: '${value}'`,
    )
    .replaceAll(`set ${variable} to `, `give ${flag} `)
    .replaceAll(String(variable), flag);
  return new StartupError(
    message,
    { ...error.details, option: flag },
    {
      cause: error,
      refusal: error.refusal,
      warnings: error.warnings,
    },
  );
}

/**
 * The settings `mailbox heartbeat` reads (MAILBOX_HEARTBEAT_*, the agents file of MAILBOX_HEARTBEAT_AGENTS_FILE, Redis
 * nudges on MAILBOX_REDIS_URL), refused before the server opens anything when one is wrong: one line naming the variable,
 * exit code 2. The server read the variables alone: the agents file (opt-outs, webhooks) and MAILBOX_REDIS_URL were
 * ignored without a word, and a bad value was a stack trace once the server listened.
 */
async function heartbeatSettingsForServe(): Promise<HeartbeatSettings> {
  const { heartbeatSettingsFromCli } = await import('./heartbeat');
  const { refuseNudgesThatCannotGo } = await import('../../heartbeat/startHeartbeat');
  let settings: HeartbeatSettings;
  try {
    settings = heartbeatSettingsFromCli({}, process.env);
  } catch (error) {
    if (!isMailboxError(error)) throw error;
    throw new StartupError(error.message, { field: error.envelope.field, option: error.envelope.option }, { cause: error });
  }
  refuseNudgesThatCannotGo(settings);
  if (settings.metricsPort !== null) {
    const { checkMetricsAddressFree } = await import('../../heartbeat/metricsServer');
    await checkMetricsAddressFree(settings.metricsHost, settings.metricsPort);
  }
  return settings;
}

/** The embedded default's heartbeat: same process, same views and wake bus as the server. */
async function startInProcessHeartbeat(mailbox: Mailbox, settings: HeartbeatSettings, logger: Logger) {
  const { startHeartbeat } = await import('../../heartbeat/startHeartbeat');
  const { leasesOf } = await import('../../compositionRoot');
  const leases = leasesOf(mailbox.container); // several API nodes with --heartbeat: one of them nudges
  const lease = leases && {
    store: leases.lease('heartbeat'),
    node: nodeIdOf(mailbox.config),
    ttlMs: mailbox.config.projectorLeaseMs,
  };
  const { nudgeTargetsOf } = await import('./heartbeat');
  const targets = await nudgeTargetsOf(mailbox.config, settings);
  return startHeartbeat(mailbox, { settings, targets, logger, lease: lease ?? undefined });
}
