/**
 * The MAILBOX_HEARTBEAT_* variables, by the setting each one sets (heartbeatSettings.ts reads them; its HEARTBEAT_ENV).
 * In a module of their own, importing nothing: every CLI start names them among the known variables (a misspelled one
 * is warned of: cli/commands/envWarnings.ts), and a start refused at its settings then does not load the heartbeat's
 * schemas, nor the message schemas they use.
 */
export const HEARTBEAT_VARIABLES = {
  intervalMs: 'MAILBOX_HEARTBEAT_INTERVAL',
  idleMs: 'MAILBOX_HEARTBEAT_IDLE',
  cooldownMs: 'MAILBOX_HEARTBEAT_COOLDOWN',
  wakeGraceMs: 'MAILBOX_HEARTBEAT_WAKE_GRACE',
  stallAfterMs: 'MAILBOX_HEARTBEAT_STALL_AFTER',
  wakeSlaMs: 'MAILBOX_WAKE_SLA_MS',
  optOut: 'MAILBOX_HEARTBEAT_OPT_OUT',
  webhookSecret: 'MAILBOX_HEARTBEAT_WEBHOOK_SECRET',
  webhookAttempts: 'MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS',
  webhookTimeoutMs: 'MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT',
  hook: 'MAILBOX_HEARTBEAT_HOOK',
  hookTimeoutMs: 'MAILBOX_HEARTBEAT_HOOK_TIMEOUT',
  redisUrl: 'MAILBOX_HEARTBEAT_REDIS_URL',
  metricsHost: 'MAILBOX_HEARTBEAT_METRICS_HOST',
  metricsPort: 'MAILBOX_HEARTBEAT_METRICS_PORT',
  projector: 'MAILBOX_HEARTBEAT_PROJECTOR',
} as const;
