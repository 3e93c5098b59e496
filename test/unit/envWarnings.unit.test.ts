/** Misspelled MAILBOX_* variables are named with the nearest known one; known ones (server, heartbeat, client) are not. */
import { unknownVariableWarning, unknownVariables } from '../../src/cli/commands/envWarnings';

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
