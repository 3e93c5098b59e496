/**
 * The projection store contract, its wakes, and a master killed during a send load, on a real
 * local Redis Cluster (3 masters + 3 replicas, started once for this file).
 */
import { startTestServer } from '../support/httpServer';
import { startRedisCluster, type TestRedisCluster } from '../support/redisTopologies';
import { describeProjectionStoreContract } from './projectionStore.contract';
import { killMasterDuringSends } from './redisFailover';
import { describeTaskViewsContract } from './taskViews.contract';
import { openRedisHarness } from './redisHarness';
import { waitFor } from '../support/waitFor';

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

describeTaskViewsContract('Redis Cluster (3 masters + 3 replicas)', () => openRedisHarness(cluster.url));

describe('a mailbox on Redis Cluster', () => {
  it('a master killed during a send load: every acknowledged message is listed, the views equal a clean rebuild, wakes resume', async () => {
    const outcome = await killMasterDuringSends({
      url: cluster.url,
      namespace: `cf${process.pid}`,
      killMaster: async (tag, killed) => {
        await cluster.killMaster(await cluster.masterOf(tag), killed);
      },
    });
    expect(outcome.acknowledged).toBeGreaterThanOrEqual(61);
  }, 60_000);

  it('/readyz tells the truth while the master holding the checkpoint fails over: 503 naming the projection store, then ready', async () => {
    // A namespace whose checkpoint (its global hash tag) lives on a master that still has a replica to promote.
    let namespace = '';
    let master = 0;
    for (let i = 0; !namespace && i < 200; i++) {
      const candidate = `rz${process.pid}n${i}`;
      const port = await cluster.masterOf(`{${candidate}}`);
      if ((await cluster.replicaOf(port)) !== null) [namespace, master] = [candidate, port];
    }
    const server = await startTestServer({ redisUrl: cluster.url, redisNamespace: namespace });
    try {
      const t = await server.register(['@a', '@b']);
      expect((await server.call('GET', '/readyz')).body).toMatchObject({ status: 'ready' });
      // The replica is held back until /readyz has answered: on a fast machine it used to be promoted before /readyz's
      // first look, and the test saw only answers after the failover (a clean clone's CI failed so once).
      const during: Array<{ status: number; body: any }> = [];
      await cluster.killMasterHoldingFailover(master, async () => {
        await waitFor(
          async () => {
            const answer = await server.call('GET', '/readyz');
            during.push({ status: answer.status, body: answer.body });
            return answer.status === 503;
          },
          { timeoutMs: 20_000, what: '/readyz answering 503 while the checkpoint master is dead' },
        );
      });
      // While the checkpoint's master was dead, /readyz never said ready, and said why: the projection store.
      expect(during.map((answer) => answer.status)).toEqual(during.map(() => 503));
      expect(during.at(-1)?.body).toMatchObject({
        code: 'UNAVAILABLE',
        checks: { projectionStore: { ok: false, backend: 'redis' } },
      });
      // After the failover: a send is acknowledged and listed, and /readyz is ready with no lag.
      const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 'after', body: 'x' } });
      expect(sent.status).toBe(201);
      const inbox = await server.call('GET', '/v1/messages', { token: t['@b'] });
      expect(inbox.body.messages.map((m: { messageId: string }) => m.messageId)).toContain(sent.body.messageId);
      expect((await server.call('GET', '/readyz')).body).toMatchObject({
        status: 'ready',
        projectionStore: { ok: true },
        projections: { lag: 0 },
      });
    } finally {
      await server.mailbox.projections.reset();
      await server.close();
    }
  }, 60_000);
});
