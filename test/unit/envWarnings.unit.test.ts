/** Misspelled MAILBOX_* variables are named with the nearest known one; known ones (server, heartbeat, client) are not. Redis-only ones set without Redis are named too. */
import {
  redisOnlyVariables,
  redisOnlyWarning,
  unknownVariableWarning,
  unknownVariables,
} from '../../src/cli/commands/envWarnings';

test('names each unknown MAILBOX_ variable with the nearest known name when it is a likely typo', () => {
  const env = {
    MAILBOX_PROT: '8080',
    MAILBOX_REDIS_URI: 'redis://x',
    MAILBOX_HEARTBEAT_INTERVALL: '10s',
    MAILBOX_SOMETHING_ELSE_ENTIRELY: '1',
    MAILBOX_PORT: '7420',
    MAILBOX_URL: 'http://x',
    MAILBOX_TOKEN: 't',
    MAILBOX_HEARTBEAT_IDLE: '1m',
    MAILBOX_HEARTBEAT: '1',
    PATH: '/bin',
  };
  expect(unknownVariables(env)).toEqual([
    { variable: 'MAILBOX_HEARTBEAT_INTERVALL', suggestion: 'MAILBOX_HEARTBEAT_INTERVAL' },
    { variable: 'MAILBOX_PROT', suggestion: 'MAILBOX_PORT' },
    { variable: 'MAILBOX_REDIS_URI', suggestion: 'MAILBOX_REDIS_URL' },
    { variable: 'MAILBOX_SOMETHING_ELSE_ENTIRELY' },
  ]);
  expect(unknownVariableWarning({ variable: 'MAILBOX_PROT', suggestion: 'MAILBOX_PORT' })).toBe(
    'MAILBOX_PROT is not a mailbox variable and is ignored: did you mean MAILBOX_PORT?',
  );
});

test('the benchmark switch MAILBOX_BENCH_SKIP_EVENT_CHECKS is named for what it does, never as ignored', () => {
  const [unknown] = unknownVariables({ MAILBOX_BENCH_SKIP_EVENT_CHECKS: '1' });
  expect(unknown).toEqual({ variable: 'MAILBOX_BENCH_SKIP_EVENT_CHECKS' });
  expect(unknownVariableWarning(unknown)).toBe(
    'MAILBOX_BENCH_SKIP_EVENT_CHECKS is a benchmark switch, not a setting: set to 1 it turns off the check of each ' +
      'event read from the log against its stored shape, so a damaged or foreign event would be read as valid. ' +
      'Unset it outside benchmarks.',
  );
});

test('Redis-only variables set without Redis are named, with where they take effect; with Redis, none', () => {
  const env = {
    MAILBOX_REDIS_PASSWORD: 'secret',
    MAILBOX_REDIS_SENTINEL_PASSWORD_FILE: '/run/secrets/sentinel',
    MAILBOX_REDIS_NAMESPACE: 'team-a',
    MAILBOX_REDIS_USERNAME: '', // empty is unset, as the configuration reads it
    MAILBOX_PORT: '7420',
  };
  expect(redisOnlyVariables(env, { redisUrl: undefined })).toEqual([
    'MAILBOX_REDIS_PASSWORD',
    'MAILBOX_REDIS_SENTINEL_PASSWORD_FILE',
    'MAILBOX_REDIS_NAMESPACE',
  ]);
  expect(redisOnlyVariables(env, { redisUrl: 'redis://127.0.0.1:6379' })).toEqual([]);
  expect(redisOnlyVariables({ MAILBOX_PORT: '7420' }, { redisUrl: undefined })).toEqual([]);
  expect(redisOnlyWarning(['MAILBOX_REDIS_PASSWORD'])).toBe(
    'MAILBOX_REDIS_PASSWORD is set but no Redis is configured, so it is ignored: it takes effect only with ' +
      'MAILBOX_REDIS_URL (or MAILBOX_REDIS_SENTINELS with MAILBOX_REDIS_SENTINEL_NAME, or MAILBOX_REDIS_CLUSTER).',
  );
  expect(redisOnlyWarning(['MAILBOX_REDIS_TLS', 'MAILBOX_REDIS_NAMESPACE'])).toMatch(
    /^MAILBOX_REDIS_TLS, MAILBOX_REDIS_NAMESPACE are set but no Redis is configured, so they are ignored: they take effect/,
  );
});
