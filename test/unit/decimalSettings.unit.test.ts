/**
 * Numeric settings written as text are read in plain decimal only: z.coerce.number() (Number()) took MAILBOX_PORT=0x1DB1
 * as port 7601, '1e3' as 1000 and '0x10' as 16, while the error for a bad value promised "an integer". Each is one
 * startup line naming the variable, the value and the form; plain digits are read as before.
 */
import { heartbeatSettingsFromCli } from '../../src/cli/commands/heartbeat';
import { runRebuildCommand } from '../../src/cli/commands/projections';
import { configFromEnv, ENV_VARIABLES, type MailboxConfig } from '../../src/config';
import { heartbeatSettingsFromEnv, parseHeartbeatSettings } from '../../src/heartbeat/heartbeatSettings';
import { MailboxError } from '../../src/errors';
import { StartupError } from '../../src/startupError';
import { capture, runAuditCli } from '../support/auditCli';
import { tempDir } from '../support/fixtures';

/** Every numeric setting of the server, with a value in range for each (read back as a number). */
const NUMERIC: Array<keyof MailboxConfig> = [
  'port',
  'redisTimeoutMs',
  'viewsLockWaitMs',
  'maxBodyBytes',
  'awaitProjectionMs',
  'taskSweepMs',
  'projectorLeaseMs',
  'seenFlushMs',
  'maxRequestBytes',
  'rateLimitPerSecond',
  'rateLimitBurst',
  'refusedTokensPerSecond',
  'refusedTokenBurst',
  'requestTimeoutMs',
  'sseHeartbeatMs',
  'maxWakeStreamsPerAgent',
  'startupRetryMs',
];
const NOT_DECIMAL = ['0x1DB1', '0x10', '1e3', '0b11', '0o17', '+600', ' 600', '600 ', '6_00', 'Infinity', '-0'];

function startupRefusal(env: Record<string, string>): string {
  try {
    configFromEnv(env);
  } catch (error) {
    if (error instanceof StartupError) return error.message;
    throw error;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

test.each(NUMERIC.flatMap((key) => NOT_DECIMAL.map((value) => [ENV_VARIABLES[key], value])))(
  '%s=%j is one startup line naming the value and the decimal form',
  (variable, value) => {
    expect(startupRefusal({ [variable]: value })).toMatch(
      new RegExp(
        `^${variable}='${value.replace(/[+.]/g, '\\$&')}' is not valid: set ${variable} to .+, written in plain decimal digits\\.$`,
      ),
    );
  },
);

/** MAILBOX_WAKE_SLA_MS is read by serve, the heartbeat and `audit unwoken`: a duration or milliseconds for all three. */
describe('MAILBOX_WAKE_SLA_MS, a duration', () => {
  const heartbeatSla = (env: Record<string, string>) => parseHeartbeatSettings(heartbeatSettingsFromEnv(env)).wakeSlaMs;

  test('2m is two minutes to serve as to the heartbeat (serve refused it at start, the heartbeat took it)', () => {
    for (const [value, ms] of [
      ['2m', 120_000],
      ['90s', 90_000],
      ['1h', 3_600_000],
      ['600', 600],
      ['0600', 600],
    ] as const) {
      expect(configFromEnv({ MAILBOX_WAKE_SLA_MS: value }).wakeSlaMs).toBe(ms);
      expect(heartbeatSla({ MAILBOX_WAKE_SLA_MS: value })).toBe(ms);
    }
  });

  test.each(NOT_DECIMAL)('%j is one startup line naming the value and the forms', (value) => {
    expect(startupRefusal({ MAILBOX_WAKE_SLA_MS: value })).toMatch(
      new RegExp(
        `^MAILBOX_WAKE_SLA_MS='${value.replace(/[+.]/g, '\\$&')}' is not valid: set MAILBOX_WAKE_SLA_MS to a duration ` +
          'such as 90s, 2m or 1h, or an integer number of milliseconds \\(default 60000\\): how long a message may wake ' +
          'nobody(, without spaces around it)?\\.$',
      ),
    );
  });

  test('a fraction of a millisecond is refused by serve and the heartbeat alike (it was rounded: 1.5 became 2 ms)', () => {
    expect(startupRefusal({ MAILBOX_WAKE_SLA_MS: '1.5' })).toMatch(/^MAILBOX_WAKE_SLA_MS='1\.5' is not valid: /);
    expect(() => heartbeatSla({ MAILBOX_WAKE_SLA_MS: '1.5' })).toThrow(/MAILBOX_WAKE_SLA_MS|wakeSlaMs/);
    expect(configFromEnv({ MAILBOX_WAKE_SLA_MS: '1.5s' }).wakeSlaMs).toBe(1500);
  });

  test('spaces inside are told with the duration written whole', () => {
    expect(startupRefusal({ MAILBOX_WAKE_SLA_MS: '2 m' })).toMatch(/nobody, without spaces inside it: 2m\.$/);
  });
});

test('MAILBOX_PORT=0x1DB1 says the range and that it must be decimal (it bound port 7601)', () => {
  expect(startupRefusal({ MAILBOX_PORT: '0x1DB1' })).toBe(
    "MAILBOX_PORT='0x1DB1' is not valid: set MAILBOX_PORT to an integer 0..65535 (0 picks any free port; default 7420), " +
      'written in plain decimal digits.',
  );
});

test.each(NUMERIC)('%s in plain decimal digits is read as that number', (key) => {
  // A request limit must be above the body limit (requestLimitConfig.unit): 600 is, beside a body limit of 500.
  const beside = key === 'maxRequestBytes' ? { MAILBOX_MAX_BODY_BYTES: '500' } : {};
  expect(configFromEnv({ ...beside, [ENV_VARIABLES[key]]: '600' })[key]).toBe(600);
  expect(configFromEnv({ ...beside, [ENV_VARIABLES[key]]: '0600' })[key]).toBe(600); // a leading zero is not octal
});

/**
 * A duration where whole milliseconds are asked (MAILBOX_AWAIT_PROJECTION_MS=2s) was told the decimal form alone: the
 * operator had to work out 2000. It is told the number too, never taken for it (the wake SLA takes durations: below).
 */
const MILLISECONDS = NUMERIC.filter((key) => ENV_VARIABLES[key].endsWith('_MS'));

test('every MAILBOX_*_MS setting but the wake SLA is in whole milliseconds', () => {
  expect(MILLISECONDS.length).toBe(9);
  const all = Object.values(ENV_VARIABLES).filter((variable) => variable.endsWith('_MS'));
  expect(all.filter((variable) => !MILLISECONDS.map((key) => ENV_VARIABLES[key]).includes(variable))).toEqual([
    'MAILBOX_WAKE_SLA_MS',
  ]);
});

test.each(
  MILLISECONDS.flatMap((key) =>
    [
      ['2s', 2000],
      ['1500ms', 1500],
      ['2 s', 2000],
      ['1.5s', 1500],
    ].map(([value, ms]) => [ENV_VARIABLES[key], value, ms]),
  ),
)('%s=%j is refused in one line suggesting %d', (variable, value, ms) => {
  expect(startupRefusal({ [variable]: String(value) })).toMatch(
    new RegExp(
      `^${variable}='${value}' is not valid: set ${variable} to .+, written in plain decimal digits: did you mean ${ms}\\?$`,
    ),
  );
});

test('MAILBOX_AWAIT_PROJECTION_MS=5m: the whole line, as the other refusals, with the number it stands for', () => {
  expect(startupRefusal({ MAILBOX_AWAIT_PROJECTION_MS: '5m' })).toBe(
    "MAILBOX_AWAIT_PROJECTION_MS='5m' is not valid: set MAILBOX_AWAIT_PROJECTION_MS to an integer number of milliseconds, " +
      '0 or more and at most 2147483647 ms (about 24.8 days, the longest timer Node.js keeps), written in plain decimal ' +
      'digits: did you mean 300000?',
  );
});

test('a duration whose number the setting would refuse is told the form alone (no suggestion out of range)', () => {
  expect(startupRefusal({ MAILBOX_SEEN_FLUSH_MS: '2m' })).toBe(
    "MAILBOX_SEEN_FLUSH_MS='2m' is not valid: set MAILBOX_SEEN_FLUSH_MS to an integer number of milliseconds, 1 to 60000, " +
      'written in plain decimal digits.',
  );
  expect(startupRefusal({ MAILBOX_PROJECTOR_LEASE_MS: '100ms' })).toMatch(/written in plain decimal digits\.$/);
});

test('a rate takes a fraction with a point (0.5), and nothing else', () => {
  expect(configFromEnv({ MAILBOX_RATE_LIMIT_PER_SECOND: '0.5' }).rateLimitPerSecond).toBe(0.5);
  for (const value of ['.5', '5.', '5e-1', '0x1']) {
    expect(startupRefusal({ MAILBOX_RATE_LIMIT_PER_SECOND: value })).toContain('written in plain decimal digits');
  }
});

test('out of range in decimal is refused with the form alone, as before', () => {
  expect(startupRefusal({ MAILBOX_PORT: '65536' })).toBe(
    "MAILBOX_PORT='65536' is not valid: set MAILBOX_PORT to an integer 0..65535 (0 picks any free port; default 7420).",
  );
});

test.each([
  [{ MAILBOX_HEARTBEAT_METRICS_PORT: '0x10' }, 'MAILBOX_HEARTBEAT_METRICS_PORT', '0x10'],
  [{ MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS: '1e1' }, 'MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS', '1e1'],
])('heartbeat %j: refused naming the option and the decimal form', (env, option, value) => {
  let refused: unknown = null;
  try {
    heartbeatSettingsFromCli({}, env);
  } catch (error) {
    refused = error;
  }
  expect(refused).toBeInstanceOf(MailboxError);
  expect((refused as MailboxError).envelope).toMatchObject({ code: 'VALIDATION_FAILED', option });
  expect((refused as MailboxError).message).toContain(`must be written in plain decimal digits, not '${value}'`);
  expect(heartbeatSettingsFromCli({}, { MAILBOX_HEARTBEAT_METRICS_PORT: '7431' }).metricsPort).toBe(7431);
});

test('audit unwoken --sla 0x10 is refused with the envelope, naming the forms of a duration', async () => {
  const run = await runAuditCli(['unwoken', '--sla', '0x10', '--json']);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(JSON.parse(run.stderr)).toMatchObject({
    code: 'VALIDATION_FAILED',
    field: '--sla',
    message: "audit unwoken: '--sla' must be a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds",
  });
});

describe('projections rebuild --grace-ms / --settle-ms: plain decimal milliseconds, named as typed', () => {
  async function rebuild(flags: Record<string, unknown>) {
    const out = capture();
    const err = capture();
    process.exitCode = undefined;
    // An empty data dir (never the working directory's ./data): a flag that passed fails next on the missing log.
    const env = { MAILBOX_VIEWS: 'memory', MAILBOX_DATA_DIR: tempDir() };
    await runRebuildCommand({ stdout: out.stream, stderr: err.stream, env }, { ...flags, json: true });
    const code = Number(process.exitCode ?? 0);
    process.exitCode = undefined;
    return { code, stdout: out.text(), stderr: err.text() };
  }

  test.each([
    ['graceMs', '--grace-ms', '0x10', 'up to 2147483647 (e.g. --grace-ms 5000)'],
    ['graceMs', '--grace-ms', '1e3', 'up to 2147483647 (e.g. --grace-ms 5000)'],
    ['settleMs', '--settle-ms', '0x10', '(e.g. --settle-ms 2000)'],
    ['settleMs', '--settle-ms', '-1', '(e.g. --settle-ms 2000)'],
  ])('%s %s', async (key, option, value, form) => {
    const run = await rebuild({ [key]: value });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(run.stderr)).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: option,
      message: `projections rebuild: '${option}' takes a whole number of milliseconds ${form}, written in plain decimal digits, not '${value}'`,
    });
  });

  test.each([
    ['graceMs', '--grace-ms', '2s', 2000],
    ['settleMs', '--settle-ms', '1500ms', 1500],
    ['settleMs', '--settle-ms', '2 s', 2000],
  ])('%s %s %j: told the milliseconds it stands for, never taken', async (key, option, value, ms) => {
    const run = await rebuild({ [key]: value });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: option });
    expect(JSON.parse(run.stderr).message).toMatch(new RegExp(`, not '${value}': did you mean ${ms}\\?$`));
  });

  test('a grace beyond the longest timer is refused (it would fire at once and delete the previous views)', async () => {
    const run = await rebuild({ graceMs: '2147483648' });
    expect(JSON.parse(run.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: '--grace-ms' });
    expect(JSON.parse(run.stderr).message).toContain('2147483647 ms');
  });

  test('plain digits pass the flags (and the command goes on to look for the log)', async () => {
    const run = await rebuild({ graceMs: '0', settleMs: '10' });
    expect(JSON.parse(run.stderr)).toMatchObject({ code: 'NOT_FOUND', error: 'No event log', field: 'MAILBOX_DATA_DIR' });
  });
});
