/**
 * A process that could not reach its Redis Cluster exits as soon as connecting has failed. ioredis 6.0.0 arms a 2 s
 * timer (disconnectTimeout, not unref'd) at each disconnect, cleared only when the socket closes afterwards, and the
 * cluster's slots refresher and the wake subscriber were disconnected from nodes that had refused them (closed
 * already): the process stayed up 2 s after everything was closed (a command exited 2 s after its error, and a test
 * file on Redis Cluster, whose killed masters the refreshers met, printed "Jest did not exit one second after").
 */
import { freePort } from '../support/redisServer';
import { exitAfterFailedConnect } from '../support/processExit';

describe('a process whose Redis Cluster cannot be reached', () => {
  it.each([
    ['the views and locks connection (its slots refreshers)', false],
    ['the wake subscriber', true],
  ])('exits as soon as connecting has failed, not 2 s later: %s', async (_what, subscriber) => {
    const [a, b] = [await freePort(), await freePort()]; // nothing listens there
    const url = `redis-cluster://127.0.0.1:${a},127.0.0.1:${b}`;
    const { said, exitedAfterMs } = await exitAfterFailedConnect(url, `, subscriber: ${subscriber}`);
    expect(said).toBe('failed: UNAVAILABLE');
    expect(exitedAfterMs).toBeLessThan(1_000);
  });
});
