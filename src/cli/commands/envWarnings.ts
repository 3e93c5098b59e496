/**
 * A misspelled MAILBOX_* variable is otherwise silently ignored (MAILBOX_PROT=8080 runs on 7420):
 * name each unknown one and the nearest known name, as a warning (a variable meant for another
 * tool sharing the prefix must not stop the server).
 */
import { ENV_VARIABLES, SECRET_FILE_VARIABLES, type MailboxConfig } from '../../config';
import { HEARTBEAT_VARIABLES } from '../../heartbeat/heartbeatVariables';
import { editDistance } from '../../commands/suggestions';
import { SKIP_EVENT_CHECKS_VARIABLE } from '../../events/eventChecksSwitch';
import { isStartupError, StartupError } from '../../startupError';

/** Read outside the two settings tables: client commands, the in-process heartbeat switch, hook environments. */
const OTHER_KNOWN = [
  'MAILBOX_URL',
  'MAILBOX_TOKEN',
  'MAILBOX_AUDIT_TOKEN',
  'MAILBOX_HEARTBEAT',
  'MAILBOX_HEARTBEAT_AGENTS_FILE',
  'MAILBOX_NUDGE_ID',
  'MAILBOX_NUDGE_IDENTITY',
  'MAILBOX_NUDGE_JSON',
  'MAILBOX_NUDGE_UNREAD',
  'MAILBOX_NUDGE_UNREAD_COUNT',
];

export function knownVariables(): string[] {
  return [
    ...new Set([
      ...Object.values(ENV_VARIABLES),
      ...Object.values(HEARTBEAT_VARIABLES),
      ...SECRET_FILE_VARIABLES,
      ...OTHER_KNOWN,
    ]),
  ];
}

export interface UnknownVariable {
  variable: string;
  /** The nearest known name, when it is close enough to be a likely typo. */
  suggestion?: string;
}

export function unknownVariables(env: NodeJS.ProcessEnv, known: readonly string[] = knownVariables()): UnknownVariable[] {
  const names = new Set(known);
  return Object.keys(env)
    .filter((name) => name.startsWith('MAILBOX_') && !names.has(name))
    .sort()
    .map((variable) => {
      let best: { name: string; distance: number } | undefined;
      for (const name of known) {
        const distance = editDistance(variable, name);
        if (!best || distance < best.distance) best = { name, distance };
      }
      const close = best && best.distance <= Math.max(2, Math.floor(variable.length / 4));
      return close ? { variable, suggestion: best!.name } : { variable };
    });
}

export function unknownVariableWarning({ variable, suggestion }: UnknownVariable): string {
  // Read by the code, but a benchmark's switch, not a setting: it is said what it does, never that it is ignored.
  if (variable === SKIP_EVENT_CHECKS_VARIABLE)
    return (
      `${variable} is a benchmark switch, not a setting: set to 1 it turns off the check of each event read from the ` +
      'log against its stored shape, so a damaged or foreign event would be read as valid. Unset it outside benchmarks.'
    );
  return (
    `${variable} is not a mailbox variable and is ignored` +
    (suggestion ? `: did you mean ${suggestion}?` : ' (see README "Configuration").')
  );
}

/** Each unknown variable as a warning in `logger` (serve's, heartbeat's and the operator tools' log). */
export function logUnknownVariables(env: NodeJS.ProcessEnv, logger: { warn(fields: object, message: string): void }): void {
  for (const unknown of unknownVariables(env)) logger.warn({ variable: unknown.variable }, unknownVariableWarning(unknown));
}

/**
 * Runs `read` (a command reading its settings, before it has a logger to warn with); a refusal it throws carries the
 * unknown variables' warnings, printed before its line (bin/mailbox.js). They were logged only once the settings were
 * read: with MAILBOX_PROT=8080 beside MAILBOX_PORT=abc, the operator saw the refusal of MAILBOX_PORT and not that the
 * port they meant to set is ignored.
 */
export function withUnknownVariables<T>(read: () => T, env: NodeJS.ProcessEnv = process.env): T {
  try {
    return read();
  } catch (error) {
    if (!isStartupError(error)) throw error;
    const warnings = [...error.warnings, ...unknownVariables(env).map(unknownVariableWarning)];
    throw new StartupError(error.message, error.details, { cause: error.cause, refusal: error.refusal, warnings });
  }
}

/** Settings read only to reach Redis, or only by the jobs Redis shares (the leases): without Redis nothing reads them. */
const REDIS_ONLY: Array<keyof MailboxConfig> = [
  'redisUsername',
  'redisPassword',
  'redisSentinelPassword',
  'redisTls',
  'redisTlsCaFile',
  'redisNamespace',
  'redisTimeoutMs',
  'projectorLeaseMs',
];
const REDIS_ONLY_VARIABLES = REDIS_ONLY.flatMap((key) => {
  const variable = ENV_VARIABLES[key];
  return SECRET_FILE_VARIABLES.includes(`${variable}_FILE`) ? [variable, `${variable}_FILE`] : [variable];
});

/**
 * The Redis-only variables set (not empty, as the configuration reads them) while no Redis is configured: a
 * MAILBOX_REDIS_PASSWORD meant for a Redis named nowhere was dropped without a word.
 */
export function redisOnlyVariables(env: NodeJS.ProcessEnv, config: Pick<MailboxConfig, 'redisUrl'>): string[] {
  if (config.redisUrl !== undefined) return [];
  return REDIS_ONLY_VARIABLES.filter((variable) => env[variable] !== undefined && env[variable] !== '');
}

export function redisOnlyWarning(variables: readonly string[]): string {
  const [are, they] = variables.length === 1 ? ['is', 'it takes'] : ['are', 'they take'];
  return (
    `${variables.join(', ')} ${are} set but no Redis is configured, so ${variables.length === 1 ? 'it is' : 'they are'} ` +
    `ignored: ${they} effect only with MAILBOX_REDIS_URL (or MAILBOX_REDIS_SENTINELS with MAILBOX_REDIS_SENTINEL_NAME, ` +
    'or MAILBOX_REDIS_CLUSTER).'
  );
}

/**
 * What a start logs of the environment once its logger exists (serve, heartbeat): each unknown variable, then the
 * Redis-only variables set while no Redis is configured, in one line.
 */
export function logStartWarnings(
  env: NodeJS.ProcessEnv,
  config: Pick<MailboxConfig, 'redisUrl'>,
  logger: { warn(fields: object, message: string): void },
): void {
  logUnknownVariables(env, logger);
  const redisOnly = redisOnlyVariables(env, config);
  if (redisOnly.length > 0) logger.warn({ variables: redisOnly }, redisOnlyWarning(redisOnly));
}
