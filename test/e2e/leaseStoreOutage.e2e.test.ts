/**
 * Two API nodes on one event log (the EventStoreDB double) and one Redis; Redis is killed, then started again. Found by
 * a walk through the scaled deployment: the follower's /readyz went on naming the leader with a leaseRunsOutInMs that
 * stood still (2960 for the whole outage: the copy kept was refreshed only by a checkpoint read that succeeded), and
 * its log said nothing of the outage (only the holder's step-down did). Now its /readyz says that it cannot reach the
 * lease's store and for how long, names the leader of its last look as that, and gives no lease running out; its log
 * says the outage once for the projector and the task sweeper, and once each when the store answers again.
 */
import { randomUUID } from 'node:crypto';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { startTestServer, type TestServer } from '../support/httpServer';
import { recordingLogger, type RecordingLogger } from '../support/recordingLogger';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let double: EsdbDouble;
let nodeA: TestServer;
let nodeB: TestServer;
let logB: RecordingLogger;

beforeAll(async () => {
  redis = await startRedis();
  double = await EsdbDouble.start();
  const shared = {
    eventStoreUrl: double.url,
    redisUrl: redis.url,
    redisNamespace: `leaseoutage-${randomUUID().slice(0, 8)}`,
    redisTimeoutMs: 500,
  };
  nodeA = await startTestServer({ ...shared, nodeId: 'node-a' });
  logB = recordingLogger();
  nodeB = await startTestServer({ ...shared, nodeId: 'node-b' }, { logger: logB.logger });
}, 60_000);
afterAll(async () => {
  await nodeB?.close();
  await nodeA?.close();
  await double?.close();
  await redis?.stop();
});

const leadershipOf = async (node: TestServer) => {
  const ready = await node.call('GET', '/readyz');
  return (ready.body.projections ?? ready.body.checks.projections).leadership;
};

test("Redis down: the follower's /readyz and log say it cannot reach the lease's store; back: they say so", async () => {
  const t = await nodeA.register(['@a', '@b', '@c']);
  expect(await leadershipOf(nodeA)).toMatchObject({ role: 'leading', node: 'node-a' });
  expect(await leadershipOf(nodeB)).toMatchObject({ role: 'following', leader: 'node-a', leaseRunsOutInMs: expect.any(Number) });

  await redis.kill!();
  await waitFor(async () => (await leadershipOf(nodeB)).storeUnreachableForMs !== undefined, { timeoutMs: 10_000 });
  const first = await leadershipOf(nodeB);
  expect(first).toEqual({
    role: 'following',
    node: 'node-b',
    leader: 'node-a',
    token: expect.any(String),
    storeUnreachableForMs: expect.any(Number),
    note: expect.stringMatching(
      /^this node has not reached the projector lease's store for \d+ ms: who holds the lease now is not known \(node-a held it at this node's last look\)/,
    ),
  });
  // Time goes on in what it says (it stood still at one leaseRunsOutInMs before).
  await waitFor(async () => (await leadershipOf(nodeB)).storeUnreachableForMs > first.storeUnreachableForMs);
  const ready = await nodeB.call('GET', '/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body.checks.projectionStore.ok).toBe(false);
  await waitFor(() => logB.warnings().some((m) => m.startsWith('task sweeper: cannot reach')), { what: "the sweeper's line" });
  expect(logB.warnings()).toEqual(
    expect.arrayContaining([
      expect.stringMatching(
        /^projector: cannot reach the projector lease's store \(.+\); this node, which does not hold the lease/,
      ),
      expect.stringMatching(/^task sweeper: cannot reach the sweeper lease's store/),
    ]),
  );
  expect(logB.warnings().filter((m) => m.startsWith('projector: cannot reach'))).toHaveLength(1); // once, not per look

  await redis.start!();
  await waitFor(async () => (await nodeB.call('GET', '/readyz')).status === 200, { timeoutMs: 20_000 });
  // Each keeper says it at its next look (every 250 ms), which may come after /readyz's own ping of Redis answers.
  const back = ["projector: the projector lease's store answers again", "task sweeper: the sweeper lease's store answers again"];
  await waitFor(() => back.every((line) => logB.messages().includes(line)), {
    timeoutMs: 10_000,
    what: 'both keepers saying the store answers again',
  });
  expect(logB.messages()).toEqual(expect.arrayContaining(back));
  expect(await leadershipOf(nodeB)).not.toHaveProperty('storeUnreachableForMs');
  // One of the two leads again, and the other names it; mail sent on one is read on the other.
  await waitFor(
    async () => {
      const [a, b] = [await leadershipOf(nodeA), await leadershipOf(nodeB)];
      return (a.role === 'leading' && b.leader === 'node-a') || (b.role === 'leading' && a.leader === 'node-b');
    },
    { timeoutMs: 10_000, what: 'one node leading, named by the other' },
  );
  const sent = await nodeA.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'after', body: 'x' },
  });
  expect(sent.status).toBe(201);
  const inbox = await nodeB.call('GET', '/v1/messages?status=unread', { token: t['@c'] });
  expect(inbox.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([sent.body.messageId]);
}, 90_000);
