/**
 * The projector lease in Redis and the apply script's fence (issue 14, Deliver 3), on a real redis-server:
 * one holder at a time with a growing token, compare-and-renew, release on a clean stop; and a writer
 * that is not the lease's current holder changes nothing, in both script layouts (also when Redis lost its
 * data and the new holder's token is smaller or equal), and a running projector whose write is refused
 * steps down with one line saying why.
 */
import { connectRedis, type RedisClient } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { RedisLease } from '../../src/adapters/projections/redisLease';
import { ProjectorDeposed, type LeaseStore } from '../../src/projections/projectorLease';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import { ProjectionRunner } from '../../src/projections/projectionRunner';
import { leaseKey, leaseTokenKey } from '../../src/adapters/projections/redisLease';
import { appendLog } from '../contract/projectionStoreLog';
import pino from 'pino';
import { openRedisHarness } from '../contract/redisHarness';
import { snapshotViews } from '../contract/projectionStore.contract';
import { generateLog, projectAll } from '../contract/projectionStoreLog';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
const clients: RedisClient[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await redis.stop();
});

let namespaces = 0;

/** Redis loses its data (FLUSHALL: as restarted empty). */
async function flush(): Promise<void> {
  const admin = await connectRedis(redis.url, { name: 'flusher', timeoutMs: REDIS_TEST_TIMEOUT_MS });
  clients.push(admin);
  await admin.flushall();
}

/** The views a memory store builds from the same events: what any correct writer leaves. */
async function viewsOf(events: readonly ProjectedEvent[]) {
  const store = new MemoryProjectionStore(new InProcessWakeBus());
  await store.applyBatch(events);
  return snapshotViews(store);
}
async function leaseOn(namespace: string): Promise<RedisLease> {
  const client = await connectRedis(redis.url, { name: 'lease-test', timeoutMs: REDIS_TEST_TIMEOUT_MS });
  clients.push(client);
  return new RedisLease(client, new RedisKeys(namespace), 'projector');
}

describe('RedisLease', () => {
  it('one holder at a time; the token grows with every new holder; only the holder renews or releases', async () => {
    const namespace = `lease${process.pid}n${++namespaces}`;
    const [a, b, c] = [await leaseOn(namespace), await leaseOn(namespace), await leaseOn(namespace)];
    const first = (await a.acquire('node-a', 60_000))!;
    expect(first).toEqual(expect.any(BigInt));
    expect(await b.acquire('node-b', 60_000)).toBeNull();
    expect(await c.acquire('node-c', 60_000)).toBeNull();
    // The holder, and how long its lease has left (a follower's readiness says how soon a silent leader's runs out).
    const seen = await c.holder();
    expect(seen).toEqual({ node: 'node-a', token: first, expiresInMs: expect.any(Number) });
    expect(seen!.expiresInMs).toBeLessThanOrEqual(60_000);
    expect(seen!.expiresInMs).toBeGreaterThan(50_000);
    expect(await b.renew('node-b', first, 60_000)).toBe(false);
    expect(await a.renew('node-a', first, 60_000)).toBe(true);
    await b.release('node-b', first); // not b's: left alone
    expect(await c.holder()).toMatchObject({ node: 'node-a', token: first });
    await a.release('node-a', first);
    expect(await c.holder()).toBeNull();
    const second = (await b.acquire('node-b', 60_000))!;
    expect(second).toBeGreaterThan(first);
    expect(await a.renew('node-a', first, 60_000)).toBe(false); // a's old lease is gone for good
  });

  it('an unrenewed lease expires and the next holder draws a newer token', async () => {
    const namespace = `lease${process.pid}n${++namespaces}`;
    const [a, b] = [await leaseOn(namespace), await leaseOn(namespace)];
    const first = (await a.acquire('node-a', 300))!;
    await waitFor(async () => (await b.holder()) === null, { timeoutMs: 5000 });
    expect(await b.acquire('node-b', 60_000)).toBeGreaterThan(first);
    expect(await a.renew('node-a', first, 60_000)).toBe(false);
  });

  it('refuses a lease name that is no key part', async () => {
    await expect(leaseOn('x').then(() => new RedisLease(clients[0], new RedisKeys('x'), 'Pro jector'))).rejects.toThrow(
      "Lease name 'Pro jector' must be 1..32 of [a-z0-9-], starting with a letter",
    );
  });
});

/** Two projector processes' stores on one namespace (the old holder's and its successor's), a log of 90, the lease. */
async function twoWriters(scriptPerTag: boolean) {
  const namespace = `fence${process.pid}n${++namespaces}`;
  const old = await openRedisHarness(redis.url, { namespace, scriptPerTag, eventsPerScript: 8 });
  const fresh = await openRedisHarness(redis.url, { namespace, scriptPerTag, eventsPerScript: 8 });
  return { old, fresh, log: projectAll(generateLog(90)), lease: await leaseOn(namespace) };
}

describe.each([
  ['one script per chunk of events', false],
  ['one script per hash tag (Cluster layout)', true],
])('the apply fence (%s)', (_layout, scriptPerTag) => {
  it("a deposed writer's late batch changes nothing and says so; the new holder's applies go on", async () => {
    const { old, fresh, log, lease } = await twoWriters(scriptPerTag);
    try {
      const oldToken = (await lease.acquire('old', 60_000))!;
      old.store.fenceWith({ node: 'old', token: oldToken });
      await old.store.applyBatch(log.slice(0, 30));
      await lease.release('old', oldToken); // as if it had expired while the old writer was paused
      const freshToken = (await lease.acquire('fresh', 60_000))!;
      fresh.store.fenceWith({ node: 'fresh', token: freshToken });
      await fresh.store.applyBatch(log.slice(0, 60));
      const before = await snapshotViews(fresh.store);
      expect(before.checkpoint).toBe(60n);

      const late = old.store.applyBatch(log.slice(30, 90));
      await expect(late).rejects.toBeInstanceOf(ProjectorDeposed);
      await expect(late).rejects.toThrow(
        `Fresh holds the projector lease (token ${freshToken}) (this writer's token is ${oldToken}): its write was refused`,
      );
      expect(await snapshotViews(fresh.store)).toEqual(before);

      await fresh.store.applyBatch(log.slice(60, 90));
      expect(await fresh.store.checkpoint()).toBe(90n);
    } finally {
      await fresh.close();
      await old.close(); // the whole harness: its wake bus holds a connection of its own
    }
  });

  // Redis lost its data (restarted empty, or flushed) while the old holder was paused (SIGSTOP): it still leads, it believes.
  // The fence compared tokens once, and the token counter started again from 1, so the paused holder passed it with a
  // token above or equal to its successor's; the fence is now the lease key itself, `<node>:<token>` compared for equality.
  // A token drawn after the loss is above the paused holder's (tokens follow Redis's clock); a smaller or equal one
  // (Redis's clock gone back across the loss) is set by hand here: another node's lease, whatever its token, fences it.
  it.each([
    ['a larger token', (_successor: bigint, paused: bigint) => paused],
    ['a smaller token', (successor: bigint) => successor + 1_000n],
    ['the same token', (successor: bigint) => successor],
  ])(
    "a holder paused across the loss writes nothing once a new holder draws %s; the new holder's applies go on",
    async (_case, pausedToken) => {
      const { old, fresh, log, lease } = await twoWriters(scriptPerTag);
      try {
        const drawn = (await lease.acquire('old', 60_000))!;
        old.store.fenceWith({ node: 'old', token: drawn });
        await old.store.applyBatch(log.slice(0, 30));

        await flush();
        const successor = (await lease.acquire('fresh', 60_000))!;
        expect(successor).toBeGreaterThan(drawn);
        const oldToken = pausedToken(successor, drawn);
        old.store.fenceWith({ node: 'old', token: oldToken });
        fresh.store.fenceWith({ node: 'fresh', token: successor });
        await fresh.store.applyBatch(log.slice(0, 60));
        const before = await snapshotViews(fresh.store);
        expect(before.checkpoint).toBe(60n);

        const late = old.store.applyBatch(log.slice(30, 90)); // resumed (SIGCONT): its next batch
        await expect(late).rejects.toBeInstanceOf(ProjectorDeposed);
        await expect(late).rejects.toThrow(
          `Fresh holds the projector lease (token ${successor}) (this writer's token is ${oldToken}): its write was refused`,
        );
        expect(await snapshotViews(fresh.store)).toEqual(before);

        await fresh.store.applyBatch(log.slice(60, 90));
        expect(await fresh.store.checkpoint()).toBe(90n);
      } finally {
        await fresh.close();
        await old.close();
      }
    },
  );

  // The token counter started again from 1 after the loss, so a node that took the lease again under the same node id
  // (the same process once the lease was gone, or a process restarted under that id: the default <hostname>-<pid> of a
  // container is the same after a restart) drew the very token it held before, `<node>:1`, and a late write of its
  // earlier term, paused across the loss, matched the new term's lease key and went in. Tokens now never repeat.
  it('a holder paused across the loss writes nothing once its own node id takes the lease again; the views are exact', async () => {
    const { old, fresh, log, lease } = await twoWriters(scriptPerTag);
    try {
      const drawn = (await lease.acquire('web-1', 60_000))!;
      old.store.fenceWith({ node: 'web-1', token: drawn });
      await old.store.applyBatch(log.slice(0, 30));

      await flush();
      const again = (await lease.acquire('web-1', 60_000))!;
      expect(again).not.toBe(drawn);
      fresh.store.fenceWith({ node: 'web-1', token: again });
      await fresh.store.applyBatch(log.slice(0, 60));
      const before = await snapshotViews(fresh.store);
      expect(before.checkpoint).toBe(60n);
      expect(before).toEqual(await viewsOf(log.slice(0, 60)));
      expect(Object.keys(before.views)).toEqual(expect.arrayContaining(['@a', '@b', '@c']));

      const late = old.store.applyBatch(log.slice(30, 90)); // the earlier term's batch, resumed
      await expect(late).rejects.toBeInstanceOf(ProjectorDeposed);
      await expect(late).rejects.toThrow(
        `Web-1 holds the projector lease (token ${again}) (this writer's token is ${drawn}): its write was refused`,
      );
      expect(await snapshotViews(fresh.store)).toEqual(before);

      await fresh.store.applyBatch(log.slice(60, 90));
      expect(await snapshotViews(fresh.store)).toEqual(await viewsOf(log));
    } finally {
      await fresh.close();
      await old.close();
    }
  });

  // The store named the refused write's token from its fence as it stood when the refusal came back: a call sent under
  // the earlier term, refused after the node had taken the lease again (and the runner had fenced the store with the new
  // token), was said to carry the new term's token ("Web-1 holds ... (token T2) (this writer's token is T2)").
  it("a call sent before its node took the lease again is refused naming the token it carried; the store's new term goes on", async () => {
    const { old, fresh, log, lease } = await twoWriters(scriptPerTag);
    const client = (old.store as unknown as { client: Record<string, unknown> }).client;
    const apply = (client.mailboxApply as (...args: unknown[]) => Promise<unknown>).bind(client);
    try {
      const drawn = (await lease.acquire('web-1', 60_000))!;
      old.store.fenceWith({ node: 'web-1', token: drawn });
      await old.store.applyBatch(log.slice(0, 30));

      // The next batch's calls reach the client and wait there (the writer paused) until the test lets them go.
      const held: Array<() => void> = [];
      client.mailboxApply = (...args: unknown[]) =>
        new Promise((resolve, reject) => held.push(() => void apply(...args).then(resolve, reject)));
      const late = old.store.applyBatch(log.slice(30, 90));
      late.catch(() => undefined); // awaited below
      await waitFor(() => held.length > 0, { timeoutMs: 15_000, what: "the earlier term's call sent" });
      client.mailboxApply = apply;

      // Redis loses the lease with its data; the node takes it again (a new token) and fences its store with it, as its
      // runner does; the new term's views stand at 60.
      await flush();
      const again = (await lease.acquire('web-1', 60_000))!;
      expect(again).not.toBe(drawn);
      old.store.fenceWith({ node: 'web-1', token: again });
      fresh.store.fenceWith({ node: 'web-1', token: again });
      await fresh.store.applyBatch(log.slice(0, 60));
      const before = await snapshotViews(fresh.store);
      expect(before.checkpoint).toBe(60n);

      for (const go of held.splice(0)) go();
      await expect(late).rejects.toBeInstanceOf(ProjectorDeposed);
      await expect(late).rejects.toThrow(
        `Web-1 holds the projector lease (token ${again}) (this writer's token is ${drawn}): its write was refused`,
      );
      await expect(late).rejects.toMatchObject({ token: drawn, current: { node: 'web-1', token: again } });
      expect(await snapshotViews(fresh.store)).toEqual(before);

      // The same store, under the token it holds now, applies the rest: the views are the log's, exactly.
      await old.store.applyBatch(log.slice(60, 90));
      const after = await snapshotViews(fresh.store);
      expect(after).toEqual(await viewsOf(log));
      expect(Object.keys(after.views)).toEqual(expect.arrayContaining(['@a', '@b', '@c']));
    } finally {
      client.mailboxApply = apply;
      await fresh.close();
      await old.close();
    }
  });
});

describe('a projector whose write is refused', () => {
  it('steps down at once, logs one line saying why, and its late batch changes nothing', async () => {
    const namespace = `deposed${process.pid}n${++namespaces}`;
    const harness = await openRedisHarness(redis.url, { namespace });
    const log = new MemoryEventStore();
    const events = generateLog(60);
    await appendLog(log, events.slice(0, 30));
    // A node paused past its lease does not know it lost it: its lease store still answers "renewed". The lease key in
    // Redis, which the apply script's fence reads, names it until another node takes the lease.
    const client = await connectRedis(redis.url, { name: 'new-leader', timeoutMs: REDIS_TEST_TIMEOUT_MS });
    clients.push(client);
    await client.set(leaseKey(harness.store.keys, 'projector'), 'paused:1');
    let holder = { node: 'paused', token: 1n };
    const unaware: LeaseStore = {
      name: 'projector',
      acquire: async () => (holder.node === 'paused' ? 1n : null),
      renew: async () => true,
      release: async () => undefined,
      holder: async () => holder,
    };
    const lines: Array<{ msg: string; reason?: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runner = new ProjectionRunner(log, harness.store, logger);
    runner.useLease(unaware, 'paused', 60_000);
    try {
      await runner.start();
      expect(runner.getStatus().leadership).toEqual({ role: 'leading', node: 'paused', token: '1' });
      expect(await harness.store.checkpoint()).toBe(30n);

      // Meanwhile another node took the lease (token 2) and projects; then the paused node's subscription delivers more.
      await client.set(leaseTokenKey(harness.store.keys, 'projector'), '2');
      await client.set(leaseKey(harness.store.keys, 'projector'), 'successor:2');
      holder = { node: 'successor', token: 2n };
      const before = await snapshotViews(harness.store);
      await appendLog(log, events.slice(30, 60));

      await waitFor(() => runner.getStatus().leadership.role === 'following', { what: 'the paused node stepping down' });
      const steppedDown = lines.filter((line) => line.msg.startsWith('projector: stepped down'));
      expect(steppedDown).toHaveLength(1);
      expect(steppedDown[0].reason).toBe(
        "successor holds the projector lease (token 2) (this node's token 1): its late writes were refused",
      );
      expect(await snapshotViews(harness.store)).toEqual(before);
      await waitFor(
        () => {
          const leadership = runner.getStatus().leadership;
          return leadership.role === 'following' && leadership.leader === 'successor';
        },
        {
          what: 'the paused node naming its successor',
        },
      );
    } finally {
      await runner.stop();
      await harness.close();
    }
  });
});
