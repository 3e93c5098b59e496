/** MAILBOX_PROJECTOR_LEASE_MS and MAILBOX_NODE_ID: defaults, and one teaching line for every mistake. */
import { hostname } from 'node:os';
import { configFromEnv, nodeIdOf } from '../../src/config';
import { StartupError } from '../../src/startupError';

const refusal = (env: Record<string, string>): string => {
  try {
    configFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  }
  throw new Error(`configuration ${JSON.stringify(env)} was accepted`);
};

describe('lease settings', () => {
  it('default to a 3000 ms lease and a node id of host name and process id', () => {
    const config = configFromEnv({});
    expect(config.projectorLeaseMs).toBe(3000);
    expect(nodeIdOf(config)).toBe(`${hostname()}-${process.pid}`);
    expect(configFromEnv({ MAILBOX_PROJECTOR_LEASE_MS: '1500' }).projectorLeaseMs).toBe(1500);
    expect(nodeIdOf(configFromEnv({ MAILBOX_NODE_ID: 'api-2.eu' }))).toBe('api-2.eu');
  });

  it.each(['0', '299', '600001', 'three seconds', '2.5'])(
    'refuse MAILBOX_PROJECTOR_LEASE_MS=%s, naming the valid form',
    (value) => {
      expect(refusal({ MAILBOX_PROJECTOR_LEASE_MS: value })).toContain(
        `MAILBOX_PROJECTOR_LEASE_MS='${value}' is not valid: set MAILBOX_PROJECTOR_LEASE_MS to an integer number of milliseconds from 300 to 600000`,
      );
    },
  );

  it.each(['node 1', 'a:b', 'x'.repeat(65)])('refuse MAILBOX_NODE_ID=%s, naming the valid form', (value) => {
    expect(refusal({ MAILBOX_NODE_ID: value })).toContain(
      `MAILBOX_NODE_ID='${value}' is not valid: set MAILBOX_NODE_ID to 1..64 of [A-Za-z0-9._-]`,
    );
  });
});
