/**
 * The projection store contract, its wakes, and a master killed during a send load, through a
 * real local Sentinel group (1 master, 1 replica, 3 sentinels, started once for this file).
 */
import { startRedisSentinel, type TestRedisSentinel } from '../support/redisTopologies';
import { describeProjectionStoreContract } from './projectionStore.contract';
import { killMasterDuringSends } from './redisFailover';
import { describeTaskViewsContract } from './taskViews.contract';
import { openRedisHarness } from './redisHarness';

let sentinel: TestRedisSentinel;
beforeAll(async () => {
  sentinel = await startRedisSentinel();
}, 60_000);
afterAll(async () => {
  await sentinel?.stop();
});

describeProjectionStoreContract('Redis through Sentinel (1 master, 1 replica, 3 sentinels)', () =>
  openRedisHarness(sentinel.url),
);

describeTaskViewsContract('Redis through Sentinel', () => openRedisHarness(sentinel.url));

describe('a mailbox on Redis through Sentinel', () => {
  it('the master killed during a send load: /readyz says not ready while it is down; every acknowledged message is listed, the views equal a clean rebuild, wakes resume', async () => {
    const outcome = await killMasterDuringSends({
      url: sentinel.url,
      namespace: `sf${process.pid}`,
      killMaster: async (_tag, killed) => {
        await sentinel.killMaster(killed);
      },
    });
    expect(outcome.acknowledged).toBeGreaterThanOrEqual(61);
    // The only master was dead: /readyz said so while it was (it may also have seen the promotion before the helper did).
    expect(outcome.readinessWhileDown.find((answer) => !answer.ready)).toMatchObject({
      ready: false,
      status: 'not ready',
      checks: { projectionStore: { ok: false, backend: 'redis' } },
    });
  }, 60_000);
});
