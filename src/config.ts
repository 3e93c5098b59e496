/** Configuration from the environment (DESIGN section 5); every variable optional, defaults safe (loopback, auth on). */
import { z } from 'zod';
import { MailboxError } from './errors';

const flag = z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off']).transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

export const configSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(7420),
  dataDir: z.string().min(1).default('./data'),
  adminToken: z.string().min(16, 'MAILBOX_ADMIN_TOKEN must be at least 16 characters').optional(),
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
  redisNamespace: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'MAILBOX_REDIS_NAMESPACE must be 1..64 of [A-Za-z0-9_-]').default('mailbox'),
  /**
   * When the Redis views belong to another event log (or stand ahead of this one): 'refuse' to start (default),
   * or 'take-over': rebuild them from this log into a fresh generation, once no projector of the other log is live.
   */
  projectionsOnForeign: z.enum(['refuse', 'take-over'], { error: "MAILBOX_PROJECTIONS_ON_FOREIGN must be 'refuse' or 'take-over'" })
    .default('refuse'),
  strictRecipients: z.boolean().default(false),
  maxBodyBytes: z.coerce.number().int().positive().default(64 * 1024),
  /** How long a command waits for its own events to reach the views (read-your-writes), in ms. */
  awaitProjectionMs: z.coerce.number().int().min(0).default(2000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** HTTP surface limits. Unset maxRequestBytes: 4 x maxBodyBytes + 64 KiB (room for JSON escaping and the other fields). */
  maxRequestBytes: z.coerce.number().int().positive().optional(),
  /** Per-agent token bucket (admin exempt): sustained requests/s and burst; 0 turns the limit off. */
  rateLimitPerSecond: z.coerce.number().min(0).default(50),
  rateLimitBurst: z.coerce.number().int().min(0).default(200),
  requestTimeoutMs: z.coerce.number().int().min(0).default(30_000),
  sseHeartbeatMs: z.coerce.number().int().positive().default(15_000),
  maxWakeStreamsPerAgent: z.coerce.number().int().positive().default(16),
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
  logLevel: 'MAILBOX_LOG_LEVEL',
  maxRequestBytes: 'MAILBOX_MAX_REQUEST_BYTES',
  rateLimitPerSecond: 'MAILBOX_RATE_LIMIT_PER_SECOND',
  rateLimitBurst: 'MAILBOX_RATE_LIMIT_BURST',
  requestTimeoutMs: 'MAILBOX_REQUEST_TIMEOUT_MS',
  sseHeartbeatMs: 'MAILBOX_SSE_HEARTBEAT_MS',
  maxWakeStreamsPerAgent: 'MAILBOX_MAX_WAKE_STREAMS_PER_AGENT',
};

export function parseConfig(input: MailboxConfigInput = {}): MailboxConfig {
  const result = configSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = String(issue.path[0]) as keyof MailboxConfig;
  throw new MailboxError('VALIDATION_FAILED', 'Invalid configuration',
    `${ENV_VARIABLES[key] ?? key}: ${issue.message}`, { field: ENV_VARIABLES[key] ?? key });
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): MailboxConfig {
  const raw: Record<string, unknown> = {};
  for (const [key, variable] of Object.entries(ENV_VARIABLES)) {
    const value = env[variable];
    if (value !== undefined && value !== '') raw[key] = key === 'strictRecipients' ? flag.parse(value.toLowerCase()) : value;
  }
  return parseConfig(raw as MailboxConfigInput);
}
