/** MAILBOX_MAX_REQUEST_BYTES against MAILBOX_MAX_BODY_BYTES: a request limit no message body the mailbox takes fits in. */
import { configFromEnv, parseConfig } from '../../src/config';
import { requestLimitOf } from '../../src/adapters/http/httpContext';
import { StartupError } from '../../src/startupError';

const refusal = (env: Record<string, string>): StartupError => {
  try {
    configFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(StartupError);
    return error as StartupError;
  }
  throw new Error(`configuration ${JSON.stringify(env)} was accepted`);
};

test('a request limit at or below the body limit is one startup line naming both, the default and the remedy', () => {
  const error = refusal({ MAILBOX_MAX_REQUEST_BYTES: '100' });
  expect(error.message).toBe(
    'MAILBOX_MAX_REQUEST_BYTES=100 is not above MAILBOX_MAX_BODY_BYTES=65536: a message body the mailbox takes would be ' +
      'refused as a request over the limit before it is read (a request holds the body, JSON-escaped, and the other ' +
      'fields). Set MAILBOX_MAX_REQUEST_BYTES above 65536 (unset, it is 4 x MAILBOX_MAX_BODY_BYTES + 65536 = 327680), ' +
      'or lower MAILBOX_MAX_BODY_BYTES.',
  );
  expect(error.message).not.toContain('\n');
  expect(refusal({ MAILBOX_MAX_REQUEST_BYTES: '1024', MAILBOX_MAX_BODY_BYTES: '1024' }).message).toMatch(
    /^MAILBOX_MAX_REQUEST_BYTES=1024 is not above MAILBOX_MAX_BODY_BYTES=1024: /,
  );
});

test('the library is refused the same way (VALIDATION_FAILED on the variable)', () => {
  expect(() => parseConfig({ maxRequestBytes: 100 })).toThrow(
    expect.objectContaining({
      envelope: expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'MAILBOX_MAX_REQUEST_BYTES' }),
    }),
  );
});

test('a request limit above the body limit is taken as given; unset, it is 4 x the body limit + 64 KiB', () => {
  expect(requestLimitOf(configFromEnv({ MAILBOX_MAX_REQUEST_BYTES: '8192', MAILBOX_MAX_BODY_BYTES: '1024' }))).toBe(8192);
  expect(requestLimitOf(configFromEnv({ MAILBOX_MAX_REQUEST_BYTES: '65537' }))).toBe(65537);
  expect(requestLimitOf(configFromEnv({ MAILBOX_MAX_BODY_BYTES: '1024' }))).toBe(4 * 1024 + 65536);
});
