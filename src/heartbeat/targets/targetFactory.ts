/** Builds the nudge targets the settings ask for (the heartbeat's adapter selection). */
import type { Logger } from 'pino';
import type { HeartbeatMetrics } from '../heartbeatMetrics';
import { webhookUrls, type HeartbeatSettings } from '../heartbeatSettings';
import type { NudgeTarget } from '../nudgeTarget';
import { CommandHookTarget } from './commandHookTarget';
import { RedisChannelTarget } from './redisChannelTarget';
import { WebhookTarget } from './webhookTarget';

export function targetsFromSettings(settings: HeartbeatSettings, logger: Logger, metrics: HeartbeatMetrics): NudgeTarget[] {
  const targets: NudgeTarget[] = [];
  if (settings.redisUrl !== undefined) targets.push(new RedisChannelTarget(settings.redisUrl));
  const urls = webhookUrls(settings);
  if (urls.size > 0) {
    targets.push(
      new WebhookTarget({
        urls,
        secret: settings.webhookSecret!,
        timeoutMs: settings.webhookTimeoutMs,
        attempts: settings.webhookAttempts,
        baseDelayMs: settings.webhookBackoffMs,
        maxDelayMs: settings.webhookMaxBackoffMs,
        onRetry: (identity, attempt, error, delayMs) => {
          metrics.retries.inc({ target: 'webhook' });
          logger.warn({ identity, attempt, delayMs, err: (error as Error).message }, 'webhook delivery failed; retrying');
        },
      }),
    );
  }
  if (settings.hook !== undefined)
    targets.push(new CommandHookTarget({ argv: settings.hook, timeoutMs: settings.hookTimeoutMs }));
  return targets;
}
