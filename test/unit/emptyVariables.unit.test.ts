/**
 * A MAILBOX_* setting set but empty is refused, never read as unset: `MAILBOX_REDIS_URL=${REDIS_URL}` with REDIS_URL
 * unset started a production node on the embedded SQLite log and views; an empty MAILBOX_DATA_DIR was ./data.
 */
import { configFromEnv, ENV_VARIABLES, flagFromEnv, SECRET_FILE_VARIABLES } from '../../src/config';
import { StartupError } from '../../src/startupError';
import { HEARTBEAT_ENV } from '../../src/heartbeat/heartbeatSettings';
import { heartbeatSettingsFromCli } from '../../src/cli/commands/heartbeat';

const refusal = (read: () => unknown): StartupError => {
  try {
    read();
  } catch (error) {
    if (error instanceof StartupError) return error;
    throw error;
  }
  throw new Error('not refused');
};

test.each([...Object.values(ENV_VARIABLES), ...SECRET_FILE_VARIABLES])(
  '%s set but empty: refused, naming it, saying it is empty and to give it a value or unset it',
  (variable) => {
    const error = refusal(() => configFromEnv({ [variable]: '' }));
    expect(error.message).toMatch(
      new RegExp(
        `^${variable} is set but empty \\(a \\$\\{VARIABLE\\} substituted while VARIABLE was unset\\?\\): set it to .+or unset it`,
      ),
    );
    expect(error.details).toEqual({ variable });
    expect(error.exitCode).toBe(2);
  },
);

test('what unset means is said where the fallback would surprise: the Redis URL, the log, the data dir, the admin token', () => {
  expect(refusal(() => configFromEnv({ MAILBOX_REDIS_URL: '' })).message).toBe(
    'MAILBOX_REDIS_URL is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?): set it to ' +
      'redis://host:6379 (rediss:// for TLS), redis+sentinel://host:26379,host:26379/<master name> or ' +
      'redis-cluster://host:6379,host:6379, or unset it for no Redis (the views in the SQLite views file, wakes in process).',
  );
  expect(refusal(() => configFromEnv({ MAILBOX_EVENTSTORE_URL: '' })).message).toContain(
    'or unset it for the SQLite log in the data dir.',
  );
  expect(refusal(() => configFromEnv({ MAILBOX_DATA_DIR: '' })).message).toContain(
    'set it to a directory path (default ./data), or unset it.',
  );
  expect(refusal(() => configFromEnv({ MAILBOX_ADMIN_TOKEN: '' })).message).toContain('(or unset it to generate one).');
});

test('an empty variable is refused even beside a good one that would have been read instead (its _FILE form)', () => {
  expect(
    refusal(() => configFromEnv({ MAILBOX_ADMIN_TOKEN: '', MAILBOX_ADMIN_TOKEN_FILE: '/run/secrets/admin_token' })).details,
  ).toEqual({ variable: 'MAILBOX_ADMIN_TOKEN' });
});

test('a blank one (spaces only) is still said as blank; unset ones take their defaults', () => {
  expect(refusal(() => configFromEnv({ MAILBOX_PORT: '  ' })).message).toMatch(/^MAILBOX_PORT is blank \(only spaces\): /);
  expect(configFromEnv({})).toMatchObject({ host: '127.0.0.1', port: 7420, dataDir: './data' });
});

test('a boolean variable read on its own (MAILBOX_HEARTBEAT) is held to it too', () => {
  expect(refusal(() => flagFromEnv({ MAILBOX_HEARTBEAT: '' }, 'MAILBOX_HEARTBEAT')).message).toMatch(
    /^MAILBOX_HEARTBEAT is set but empty .*: set it to true or false \(also 1\/0, yes\/no, on\/off\), or unset it[.]$/,
  );
  expect(flagFromEnv({}, 'MAILBOX_HEARTBEAT')).toBeUndefined();
});

// The heartbeat's variables read an empty value as unset: MAILBOX_HEARTBEAT_INTERVAL= ran every 60 s, an empty
// MAILBOX_HEARTBEAT_REDIS_URL published nudges on the mailbox's Redis, MAILBOX_HEARTBEAT_AGENTS_FILE= read no file.
test.each([...Object.values(HEARTBEAT_ENV), 'MAILBOX_HEARTBEAT_AGENTS_FILE'])(
  '%s set but empty (or blank): refused by the same rule, in `mailbox heartbeat` and `serve --heartbeat` alike',
  (variable) => {
    const error = refusal(() => heartbeatSettingsFromCli({}, { [variable]: '' }));
    expect(error.message).toMatch(
      new RegExp(
        `^${variable} is set but empty \\(a \\$\\{VARIABLE\\} substituted while VARIABLE was unset\\?\\): set it to .+, or unset it`,
      ),
    );
    expect(error.details).toEqual({ variable });
    expect(refusal(() => heartbeatSettingsFromCli({}, { [variable]: ' ' })).message).toMatch(
      new RegExp(`^${variable} is blank \\(only spaces\\): set it to `),
    );
  },
);

test("a heartbeat variable's refusal says its form and its default", () => {
  expect(refusal(() => heartbeatSettingsFromCli({}, { MAILBOX_HEARTBEAT_INTERVAL: '' })).message).toBe(
    'MAILBOX_HEARTBEAT_INTERVAL is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?): set it to a ' +
      'duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds, or unset it for the default (60s).',
  );
});
