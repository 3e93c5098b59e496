/** Heartbeat settings: defaults, durations, and loud rejections (unknown keys, webhooks without a secret). */
import { parseDurationMs } from '../../src/support/duration';
import { nudgePolicy, parseHeartbeatSettings, webhookUrls } from '../../src/heartbeat/heartbeatSettings';
import { heartbeatSettingsFromCli } from '../../src/cli/commands/heartbeat';
import { MailboxError } from '../../src/errors';

const failure = (work: () => unknown): MailboxError => {
  try {
    work();
  } catch (error) {
    if (error instanceof MailboxError) return error;
    throw error;
  }
  throw new Error('expected a MailboxError');
};

describe('heartbeat settings', () => {
  test('defaults: 60 s interval, 10 min idle, 15 min cooldown, metrics on loopback 7421', () => {
    expect(parseHeartbeatSettings({})).toMatchObject({
      intervalMs: 60_000,
      idleMs: 600_000,
      cooldownMs: 900_000,
      wakeGraceMs: 60_000,
      stallAfterMs: 60_000,
      metricsHost: '127.0.0.1',
      metricsPort: 7421,
      projector: 'auto',
    });
  });

  test('durations read as people write them', () => {
    expect([
      parseDurationMs('250ms'),
      parseDurationMs('90s'),
      parseDurationMs('10m'),
      parseDurationMs('1h'),
      parseDurationMs('1d'),
      parseDurationMs('1.5d'),
      parseDurationMs('1500'),
    ]).toEqual([250, 90_000, 600_000, 3_600_000, 86_400_000, 129_600_000, 1500]);
    expect(parseDurationMs('ten minutes')).toBeNull();
    expect(parseDurationMs('1w')).toBeNull();
    // Written as given, never trimmed: a value with spaces around it is not one of the forms.
    expect([' 90s', '90s ', '\t1500', '10m\n'].map(parseDurationMs)).toEqual([null, null, null, null]);
    // Nor with spaces inside, as expectsReplyBy refuses them ("90 s" was taken as 90s).
    expect(['90 s', '1.5\th', '250  ms'].map(parseDurationMs)).toEqual([null, null, null]);
  });

  test('a fraction of a millisecond is refused, not rounded (1.5 was taken as 2 ms); a fraction of a larger unit is not', () => {
    expect(['1.5', '0.5ms', '0.0001s'].map(parseDurationMs)).toEqual([null, null, null]);
    expect(['1.1s', '0.7s', '2.5m', '1.0'].map(parseDurationMs)).toEqual([1100, 700, 150_000, 1]);
  });

  test('days, as expectsReplyBy takes them: --idle 2d, --cooldown 1d, and an interval within the timer limit', () => {
    expect(
      heartbeatSettingsFromCli({ idle: '2d', cooldown: '1d', interval: '24d' }, { MAILBOX_HEARTBEAT_WAKE_GRACE: '1d' }),
    ).toMatchObject({
      idleMs: 2 * 86_400_000,
      cooldownMs: 86_400_000,
      intervalMs: 24 * 86_400_000,
      wakeGraceMs: 86_400_000,
    });
    // 25 days is past 2147483647 ms, the longest timer Node keeps: refused, as 600h is.
    const error = failure(() => heartbeatSettingsFromCli({ interval: '25d' }, {}));
    expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', option: '--interval', field: '--interval' });
    expect(error.envelope.message).toBe(
      "--interval: '25d' is too long: give a duration of at most 2147483647 ms (about 24.8 days, the longest timer " +
        'Node.js keeps)',
    );
  });

  test('a malformed duration is rejected naming the flag (or the variable) it came from, and listing the forms', () => {
    const error = failure(() => heartbeatSettingsFromCli({ interval: 'soon' }, {}));
    expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', option: '--interval', field: '--interval' });
    expect(error.envelope.message).toBe(
      "--interval: 'soon' is not a duration: give one such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds",
    );
    const fromEnv = failure(() => heartbeatSettingsFromCli({}, { MAILBOX_HEARTBEAT_INTERVAL: 'soon' }));
    expect(fromEnv.envelope).toMatchObject({ option: 'MAILBOX_HEARTBEAT_INTERVAL', field: 'MAILBOX_HEARTBEAT_INTERVAL' });
    expect(fromEnv.envelope.message).toMatch(/^MAILBOX_HEARTBEAT_INTERVAL: must be a duration such as /);
  });

  test('unknown per-agent keys are rejected, not ignored', () => {
    const error = failure(() => parseHeartbeatSettings({ agents: { '@b': { webhok: 'http://127.0.0.1/x' } } }));
    expect(error.envelope).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'agents.@b.webhok', allowed: ['optOut', 'webhook'] });
    expect(error.envelope.message).toContain("do not accept 'agents.@b.webhok'; allowed: optOut, webhook");
  });

  test('webhooks need a signing secret', () => {
    const error = failure(() => parseHeartbeatSettings({ agents: { '@b': { webhook: 'http://127.0.0.1/x' } } }));
    expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'webhookSecret' });
    expect(error.message).toContain('MAILBOX_HEARTBEAT_WEBHOOK_SECRET');
  });

  test('opt-outs come from the list and from the agents file; webhooks per agent', () => {
    const settings = parseHeartbeatSettings({
      optOut: '@a, @b',
      webhookSecret: 'x'.repeat(16),
      agents: { '@c': { optOut: true }, '@d': { webhook: 'https://hooks.example/d' } },
    });
    expect([...nudgePolicy(settings).optedOut].sort()).toEqual(['@a', '@b', '@c']);
    expect([...webhookUrls(settings)]).toEqual([['@d', 'https://hooks.example/d']]);
  });

  test('the hook is an argv array (JSON) or one path, never split by a shell', () => {
    expect(parseHeartbeatSettings({ hook: '["/usr/bin/notify", "--to", "ops; rm -rf /"]' }).hook).toEqual([
      '/usr/bin/notify',
      '--to',
      'ops; rm -rf /',
    ]);
    expect(parseHeartbeatSettings({ hook: '/opt/my hooks/notify' }).hook).toEqual(['/opt/my hooks/notify']);
    expect(failure(() => parseHeartbeatSettings({ hook: '[not json' })).envelope.field).toBe('hook');
  });

  // Nudges on the mailbox's own Redis (MAILBOX_REDIS_URL or the Sentinel and Cluster variables) go through a connection
  // built as the server's, with its credentials (nudgeTargetsOf; test/e2e/redisCredentials): its URL is no longer copied
  // into the heartbeat's own --redis-url, where a password or a Sentinel URL was lost or refused.
  test("flags override the environment; the mailbox's Redis is not taken as the heartbeat's own --redis-url", () => {
    const settings = heartbeatSettingsFromCli(
      { idle: '5m', metricsPort: 'off' },
      { MAILBOX_HEARTBEAT_IDLE: '20m', MAILBOX_HEARTBEAT_COOLDOWN: '1h', MAILBOX_REDIS_URL: 'redis://127.0.0.1:6390' },
    );
    expect(settings).toMatchObject({ idleMs: 300_000, cooldownMs: 3_600_000, metricsPort: null });
    expect(settings.redisUrl).toBeUndefined();
    const own = heartbeatSettingsFromCli({}, { MAILBOX_HEARTBEAT_REDIS_URL: 'redis://127.0.0.1:6391' });
    expect(own.redisUrl).toBe('redis://127.0.0.1:6391');
  });
});
