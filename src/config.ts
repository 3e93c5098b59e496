/** Configuration from the environment (DESIGN section 5); every variable optional, defaults safe (loopback, auth on). */
import { z } from 'zod';
import { MailboxError } from './errors';
import { StartupError } from './startupError';

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

export const configSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(7420),
  dataDir: z.string().min(1).default('./data'),
  adminToken: z
    .string()
    .min(16, 'MAILBOX_ADMIN_TOKEN must be at least 16 characters')
    .regex(/^\S+$/, 'MAILBOX_ADMIN_TOKEN must not contain spaces')
    .optional(),
  /** Unset: SQLite in dataDir. 'memory:' keeps events in memory (tests). esdb:// or kurrentdb://: EventStoreDB. */
  eventStoreUrl: z.string().optional(),
  /** Unset: in-memory projections and wake bus. redis://: Redis. */
  redisUrl: z.string().optional(),
  /** First part of every Redis key and wake channel, so that several mailboxes can share one Redis. */
  /**
   * The longest a Redis command may take before the request answers 503 UNAVAILABLE
   * (Redis down, stopped or unreachable); commands are never queued while disconnected.
   */
  redisTimeoutMs: z.coerce.number().int().positive().default(1000),
  redisNamespace: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'MAILBOX_REDIS_NAMESPACE must be 1..64 of [A-Za-z0-9_-]')
    .default('mailbox'),
  /**
   * When the Redis views belong to another event log (or stand ahead of this one): 'refuse' to start (default),
   * or 'take-over': rebuild them from this log into a fresh generation, once no projector of the other log is live.
   */
  projectionsOnForeign: z
    .enum(['refuse', 'take-over'], { error: "MAILBOX_PROJECTIONS_ON_FOREIGN must be 'refuse' or 'take-over'" })
    .default('refuse'),
  strictRecipients: z.boolean().default(false),
  maxBodyBytes: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  /** How long a command waits for its own events to reach the views (read-your-writes), in ms. */
  awaitProjectionMs: z.coerce.number().int().min(0).default(2000),
  /** How often the task sweeper ends expired tasks and returns lapsed leases (issue 12), in ms; 0 turns it off. */
  taskSweepMs: z.coerce.number().int().min(0).default(5000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** auto: human lines on a terminal, JSON lines otherwise (CLI only; the library takes a logger). */
  logFormat: z.enum(['auto', 'pretty', 'json']).default('auto'),
  /** HTTP surface limits. Unset maxRequestBytes: 4 x maxBodyBytes + 64 KiB (room for JSON escaping and the other fields). */
  maxRequestBytes: z.coerce.number().int().positive().optional(),
  /** Per-agent token bucket (admin exempt): sustained requests/s and burst; 0 turns the limit off. */
  rateLimitPerSecond: z.coerce.number().min(0).default(50),
  rateLimitBurst: z.coerce.number().int().min(0).default(200),
  requestTimeoutMs: z.coerce.number().int().min(0).default(30_000),
  sseHeartbeatMs: z.coerce.number().int().positive().default(15_000),
  maxWakeStreamsPerAgent: z.coerce.number().int().positive().default(16),
  /** How long startup waits for an unreachable Redis or EventStoreDB (retrying with backoff) before giving up, in ms. */
  startupRetryMs: z.coerce.number().int().min(0).default(30_000),
});

export type MailboxConfig = z.output<typeof configSchema>;
export type MailboxConfigInput = z.input<typeof configSchema>;

export const ENV_VARIABLES: Record<keyof MailboxConfig, string> = {
  host: 'MAILBOX_HOST',
  port: 'MAILBOX_PORT',
  dataDir: 'MAILBOX_DATA_DIR',
  adminToken: 'MAILBOX_ADMIN_TOKEN',
  eventStoreUrl: 'MAILBOX_EVENTSTORE_URL',
  redisUrl: 'MAILBOX_REDIS_URL',
  redisNamespace: 'MAILBOX_REDIS_NAMESPACE',
  projectionsOnForeign: 'MAILBOX_PROJECTIONS_ON_FOREIGN',
  redisTimeoutMs: 'MAILBOX_REDIS_TIMEOUT_MS',
  strictRecipients: 'MAILBOX_STRICT_RECIPIENTS',
  maxBodyBytes: 'MAILBOX_MAX_BODY_BYTES',
  awaitProjectionMs: 'MAILBOX_AWAIT_PROJECTION_MS',
  taskSweepMs: 'MAILBOX_TASK_SWEEP_MS',
  logLevel: 'MAILBOX_LOG_LEVEL',
  logFormat: 'MAILBOX_LOG_FORMAT',
  maxRequestBytes: 'MAILBOX_MAX_REQUEST_BYTES',
  rateLimitPerSecond: 'MAILBOX_RATE_LIMIT_PER_SECOND',
  rateLimitBurst: 'MAILBOX_RATE_LIMIT_BURST',
  requestTimeoutMs: 'MAILBOX_REQUEST_TIMEOUT_MS',
  sseHeartbeatMs: 'MAILBOX_SSE_HEARTBEAT_MS',
  maxWakeStreamsPerAgent: 'MAILBOX_MAX_WAKE_STREAMS_PER_AGENT',
  startupRetryMs: 'MAILBOX_STARTUP_RETRY_MS',
};

/** The valid form of each variable, for the one-line startup error ("set MAILBOX_PORT to ..."). */
const VALID_FORM: Partial<Record<keyof MailboxConfig, string>> = {
  host: 'an IP address or host name of this machine (default 127.0.0.1)',
  port: 'an integer 0..65535 (0 picks any free port; default 7420)',
  dataDir: 'a directory path (default ./data)',
  adminToken: '16 or more characters without spaces (or unset it to generate one)',
  strictRecipients: 'true or false (also 1/0, yes/no, on/off)',
  maxBodyBytes: 'a positive integer number of bytes',
  awaitProjectionMs: 'an integer number of milliseconds (0 or more)',
  taskSweepMs: 'an integer number of milliseconds (0 turns the task sweeper off)',
  logLevel: 'one of fatal, error, warn, info, debug, trace, silent',
  logFormat: 'auto, pretty or json',
  maxRequestBytes: 'a positive integer number of bytes',
  rateLimitPerSecond: 'a number of requests per second (0 turns the limit off)',
  rateLimitBurst: 'an integer (0 or more)',
  requestTimeoutMs: 'an integer number of milliseconds (0 or more)',
  sseHeartbeatMs: 'a positive integer number of milliseconds',
  maxWakeStreamsPerAgent: 'a positive integer',
  startupRetryMs: 'an integer number of milliseconds (0: do not retry)',
};

/** Secrets are never echoed back, only described. */
const SECRET_KEYS = new Set<string>(['adminToken']);

function shown(key: string, value: unknown): string {
  if (SECRET_KEYS.has(key)) return `(${String(value).length} characters, not shown)`;
  return `'${String(value)}'`;
}

/** One sentence naming the variable, the bad value and the valid form. */
function configIssueMessage(key: string, value: unknown, issueMessage: string): string {
  const variable = ENV_VARIABLES[key as keyof MailboxConfig] ?? key;
  const form = VALID_FORM[key as keyof MailboxConfig];
  const what = value === undefined ? variable : `${variable}=${shown(key, value)}`;
  return form ? `${what} is not valid: set ${variable} to ${form}.` : `${what} is not valid: ${issueMessage}.`;
}

export function parseConfig(input: MailboxConfigInput = {}): MailboxConfig {
  const result = configSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = String(issue.path[0]) as keyof MailboxConfig;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Invalid configuration',
    configIssueMessage(key, (input as Record<string, unknown>)[key], issue.message),
    { field: ENV_VARIABLES[key] ?? key },
  );
}

/**
 * The configuration from MAILBOX_* variables. A bad value is a StartupError (one line, exit code 2)
 * naming the variable, the value and the valid form; an empty variable counts as unset, a blank one
 * (spaces only) is refused rather than read as 0 or as a token.
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): MailboxConfig {
  const raw: Record<string, unknown> = {};
  for (const [key, variable] of Object.entries(ENV_VARIABLES)) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    if (value.trim() === '') {
      const form = VALID_FORM[key as keyof MailboxConfig] ?? 'a value';
      throw new StartupError(
        `${variable} is blank (only spaces): set it to ${form}${form.includes('unset') ? '' : ', or unset it'}.`,
        { variable },
      );
    }
    if (key === 'strictRecipients') {
      const parsed = flag.safeParse(value.trim().toLowerCase());
      if (!parsed.success) throw new StartupError(configIssueMessage(key, value, ''), { variable });
      raw[key] = parsed.data;
    } else {
      raw[key] = value;
    }
  }
  return parseConfigForStartup(raw as MailboxConfigInput);
}

/** parseConfig for the CLI: a bad value becomes a StartupError (one line, exit code 2). */
export function parseConfigForStartup(input: MailboxConfigInput): MailboxConfig {
  try {
    return parseConfig(input);
  } catch (error) {
    if (error instanceof MailboxError) throw new StartupError(error.message, { variable: error.envelope.field });
    throw error;
  }
}
