/** Configuration from the environment (DESIGN section 5); every variable optional, defaults safe (loopback, auth on). */
import { constants as bufferConstants } from 'node:buffer';
import fs from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';
import { MailboxError } from './errors';
import { StartupError } from './startupError';
import { fromDecimalText, NOT_DECIMAL } from './support/decimalText';
import { durationMeantMs, durationSchema, NOT_A_DURATION } from './support/duration';
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from './support/timerLimit';

/** host:port,host:port (IPv6 in brackets; the port may be left out). */
const HOST_LIST =
  /^\s*(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?\s*(,\s*(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?\s*)*$/;

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
const FLAG_FORM = 'true or false (also 1/0, yes/no, on/off)';

/**
 * The shortest admin token accepted: 128 bits as hex (`openssl rand -hex 16`). It is the operator's bearer credential
 * (every agent's registration, rotation and retirement) and is exempt from the rate limit; the generated one is
 * 256 bits (53 characters), which `openssl rand -hex 32` matches.
 */
export const MIN_ADMIN_TOKEN_CHARS = 32;
export const GOOD_ADMIN_TOKEN = 'e.g. the output of `openssl rand -hex 32`';
const ADMIN_TOKEN_FORM = `${MIN_ADMIN_TOKEN_CHARS} or more characters without spaces, ${GOOD_ADMIN_TOKEN}`;

/**
 * A setting in whole milliseconds (the MAILBOX_*_MS variables but the wake SLA, which takes a duration): a duration
 * given instead (MAILBOX_AWAIT_PROJECTION_MS=2s, 1500ms, "2 s") was told only the decimal form; it is now also told
 * the number it stands for (": did you mean 2000?"), never taken for it.
 */
const milliseconds = <T extends z.ZodType>(schema: T) => fromDecimalText(schema, { meant: durationMeantMs });

/**
 * The wake SLA's default (MAILBOX_WAKE_SLA_MS): the server's unwoken alarm, the heartbeat's escalation and audit
 * verify's comparison of that alarm all count from it, so it is written here once (it was three literals that could drift).
 */
export const DEFAULT_WAKE_SLA_MS = 60_000;

/** MAILBOX_MAX_BODY_BYTES unset: the body limit the checked-in openapi.json states (application/servedLimits.ts). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/**
 * The largest request the server can read: a body is read into one string, and V8's strings end there (2^29 - 24 on
 * 64-bit). MAILBOX_MAX_BODY_BYTES=1000000000 was taken, and a send of 560 MB under it was 500 INTERNAL
 * (ERR_STRING_TOO_LONG) instead of the 413 a body over the limit gets.
 */
export const MAX_READABLE_REQUEST_BYTES = bufferConstants.MAX_STRING_LENGTH;
const READABLE_BYTES = `at most ${MAX_READABLE_REQUEST_BYTES} (the largest request this server can read)`;

export const configSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: fromDecimalText(z.number().int().min(0).max(65535)).default(7420),
  dataDir: z.string().min(1).default('./data'),
  adminToken: z
    .string()
    .min(MIN_ADMIN_TOKEN_CHARS, `MAILBOX_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_CHARS} characters`)
    .regex(/^\S+$/, 'MAILBOX_ADMIN_TOKEN must not contain spaces')
    .optional(),
  /** Unset: SQLite in dataDir. 'memory:' keeps events in memory (tests). esdb:// or kurrentdb://: EventStoreDB. */
  eventStoreUrl: z.string().optional(),
  /**
   * Unset: views without Redis (MAILBOX_VIEWS: the SQLite views file, or memory) and an in-process wake bus. redis:// (one node), redis+sentinel:// or redis-cluster://
   * (see redisTopology.ts); MAILBOX_REDIS_SENTINELS or MAILBOX_REDIS_CLUSTER are folded into it.
   */
  redisUrl: z.string().optional(),
  /** Sentinels (host:port,...) watching the master named by redisSentinelName: another way to write redis+sentinel://. */
  redisSentinels: z.string().regex(HOST_LIST).optional(),
  redisSentinelName: z
    .string()
    .regex(/^[^\s/]+$/)
    .optional(),
  /** Seed nodes (host:port,...) of a Redis Cluster: another way to write redis-cluster://. */
  redisCluster: z.string().regex(HOST_LIST).optional(),
  /** Redis ACL user and password (override any in the URL; the password may come from MAILBOX_REDIS_PASSWORD_FILE). */
  redisUsername: z.string().min(1).optional(),
  redisPassword: z.string().min(1).optional(),
  /** The sentinels' own password, when they have one (requirepass in sentinel.conf). */
  redisSentinelPassword: z.string().min(1).optional(),
  /** TLS to every Redis node (also chosen by a rediss scheme); a CA file (PEM) for a private CA. */
  redisTls: z.boolean().default(false),
  redisTlsCaFile: z.string().min(1).optional(),
  /** First part of every Redis key and wake channel, so that several mailboxes can share one Redis. */
  /**
   * The longest a Redis command may take before the request answers 503 UNAVAILABLE
   * (Redis down, stopped or unreachable); commands are never queued while disconnected.
   */
  redisTimeoutMs: milliseconds(z.number().int().positive().max(MAX_TIMER_MS)).default(1000),
  /**
   * How long opening or writing the SQLite views file waits for a lock another process holds on it (SQLite's busy
   * wait) before it is refused as locked ('Views file locked').
   */
  viewsLockWaitMs: milliseconds(z.number().int().min(0).max(MAX_TIMER_MS)).default(5000),
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
  /**
   * Where the views live without Redis: 'sqlite' (default: a file beside the log, resumed from its checkpoint at
   * start) or 'memory' (rebuilt from the whole log at every start; tests and benchmarks). Unset with a log in memory
   * (memory:): memory. Not used with Redis.
   */
  views: z.enum(['sqlite', 'memory'], { error: "MAILBOX_VIEWS must be 'sqlite' or 'memory'" }).optional(),
  strictRecipients: z.boolean().default(false),
  maxBodyBytes: fromDecimalText(
    z
      .number()
      .int()
      .positive()
      .max(MAX_READABLE_REQUEST_BYTES - 1),
  ).default(DEFAULT_MAX_BODY_BYTES),
  /** How long a command waits for its own events to reach the views (read-your-writes), in ms. */
  awaitProjectionMs: milliseconds(z.number().int().min(0).max(MAX_TIMER_MS)).default(2000),
  /**
   * How often the task sweeper ends expired tasks and returns lapsed leases (issue 12), in ms, besides its pass at the
   * next task due (application/taskSweeper.ts); 0 turns it off.
   */
  taskSweepMs: milliseconds(z.number().int().min(0).max(MAX_TIMER_MS)).default(5000),
  /**
   * With Redis, one node at a time projects (and sweeps, and nudges): the holder of a lease that lasts this long
   * unless renewed (renewed every third of it). A dead holder's job moves to another node within this time.
   */
  projectorLeaseMs: milliseconds(z.number().int().min(300).max(600_000)).default(3000),
  /** This process's name in leases, /readyz and /metrics (default: host name and process id). */
  nodeId: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/)
    .optional(),
  /**
   * A message that woke none of its recipients within this long is unwoken: counted in /metrics, escalated by the
   * heartbeat. A duration (2m) or milliseconds, as the heartbeat and `audit unwoken` read the same variable.
   */
  wakeSlaMs: durationSchema.default(DEFAULT_WAKE_SLA_MS),
  /** How long seen marks gather before they are written as one event per recipient (issue 13), in ms. */
  seenFlushMs: milliseconds(z.number().int().min(1).max(60_000)).default(200),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** auto: human lines on a terminal, JSON lines otherwise (CLI only; the library takes a logger). */
  logFormat: z.enum(['auto', 'pretty', 'json']).default('auto'),
  /** HTTP surface limits. Unset maxRequestBytes: 4 x maxBodyBytes + 64 KiB (room for JSON escaping and the other fields). */
  maxRequestBytes: fromDecimalText(z.number().int().positive().max(MAX_READABLE_REQUEST_BYTES)).optional(),
  /** Per-agent token bucket (admin exempt): sustained requests/s and burst (1 or more); a rate of 0 turns the limit off. */
  rateLimitPerSecond: fromDecimalText(z.number().min(0), { fraction: true }).default(50),
  rateLimitBurst: fromDecimalText(z.number().int().min(1)).default(200),
  /**
   * Per client address (the socket's; no proxy header is trusted): a bearer token this mailbox does not know costs a
   * registry read (on EventStoreDB a network read), so an address may have `refusedTokenBurst` refused at once, refilled
   * at `refusedTokensPerSecond`; beyond, an unknown token is answered 429 RATE_LIMITED without a read. Known tokens
   * never count and are never refused by it. A rate of 0 turns the limit off.
   */
  refusedTokensPerSecond: fromDecimalText(z.number().min(0), { fraction: true }).default(10),
  refusedTokenBurst: fromDecimalText(z.number().int().min(1)).default(100),
  requestTimeoutMs: milliseconds(z.number().int().min(0).max(MAX_TIMER_MS)).default(30_000),
  sseHeartbeatMs: milliseconds(z.number().int().positive().max(MAX_TIMER_MS)).default(15_000),
  maxWakeStreamsPerAgent: fromDecimalText(z.number().int().positive()).default(16),
  /** How long startup waits for an unreachable Redis or EventStoreDB (retrying with backoff) before giving up, in ms. */
  startupRetryMs: milliseconds(z.number().int().min(0).max(MAX_TIMER_MS)).default(30_000),
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
  redisSentinels: 'MAILBOX_REDIS_SENTINELS',
  redisSentinelName: 'MAILBOX_REDIS_SENTINEL_NAME',
  redisCluster: 'MAILBOX_REDIS_CLUSTER',
  redisUsername: 'MAILBOX_REDIS_USERNAME',
  redisPassword: 'MAILBOX_REDIS_PASSWORD',
  redisSentinelPassword: 'MAILBOX_REDIS_SENTINEL_PASSWORD',
  redisTls: 'MAILBOX_REDIS_TLS',
  redisTlsCaFile: 'MAILBOX_REDIS_TLS_CA_FILE',
  redisNamespace: 'MAILBOX_REDIS_NAMESPACE',
  projectionsOnForeign: 'MAILBOX_PROJECTIONS_ON_FOREIGN',
  views: 'MAILBOX_VIEWS',
  redisTimeoutMs: 'MAILBOX_REDIS_TIMEOUT_MS',
  viewsLockWaitMs: 'MAILBOX_VIEWS_LOCK_WAIT_MS',
  strictRecipients: 'MAILBOX_STRICT_RECIPIENTS',
  maxBodyBytes: 'MAILBOX_MAX_BODY_BYTES',
  awaitProjectionMs: 'MAILBOX_AWAIT_PROJECTION_MS',
  taskSweepMs: 'MAILBOX_TASK_SWEEP_MS',
  projectorLeaseMs: 'MAILBOX_PROJECTOR_LEASE_MS',
  nodeId: 'MAILBOX_NODE_ID',
  wakeSlaMs: 'MAILBOX_WAKE_SLA_MS',
  seenFlushMs: 'MAILBOX_SEEN_FLUSH_MS',
  logLevel: 'MAILBOX_LOG_LEVEL',
  logFormat: 'MAILBOX_LOG_FORMAT',
  maxRequestBytes: 'MAILBOX_MAX_REQUEST_BYTES',
  rateLimitPerSecond: 'MAILBOX_RATE_LIMIT_PER_SECOND',
  rateLimitBurst: 'MAILBOX_RATE_LIMIT_BURST',
  refusedTokensPerSecond: 'MAILBOX_REFUSED_TOKENS_PER_SECOND',
  refusedTokenBurst: 'MAILBOX_REFUSED_TOKEN_BURST',
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
  adminToken: `${ADMIN_TOKEN_FORM} (or unset it to generate one)`,
  strictRecipients: FLAG_FORM,
  // MAILBOX_VIEWS=redis was told only these two: the views are in Redis when MAILBOX_REDIS_URL names one.
  views:
    'sqlite (the default: views in a file beside the log, resumed at start) or memory (rebuilt from the log at every ' +
    'start; for tests and benchmarks); for views in Redis, unset it and set MAILBOX_REDIS_URL',
  redisSentinels: 'the sentinels as host:port,host:port (with MAILBOX_REDIS_SENTINEL_NAME)',
  redisSentinelName: 'the master name the sentinels watch (sentinel monitor <name> ...), without spaces or slashes',
  redisCluster: 'seed nodes of the cluster as host:port,host:port',
  redisTls: FLAG_FORM,
  redisTlsCaFile: 'the path of a PEM file with the CA certificate(s) of the Redis servers',
  redisTimeoutMs: `a positive integer number of milliseconds, ${MAX_TIMER_TEXT}`,
  viewsLockWaitMs: `an integer number of milliseconds, 0 or more and ${MAX_TIMER_TEXT}`,
  maxBodyBytes: `a positive integer number of bytes, less than ${MAX_READABLE_REQUEST_BYTES} (the largest request this server can read)`,
  awaitProjectionMs: `an integer number of milliseconds, 0 or more and ${MAX_TIMER_TEXT}`,
  taskSweepMs: `an integer number of milliseconds, ${MAX_TIMER_TEXT} (0 turns the task sweeper off)`,
  projectorLeaseMs:
    'an integer number of milliseconds from 300 to 600000 (default 3000): how long a projector, sweeper or heartbeat ' +
    'lease lasts unless renewed, hence how long a dead leader keeps the job',
  nodeId: '1..64 of [A-Za-z0-9._-] (default: host name and process id)',
  wakeSlaMs:
    `a duration such as 90s, 2m or 1h, or an integer number of milliseconds (default ${DEFAULT_WAKE_SLA_MS}): how ` +
    'long a message may wake nobody',
  seenFlushMs: 'an integer number of milliseconds, 1 to 60000',
  logLevel: 'one of fatal, error, warn, info, debug, trace, silent',
  logFormat: 'auto, pretty or json',
  maxRequestBytes: `a positive integer number of bytes, ${READABLE_BYTES}`,
  rateLimitPerSecond: 'a number of requests per second (0 turns the limit off)',
  rateLimitBurst:
    'an integer of 1 or more (the requests an agent may make at once); to turn the rate limit off, set ' +
    'MAILBOX_RATE_LIMIT_PER_SECOND=0 instead',
  refusedTokensPerSecond: 'a number of refused bearer tokens per second per client address (0 turns the limit off)',
  refusedTokenBurst:
    'an integer of 1 or more (the refused bearer tokens a client address may send at once); to turn the limit off, ' +
    'set MAILBOX_REFUSED_TOKENS_PER_SECOND=0 instead',
  requestTimeoutMs: `an integer number of milliseconds, 0 or more and ${MAX_TIMER_TEXT}`,
  sseHeartbeatMs: `a positive integer number of milliseconds, ${MAX_TIMER_TEXT}`,
  maxWakeStreamsPerAgent: 'a positive integer',
  startupRetryMs: `an integer number of milliseconds, ${MAX_TIMER_TEXT} (0: do not retry)`,
};

/**
 * What to set a variable to, for the variables whose value is checked elsewhere (the store URLs, by startupChecks.ts)
 * or by a schema of its own words: said when it is set but empty, with what leaving it unset means.
 */
const FORM_WHEN_EMPTY: Partial<Record<keyof MailboxConfig, string>> = {
  eventStoreUrl:
    'esdb://host:2113?tls=false (EventStoreDB), sqlite:<path to a file> or memory:, or unset it for the SQLite log ' +
    'in the data dir',
  redisUrl:
    'redis://host:6379 (rediss:// for TLS), redis+sentinel://host:26379,host:26379/<master name> or ' +
    'redis-cluster://host:6379,host:6379, or unset it for no Redis (the views in the SQLite views file, wakes in process)',
  // VALID_FORM's 'for views in Redis, unset it' would read as the remedy of an empty value: here unset is the default.
  views:
    'sqlite (views in a file beside the log, resumed at start) or memory (rebuilt from the log at every start; for ' +
    'tests and benchmarks), or unset it for the default (sqlite; with MAILBOX_REDIS_URL set, the views are in Redis)',
  redisUsername: "the Redis ACL user, or unset it for the URL's",
  redisPassword: "the Redis password, or unset it for the URL's",
  redisSentinelPassword: "the sentinels' own password, or unset it when they have none",
  redisNamespace: '1..64 of [A-Za-z0-9_-], or unset it for the default (mailbox)',
  projectionsOnForeign: 'refuse or take-over, or unset it for the default (refuse)',
};

/** Secrets are never echoed back, only described. */
const SECRET_KEYS = new Set<string>(['adminToken', 'redisPassword', 'redisSentinelPassword']);
const FLAG_KEYS = new Set<string>(['strictRecipients', 'redisTls']);

/** Secrets may come from a file instead (Docker secrets): MAILBOX_ADMIN_TOKEN_FILE=/run/secrets/admin_token. */
export const SECRET_FILE_VARIABLES: string[] = [...SECRET_KEYS].map((key) => `${ENV_VARIABLES[key as keyof MailboxConfig]}_FILE`);

function shown(key: string, value: unknown): string {
  if (SECRET_KEYS.has(key)) return `(${String(value).length} characters, not shown)`;
  return `'${String(value)}'`;
}

/**
 * Where a setting came from when not from its variable, as the user wrote it (`serve --port abc`: '--port'), so that
 * a refusal names what the user typed, not a variable that may hold another value or none.
 */
export type SettingSources = Partial<Record<keyof MailboxConfig, string>>;

/**
 * The end of a refusal's sentence after the valid form: '.', or what is wrong with how the value is written.
 * '0x1DB1' or '1e3' may well mean a number in range: the form alone would not say what is wrong with it.
 * A duration with spaces around or inside it ('2 m') is told so, as the heartbeat tells it (the value is shown already).
 * A duration where milliseconds are asked ('2s') is told the number it stands for, last (": did you mean 2000?").
 */
function writtenNote(issueMessage: string): string {
  if (issueMessage.startsWith(NOT_DECIMAL))
    return `, ${NOT_DECIMAL.replace(/^must be /, '')}${/: did you mean \d+\?$/.exec(issueMessage)?.[0] ?? '.'}`;
  if (issueMessage.startsWith(`${NOT_A_DURATION},`))
    return `${issueMessage.slice(NOT_A_DURATION.length).replace(/, not '[^]*'$/, '')}.`;
  return '.';
}

/** One sentence naming the variable (or the flag it came from), the bad value and the valid form. */
function configIssueMessage(key: string, value: unknown, issueMessage: string, sources: SettingSources = {}): string {
  const variable = sources[key as keyof MailboxConfig] ?? ENV_VARIABLES[key as keyof MailboxConfig] ?? key;
  const form = VALID_FORM[key as keyof MailboxConfig];
  const what = value === undefined ? variable : `${variable}=${shown(key, value)}`;
  const written = writtenNote(issueMessage);
  const flag = sources[key as keyof MailboxConfig];
  if (flag !== undefined && value !== undefined && form) return flagIssueMessage(key, flag, value, `${form}${written}`);
  return form ? `${what} is not valid: set ${variable} to ${form}${written}` : `${what} is not valid: ${issueMessage}.`;
}

/** What a flag's value is not, when the flag is refused: `--port: 'abc' is not a port number: ...`. */
const FLAG_VALUE_NOUN: Partial<Record<keyof MailboxConfig, string>> = { port: 'a port number' };

/**
 * A refused flag as a command line says it: the flag, then the value as typed, then what to give instead
 * (`--port: 'abc' is not a port number: give --port an integer 0..65535 ...`). It was said as a variable is
 * (`--port='abc' is not valid: set --port to ...`), a form no shell takes for a flag.
 */
function flagIssueMessage(key: string, flag: string, value: unknown, form: string): string {
  const not = String(value) === '' ? 'is empty' : `is not ${FLAG_VALUE_NOUN[key as keyof MailboxConfig] ?? 'valid'}`;
  return `${flag}: ${shown(key, value)} ${not}: give ${flag} ${form}`;
}

export function parseConfig(input: MailboxConfigInput = {}, sources: SettingSources = {}): MailboxConfig {
  const result = configSchema.safeParse(input);
  if (result.success) return withRequestLimit(withViews(withRedisTopology(result.data)));
  const issue = result.error.issues[0];
  const key = String(issue.path[0]) as keyof MailboxConfig;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Invalid configuration',
    configIssueMessage(key, (input as Record<string, unknown>)[key], issue.message, sources),
    { field: ENV_VARIABLES[key] ?? key },
  );
}

const OPTION_OF_VARIABLE = new Map<string, string>(Object.entries(ENV_VARIABLES).map(([key, variable]) => [variable, key]));

/**
 * A configuration refusal as createMailbox's caller reads it: each MAILBOX_* variable named by the option that sets it
 * (MAILBOX_DATA_DIR: dataDir), and "unset it" said as leaving the option out. The library's caller sets no variable:
 * `createMailbox({ dataDir: 5 })` was told "MAILBOX_DATA_DIR='5' is not valid: set MAILBOX_DATA_DIR to ...".
 */
export function inOptionTerms(text: string): string {
  return text
    .replace(/\bleave it unset\b/g, 'leave it out')
    .replace(/\bunset (it|MAILBOX_[A-Z_]+)\b/g, (_, what: string) => `leave ${what} out`)
    .replace(/\bMAILBOX_[A-Z_]+\b/g, (variable) => OPTION_OF_VARIABLE.get(variable) ?? variable);
}

/** The option (dataDir) a variable (MAILBOX_DATA_DIR) stands for, else the name as given. */
export const optionOf = (variable: string): string => OPTION_OF_VARIABLE.get(variable) ?? variable;

/** The valid form of an option that createMailbox takes as another type than the variable's text (a boolean, not 'yes'). */
const OPTION_FORM: Partial<Record<keyof MailboxConfig, string>> = {
  strictRecipients: 'true or false',
  redisTls: 'true or false',
  adminToken: `${ADMIN_TOKEN_FORM}, or leave it out for a mailbox that no token administers`,
};

/** An option's value as its caller wrote it: a string quoted, anything else with its type (`5 (a number)`). */
function optionValue(key: string, value: unknown): string {
  const type =
    value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  if (typeof value === 'string') return shown(key, value);
  if (SECRET_KEYS.has(key) || value === null || typeof value === 'object' || typeof value === 'function') return type;
  return `${String(value)} (${type})`;
}

/**
 * createMailbox's options, checked as parseConfig checks them, refused in the caller's terms: the option's name, its
 * value (with its type: dataDir: 5 is not the text '5') and the valid form, `field` the option; nothing is opened.
 */
export function parseOptions(input: MailboxConfigInput = {}): MailboxConfig {
  const result = configSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = String(issue.path[0]) as keyof MailboxConfig;
    const form = OPTION_FORM[key] ?? VALID_FORM[key] ?? FORM_WHEN_EMPTY[key];
    const value = optionValue(key, (input as Record<string, unknown>)[key]);
    const sentence = form
      ? `give ${key} ${inOptionTerms(form)}${writtenNote(issue.message)}`
      : `${inOptionTerms(issue.message)}.`;
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `createMailbox option ${key}: ${value} is not valid: ${sentence} Nothing was opened.`,
      { field: key },
    );
  }
  try {
    return withRequestLimit(withViews(withRedisTopology(result.data)));
  } catch (error) {
    if (!(error instanceof MailboxError)) throw error;
    const { field } = error.envelope;
    throw new MailboxError('VALIDATION_FAILED', 'Invalid configuration', `${inOptionTerms(error.message)} Nothing was opened.`, {
      field: typeof field === 'string' ? optionOf(field) : field,
    });
  }
}

function topologyConflict(message: string, key: keyof MailboxConfig): MailboxError {
  return new MailboxError('VALIDATION_FAILED', 'Invalid configuration', message, { field: ENV_VARIABLES[key] });
}

/**
 * Folds MAILBOX_REDIS_SENTINELS (+ _NAME) or MAILBOX_REDIS_CLUSTER into the Redis URL, so that the
 * rest of the mailbox reads one value; more than one way to name Redis at once is refused.
 */
function withRedisTopology(config: MailboxConfig): MailboxConfig {
  const { redisSentinels, redisSentinelName, redisCluster } = config;
  // A configuration folded already (parsed again: `mailbox serve` parses the environment's with its flags on top) holds
  // the URL its own sentinels or cluster made: that is one way of naming Redis, not two. Read as two, every `mailbox
  // serve` on MAILBOX_REDIS_SENTINELS or MAILBOX_REDIS_CLUSTER (docker-compose.scaled.yml's API nodes) refused to start:
  // "MAILBOX_REDIS_URL and MAILBOX_REDIS_SENTINELS are both set", with MAILBOX_REDIS_URL set nowhere.
  const redisUrl = config.redisUrl !== undefined && config.redisUrl === foldedRedisUrl(config) ? undefined : config.redisUrl;
  const named = [
    redisUrl !== undefined && 'MAILBOX_REDIS_URL',
    redisSentinels !== undefined && 'MAILBOX_REDIS_SENTINELS',
    redisCluster !== undefined && 'MAILBOX_REDIS_CLUSTER',
  ].filter((name): name is string => name !== false);
  if (named.length > 1) {
    throw topologyConflict(
      `${named.join(' and ')} are both set: name Redis one way only (MAILBOX_REDIS_URL=redis://host:6379, ` +
        'MAILBOX_REDIS_SENTINELS=host:26379,... with MAILBOX_REDIS_SENTINEL_NAME, or MAILBOX_REDIS_CLUSTER=host:6379,...).',
      redisSentinels !== undefined ? 'redisSentinels' : 'redisCluster',
    );
  }
  if ((redisSentinels === undefined) !== (redisSentinelName === undefined)) {
    throw topologyConflict(
      redisSentinels === undefined
        ? 'MAILBOX_REDIS_SENTINEL_NAME is set without MAILBOX_REDIS_SENTINELS: set MAILBOX_REDIS_SENTINELS to the sentinels as host:26379,host:26379, or unset the name.'
        : 'MAILBOX_REDIS_SENTINELS is set without MAILBOX_REDIS_SENTINEL_NAME: set it to the master name the sentinels watch (sentinel monitor <name> ...).',
      redisSentinels === undefined ? 'redisSentinels' : 'redisSentinelName',
    );
  }
  const folded = foldedRedisUrl(config);
  return folded === undefined ? config : { ...config, redisUrl: folded };
}

/** The URL MAILBOX_REDIS_SENTINELS (+ _NAME) or MAILBOX_REDIS_CLUSTER name Redis by; undefined when neither is set. */
function foldedRedisUrl({ redisSentinels, redisSentinelName, redisCluster, redisTls }: MailboxConfig): string | undefined {
  const hosts = (list: string) =>
    list
      .split(',')
      .map((host) => host.trim())
      .join(',');
  const scheme = redisTls ? 'rediss' : 'redis';
  if (redisSentinels !== undefined && redisSentinelName !== undefined)
    return `${scheme}+sentinel://${hosts(redisSentinels)}/${redisSentinelName}`;
  if (redisCluster !== undefined) return `${scheme}-cluster://${hosts(redisCluster)}`;
  return undefined;
}

/**
 * A request limit at or below the body limit refuses a body the mailbox takes before it is read (413 on the request,
 * never the body's own 400 that says the body limit): MAILBOX_MAX_REQUEST_BYTES=100 was taken silently beside the
 * default 64 KiB body limit. The default (unset) is always above it: requestLimitOf in adapters/http/httpContext.ts.
 */
function withRequestLimit(config: MailboxConfig): MailboxConfig {
  const { maxRequestBytes, maxBodyBytes } = config;
  if (maxRequestBytes === undefined || maxRequestBytes > maxBodyBytes) return config;
  throw topologyConflict(
    `MAILBOX_MAX_REQUEST_BYTES=${maxRequestBytes} is not above MAILBOX_MAX_BODY_BYTES=${maxBodyBytes}: a message body the ` +
      'mailbox takes would be refused as a request over the limit before it is read (a request holds the body, ' +
      `JSON-escaped, and the other fields). Set MAILBOX_MAX_REQUEST_BYTES above ${maxBodyBytes} (unset, it is 4 x ` +
      `MAILBOX_MAX_BODY_BYTES + 65536 = ${Math.min(4 * maxBodyBytes + 65536, MAX_READABLE_REQUEST_BYTES)}), or lower MAILBOX_MAX_BODY_BYTES.`,
    'maxRequestBytes',
  );
}

/** MAILBOX_VIEWS chooses where the views live when nothing else does: with Redis, or a log in memory, it is refused. */
function withViews(config: MailboxConfig): MailboxConfig {
  if (config.views === undefined) return config;
  if (config.redisUrl !== undefined) {
    throw topologyConflict(
      `MAILBOX_VIEWS='${config.views}' is set with Redis (${redisVariable(config)}), where the views live in Redis: unset MAILBOX_VIEWS.`,
      'views',
    );
  }
  if (config.views === 'sqlite' && config.eventStoreUrl === 'memory:') {
    throw topologyConflict(
      "MAILBOX_VIEWS='sqlite' keeps views on disk, but MAILBOX_EVENTSTORE_URL='memory:' keeps the log in memory (gone at exit): " +
        'set MAILBOX_VIEWS=memory, or unset MAILBOX_EVENTSTORE_URL for the SQLite log.',
      'views',
    );
  }
  return config;
}

/** The variable that named Redis (for errors that say what to fix). */
export function redisVariable(config: MailboxConfig): string {
  if (config.redisCluster !== undefined) return ENV_VARIABLES.redisCluster;
  return config.redisSentinels !== undefined ? ENV_VARIABLES.redisSentinels : ENV_VARIABLES.redisUrl;
}

/**
 * MAILBOX_X_FILE for a secret X: the file's content, less one trailing newline (as `echo` and editors leave); undefined
 * when the _FILE variable is unset or empty. A file that cannot be read, is empty or blank (a Docker secret never
 * populated: it was taken as unset, and the server generated an admin token of its own), or holds a value X refuses
 * is a StartupError naming the _FILE variable and the file.
 */
export function secretFromFile(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const fileVariable = `${variable}_FILE`;
  const file = env[fileVariable];
  if (file === undefined || file === '') return undefined;
  if (env[variable] !== undefined && env[variable] !== '') {
    throw new StartupError(`${variable} and ${fileVariable} are both set: keep one (the _FILE form reads a Docker secret).`, {
      variable,
    });
  }
  let secret: string;
  try {
    secret = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new StartupError(
      `${fileVariable}='${file}' cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): ` +
        'set it to a readable file holding the secret (e.g. /run/secrets/<name>), or unset it.',
      { variable: fileVariable },
      { cause: error },
    );
  }
  if (secret.trim() === '') {
    throw new StartupError(
      `${fileVariable}='${file}' is ${secret === '' ? 'empty' : 'blank (only spaces)'}: write the secret in it ` +
        `(a Docker secret not populated?), or unset ${fileVariable}.`,
      { variable: fileVariable },
    );
  }
  const key = (Object.keys(ENV_VARIABLES) as Array<keyof MailboxConfig>).find((name) => ENV_VARIABLES[name] === variable);
  const checked = key === undefined ? undefined : configSchema.shape[key].safeParse(secret);
  if (key !== undefined && checked?.success === false) {
    throw new StartupError(
      `${fileVariable}='${file}' holds ${shown(key, secret)}, which is not valid: ${checked.error.issues[0].message}; ` +
        `write a valid secret in it${key === 'adminToken' ? ` (${ADMIN_TOKEN_FORM})` : ''}, or unset ${fileVariable}.`,
      { variable: fileVariable },
    );
  }
  return secret;
}

/**
 * A boolean variable (MAILBOX_STRICT_RECIPIENTS, MAILBOX_REDIS_TLS, MAILBOX_HEARTBEAT): true for 1/true/yes/on, false
 * for 0/false/no/off (any case), undefined when unset; anything else (empty or blank included) is a StartupError.
 */
export function flagFromEnv(env: NodeJS.ProcessEnv, variable: string): boolean | undefined {
  const value = env[variable];
  if (value === undefined) return undefined;
  refuseEmpty(env, variable, FLAG_FORM);
  return readFlag(variable, value);
}

function readFlag(variable: string, value: string): boolean {
  const parsed = flag.safeParse(value.trim().toLowerCase());
  if (!parsed.success)
    throw new StartupError(`${variable}='${value}' is not valid: set ${variable} to ${FLAG_FORM}.`, { variable });
  return parsed.data;
}

/**
 * A variable set but empty, or blank (spaces only): refused, never read as unset. `MAILBOX_REDIS_URL=${REDIS_URL}` with
 * REDIS_URL unset (a shell, a compose file, a systemd unit) started a production node on the embedded SQLite log and
 * views, acknowledging messages into a container's disk; an empty MAILBOX_DATA_DIR was ./data, an empty
 * MAILBOX_ADMIN_TOKEN a generated token. Said as one line naming the variable and the two ways out.
 */
function emptyRefusal(variable: string, value: string, form: string): StartupError {
  const what = value === '' ? 'is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?)' : 'is blank (only spaces)';
  return new StartupError(`${variable} ${what}: set it to ${form}${form.includes('unset') ? '' : ', or unset it'}.`, {
    variable,
  });
}

/**
 * The rule for every MAILBOX_* variable, those of the configuration table and those a tool reads for itself (the
 * heartbeat's MAILBOX_HEARTBEAT_*): set but empty or blank, it is refused (emptyRefusal), `form` saying what to set it to
 * (add 'or unset it for ...' to say what unset means; else ', or unset it' is added).
 */
export function refuseEmpty(env: NodeJS.ProcessEnv, variable: string, form: string): void {
  const value = env[variable];
  if (value !== undefined && value.trim() === '') throw emptyRefusal(variable, value, form);
}

/**
 * The form a variable's value takes, for the refusal of an empty one (the heartbeat's MAILBOX_WAKE_SLA_MS too): its
 * words for an empty value first, where what unset means differs from what a bad value is told (MAILBOX_VIEWS).
 */
export function formOf(key: keyof MailboxConfig): string {
  return FORM_WHEN_EMPTY[key] ?? VALID_FORM[key] ?? 'a value';
}

/**
 * The configuration from MAILBOX_* variables. A bad value is a StartupError (one line, exit code 2)
 * naming the variable, the value and the valid form; a variable set but empty or blank (spaces only) is
 * refused (emptyRefusal), never read as unset, as 0 or as a token: to take a default, leave the variable unset.
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): MailboxConfig {
  for (const [key, variable] of Object.entries(ENV_VARIABLES)) refuseEmpty(env, variable, formOf(key as keyof MailboxConfig));
  for (const fileVariable of SECRET_FILE_VARIABLES)
    refuseEmpty(env, fileVariable, 'the path of a file holding the secret (e.g. /run/secrets/<name>)');
  const raw: Record<string, unknown> = {};
  for (const [key, variable] of Object.entries(ENV_VARIABLES)) {
    const value = SECRET_KEYS.has(key) ? (secretFromFile(env, variable) ?? env[variable]) : env[variable];
    if (value === undefined) continue;
    raw[key] = FLAG_KEYS.has(key) ? readFlag(variable, value) : value;
  }
  return parseConfigForStartup(raw as MailboxConfigInput);
}

/** parseConfig for the CLI: a bad value becomes a StartupError (one line, exit code 2). */
export function parseConfigForStartup(input: MailboxConfigInput, sources: SettingSources = {}): MailboxConfig {
  try {
    return parseConfig(input, sources);
  } catch (error) {
    if (error instanceof MailboxError) throw new StartupError(error.message, { variable: error.envelope.field });
    throw error;
  }
}

/** This process's name in leases, /readyz and /metrics: MAILBOX_NODE_ID, else host name and process id. */
export function nodeIdOf(config: Pick<MailboxConfig, 'nodeId'>): string {
  return config.nodeId ?? `${hostname()}-${process.pid}`;
}
