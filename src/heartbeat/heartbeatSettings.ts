/**
 * Heartbeat daemon settings: one strict zod schema shared by flags, the
 * environment and the in-process API. Unknown keys (also in the per-agent
 * file) and webhooks without a signing secret are rejected loudly.
 */
import { z } from 'zod';
import { identitySchema } from '../commands/schemas';
import { parseInput } from '../commands/validation';
import { DEFAULT_WAKE_SLA_MS, formOf, refuseEmpty } from '../config';
import { MailboxError } from '../errors';
import { fromDecimalText } from '../support/decimalText';
import { timerDurationSchema, durationSchema } from '../support/duration';
import type { NudgePolicy } from './nudgeDecider';
import { HEARTBEAT_VARIABLES } from './heartbeatVariables';

const identityList = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : value,
  z.array(identitySchema),
);

/** An argv array (JSON-encoded in env/flags), or one executable path; never split on spaces, never run by a shell. */
const argvSchema = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    if (!value.trim().startsWith('[')) return [value];
    try {
      return JSON.parse(value);
    } catch {
      return value; // not JSON: fails the array check below with a message naming the field
    }
  },
  z.array(z.string().min(1), { message: 'must be a command path, or a JSON array ["command", "arg", ...]' }).min(1),
);

/** A whole number from a flag, a variable or the API: text in plain decimal digits only (support/decimalText.ts). */
const count = (min: number, max: number) => fromDecimalText(z.number().int().min(min).max(max));

export const agentSettingsSchema = z.strictObject({
  optOut: z.boolean().default(false),
  webhook: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }).optional(),
});

export const heartbeatSettingsSchema = z
  .strictObject({
    intervalMs: timerDurationSchema.pipe(z.number().min(10, 'must be a duration of at least 10ms')).default(60_000),
    idleMs: durationSchema.default(10 * 60_000),
    cooldownMs: durationSchema.default(15 * 60_000),
    wakeGraceMs: durationSchema.default(60_000),
    stallAfterMs: durationSchema.pipe(z.number().min(1, 'must be a duration of at least 1ms')).default(60_000),
    /** A message that woke none of its recipients within this long is escalated through their nudge targets, once. */
    wakeSlaMs: durationSchema.default(DEFAULT_WAKE_SLA_MS),
    optOut: identityList.default([]),
    agents: z.record(identitySchema, agentSettingsSchema).default({}),
    webhookSecret: z.string().min(16, 'must be at least 16 characters').optional(),
    webhookAttempts: count(1, 20).default(5),
    webhookBackoffMs: timerDurationSchema.default(500),
    webhookMaxBackoffMs: timerDurationSchema.default(30_000),
    webhookTimeoutMs: timerDurationSchema.pipe(z.number().min(1, 'must be a duration of at least 1ms')).default(5000),
    hook: argvSchema.optional(),
    hookTimeoutMs: timerDurationSchema.pipe(z.number().min(1, 'must be a duration of at least 1ms')).default(10_000),
    /** Where nudges are published (mailbox:heartbeat:<identity>); defaults to MAILBOX_REDIS_URL. */
    redisUrl: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a Redis URL, starting with redis:// or rediss://')
      .optional(),
    metricsHost: z.string().min(1).default('127.0.0.1'),
    /** null: no metrics endpoint. */
    metricsPort: z.preprocess((v) => (v === 'off' || v === false ? null : v), count(0, 65535).nullable()).default(7421),
    deliveryConcurrency: count(1, 1000).default(32),
    /** auto: run a projector in the daemon only when the views live in its memory (no Redis). */
    projector: z.enum(['auto', 'on', 'off']).default('auto'),
  })
  .superRefine((settings, context) => {
    const hooked = Object.entries(settings.agents).filter(([, agent]) => agent.webhook !== undefined);
    if (hooked.length > 0 && settings.webhookSecret === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['webhookSecret'],
        message:
          `webhooks are configured for ${hooked[0][0]}${hooked.length > 1 ? ` and ${hooked.length - 1} more` : ''}; ` +
          'set MAILBOX_HEARTBEAT_WEBHOOK_SECRET so that receivers can verify the signature',
      });
    }
  });

export type HeartbeatSettings = z.output<typeof heartbeatSettingsSchema>;
export type HeartbeatSettingsInput = z.input<typeof heartbeatSettingsSchema>;

/** The variable of each setting read from the environment (heartbeatVariables.ts: each one names a setting). */
export const HEARTBEAT_ENV: Partial<Record<keyof HeartbeatSettings, string>> = HEARTBEAT_VARIABLES satisfies {
  [K in keyof typeof HEARTBEAT_VARIABLES]: K extends keyof HeartbeatSettings ? string : never;
};

export function parseHeartbeatSettings(input: unknown): HeartbeatSettings {
  try {
    return parseInput(heartbeatSettingsSchema, input ?? {}, 'heartbeat settings');
  } catch (error) {
    // The shared error builder cannot see through z.record: name the per-agent keys here.
    if (error instanceof MailboxError && error.code === 'UNKNOWN_FIELD' && String(error.envelope.field).startsWith('agents.')) {
      const allowed = Object.keys(agentSettingsSchema.shape);
      const { error: title, code: _code, message: _message, ...details } = error.envelope;
      throw new MailboxError(
        'UNKNOWN_FIELD',
        title,
        `heartbeat settings: per-agent settings do not accept '${details.field}'; allowed: ${allowed.join(', ')}.`,
        { ...details, allowed },
      );
    }
    throw error;
  }
}

/** Settings from MAILBOX_HEARTBEAT_* variables (agents come from a file; see the CLI). */
const DURATION = 'a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds';

/** What each variable is set to, for the refusal of an empty one (with what unset means). */
export const HEARTBEAT_FORM: Partial<Record<keyof HeartbeatSettings, string>> & { agentsFile: string } = {
  intervalMs: `${DURATION}, or unset it for the default (60s)`,
  idleMs: `${DURATION}, or unset it for the default (10m)`,
  cooldownMs: `${DURATION}, or unset it for the default (15m)`,
  wakeGraceMs: `${DURATION}, or unset it for the default (60s)`,
  stallAfterMs: `${DURATION}, or unset it for the default (60s)`,
  wakeSlaMs: formOf('wakeSlaMs'), // a variable of the configuration table too: its wording
  optOut: 'comma-separated identities never to nudge (e.g. @b,@c), or unset it to opt out nobody',
  webhookSecret: 'the secret webhooks are signed with (16 characters or more), or unset it when no agent has a webhook',
  webhookAttempts: 'a number of tries from 1 to 20, or unset it for the default (5)',
  webhookTimeoutMs: `${DURATION}, or unset it for the default (5s)`,
  hook: 'a command run per nudge (a path, or a JSON argv array), or unset it for no hook',
  hookTimeoutMs: `${DURATION}, or unset it for the default (10s)`,
  redisUrl: "a Redis URL (redis:// or rediss://), or unset it to publish nudges on the mailbox's own Redis, if any",
  metricsHost: 'an address to listen on, or unset it for the default (127.0.0.1)',
  metricsPort: 'a port from 0 to 65535 or off, or unset it for the default (7421)',
  projector: 'auto, on or off, or unset it for the default (auto)',
  agentsFile: 'the path of a per-agent JSON file, or unset it for none',
};

/**
 * The MAILBOX_HEARTBEAT_* variables that are set. One set but empty or blank is refused, as every MAILBOX_* variable is
 * (config.ts refuseEmpty): MAILBOX_HEARTBEAT_INTERVAL= was read as unset (every 60 s), an empty
 * MAILBOX_HEARTBEAT_REDIS_URL published on the mailbox's own Redis, each without a word.
 */
export function heartbeatSettingsFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [key, variable] of Object.entries(HEARTBEAT_ENV) as Array<[keyof HeartbeatSettings, string]>) {
    refuseEmpty(env, variable, HEARTBEAT_FORM[key] ?? 'a value');
    const value = env[variable];
    if (value !== undefined) raw[key] = value;
  }
  return raw;
}

export function nudgePolicy(settings: HeartbeatSettings): NudgePolicy {
  const optedOut = new Set(settings.optOut);
  for (const [identity, agent] of Object.entries(settings.agents)) if (agent.optOut) optedOut.add(identity);
  return { idleMs: settings.idleMs, cooldownMs: settings.cooldownMs, wakeGraceMs: settings.wakeGraceMs, optedOut };
}

export function webhookUrls(settings: HeartbeatSettings): Map<string, string> {
  const urls = new Map<string, string>();
  for (const [identity, agent] of Object.entries(settings.agents)) if (agent.webhook) urls.set(identity, agent.webhook);
  return urls;
}
