/**
 * The projection store contract, its wakes, and a master killed during a send load, on a real
 * local Redis Cluster (3 masters + 3 replicas, started once for this file).
 */
import { startRedisCluster, type TestRedisCluster } from '../support/redisTopologies';
import { describeProjectionStoreContract } from './projectionStore.contract';
import { killMasterDuringSends } from './redisFailover';
import { openRedisHarness } from './redisHarness';

let cluster: TestRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describeProjectionStoreContract('Redis Cluster (3 masters + 3 replicas, one script per hash tag)', () =>
  openRedisHarness(cluster.url),
);

describe('a mailbox on Redis Cluster', () => {
  it('a master killed during a send load: every acknowledged message is listed, the views equal a clean rebuild, wakes resume', async () => {
    const outcome = await killMasterDuringSends({
      url: cluster.url,
      namespace: `cf${process.pid}`,
      killMaster: async (tag) => {
        await cluster.killMaster(await cluster.masterOf(tag));
      },
    });
    expect(outcome.acknowledged).toBeGreaterThanOrEqual(61);
  }, 60_000);
});
