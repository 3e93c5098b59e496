/**
 * Settings that become a timer's delay are refused beyond 2^31 - 1 ms: Node replaces a longer delay with 1 ms, so
 * MAILBOX_REQUEST_TIMEOUT_MS=3000000000 answered every request 503 at once (a registration applied, its token never
 * shown) and `mailbox heartbeat --interval 600h` ticked every millisecond. The limit itself is accepted.
 */
import { configFromEnv } from '../../src/config';
import { heartbeatSettingsFromCli } from '../../src/cli/commands/heartbeat';
import { MailboxError } from '../../src/errors';
import { StartupError } from '../../src/startupError';

const LIMIT = '2147483647';
const BEYOND = '2147483648';

const TIMER_VARIABLES = [
  'MAILBOX_REQUEST_TIMEOUT_MS',
  'MAILBOX_SSE_HEARTBEAT_MS',
  'MAILBOX_TASK_SWEEP_MS',
  'MAILBOX_AWAIT_PROJECTION_MS',
  'MAILBOX_STARTUP_RETRY_MS',
  'MAILBOX_REDIS_TIMEOUT_MS',
];

test.each(TIMER_VARIABLES)('%s beyond 2147483647 is one line naming the value and the limit', (variable) => {
  let refused: unknown = null;
  try {
    configFromEnv({ [variable]: BEYOND });
  } catch (error) {
    refused = error;
  }
  expect(refused).toBeInstanceOf(StartupError);
  const message = (refused as StartupError).message;
  expect(message).not.toContain('\n');
  expect(message).toMatch(
    new RegExp(`^${variable}='${BEYOND}' is not valid: set ${variable} to .*at most ${LIMIT} ms \\(about 24.8 days`),
  );
});

test.each(TIMER_VARIABLES)('%s at 2147483647 is accepted', (variable) => {
  expect(() => configFromEnv({ [variable]: LIMIT })).not.toThrow();
});

const heartbeatRefusal = (options: Record<string, string>): MailboxError => {
  try {
    heartbeatSettingsFromCli(options, {});
  } catch (error) {
    if (error instanceof MailboxError) return error;
    throw error;
  }
  throw new Error(`heartbeat options ${JSON.stringify(options)} were accepted`);
};

test.each([
  ['interval', '600h', '--interval'],
  ['interval', BEYOND, '--interval'],
])('heartbeat --%s %s is refused naming the option and the limit', (option, value, named) => {
  const error = heartbeatRefusal({ [option]: value });
  expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', option: named });
  expect(error.envelope.message).toContain(`a duration of at most ${LIMIT} ms (about 24.8 days`);
});

test('heartbeat timeouts and backoffs from the environment are held to the same limit; the limit itself is accepted', () => {
  for (const variable of ['MAILBOX_HEARTBEAT_HOOK_TIMEOUT', 'MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT']) {
    let refused: unknown = null;
    try {
      heartbeatSettingsFromCli({}, { [variable]: BEYOND });
    } catch (error) {
      refused = error;
    }
    expect({ variable, code: (refused as MailboxError | null)?.code }).toEqual({ variable, code: 'VALIDATION_FAILED' });
    expect((refused as MailboxError).message).toContain(`at most ${LIMIT} ms`);
  }
  expect(heartbeatSettingsFromCli({ interval: LIMIT }, { MAILBOX_HEARTBEAT_HOOK_TIMEOUT: LIMIT })).toMatchObject({
    intervalMs: 2_147_483_647,
    hookTimeoutMs: 2_147_483_647,
  });
});
