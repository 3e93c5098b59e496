/**
 * A follower whose take of the projector lease Redis ran late. Found by a probe of three `mailbox serve` nodes on one
 * log and one Redis: Redis paused 5 s (SIGSTOP, a frozen VM) past the lease; every node's looks timed out, and when
 * Redis resumed it ran the takes it had queued: the first, a follower's that had never led, was granted and its answer
 * read by nobody. For the rest of the lease (3 s) that node's /readyz said `following` with itself as the leader, the
 * others logged `following n2 (token 5), which holds the lease and projects`, and nobody projected (sends answered
 * VIEWS_LAGGING) until the lease ran out. A node now ends a lease that names it after a take of its own went unanswered,
 * and takes it anew at its next look. Here: a holder that died (its lease still in Redis), a follower that never led,
 * Redis paused until the follower's looks fail and the dead holder's lease is over, then resumed.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redisServer';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

const LEASE_MS = 6000;
let redis: TestRedis;
let node: TestServer | undefined;

beforeAll(async () => {
  redis = await startRedis();
  if (!redis.pause) throw new Error('this suite freezes its own redis-server (unset REDIS_URL)');
});
afterAll(async () => {
  redis.resume?.();
  await node?.close();
  await redis.stop();
});

test('a take of the lease that Redis ran after a stall: the follower it names leads at its next look, not a lease later', async () => {
  const namespace = `late-take-${randomUUID().slice(0, 8)}`;
  const leaseKey = `${namespace}:{${namespace}}:lease:projector`;
  const direct = new Redis(redis.url);
  try {
    // node-a held the lease and died: its key stays until it expires.
    await direct.set(`${leaseKey}:token`, '7');
    await direct.set(leaseKey, 'node-a:7', 'PX', 600_000);
    node = await startTestServer({
      redisUrl: redis.url,
      redisNamespace: namespace,
      projectorLeaseMs: LEASE_MS,
      nodeId: 'node-b',
      awaitProjectionMs: 300,
    });
    const leadership = async () => {
      const { body } = await node!.call('GET', '/readyz');
      return (body.projections ?? body.checks.projections).leadership;
    };
    await waitFor(async () => (await leadership()).leader === 'node-a', { what: 'node-b following node-a' });
    const tokens = await node.register(['@ana', '@bo', '@cy']);

    await direct.pexpire(leaseKey, 500); // node-a's lease runs out while Redis is paused
    redis.pause!();
    let resumed = false;
    try {
      // node-b's looks go unanswered; once they have for longer than node-a's lease had left, Redis is resumed.
      await waitFor(async () => ((await leadership()).storeUnreachableForMs ?? 0) >= 1500, {
        what: "node-b's looks unanswered for 1.5 s",
        timeoutMs: 15_000,
      });
      redis.resume!();
      resumed = true;
    } finally {
      if (!resumed) redis.resume!();
    }
    const resumedAt = Date.now();
    // Redis ran node-b's queued take: the lease names node-b. Before, node-b followed itself until it ran out.
    await waitFor(async () => (await leadership()).role === 'leading', { what: 'node-b leading', timeoutMs: LEASE_MS + 5000 });
    expect(Date.now() - resumedAt).toBeLessThan(LEASE_MS / 2);
    expect(await leadership()).toEqual({ role: 'leading', node: 'node-b', token: expect.stringMatching(/^\d+$/) });
    expect(await direct.get(leaseKey)).toBe(`node-b:${(await leadership()).token}`);

    // It projects: the mail sent before and during the stall is in the inboxes, and a send now is in view at once.
    const head = (await node.mailbox.eventStore.headPosition())!;
    expect(await node.mailbox.runner.waitFor(head, 10_000)).toBe(true);
    const sent = await node.call('POST', '/v1/messages', {
      token: tokens['@ana'],
      body: { to: ['@bo', '@cy'], subject: 'after the stall', body: 'x' },
    });
    expect(sent.status).toBe(201);
    expect(sent.body.warnings ?? []).toEqual([]);
    for (const identity of ['@bo', '@cy']) {
      const inbox = await node.call('GET', '/v1/messages', { token: tokens[identity] });
      expect(inbox.body.messages.map((m: { subject: string }) => m.subject)).toEqual(['after the stall']);
      expect(inbox.body.unreadCount).toBe(1);
    }
  } finally {
    direct.disconnect();
  }
}, 60_000);
