/**
 * The projector fence on a real Redis Cluster (3 masters + 3 replicas): a batch's per-agent calls go to other slots than
 * the lease and cannot read it, so a writer deposed between its checking call and them may still land them after its
 * successor applied later events. They were taken as harmless (every change written only if absent), but archiving
 * and unarchiving are not: a late archive re-archived an entry its successor had unarchived since, and a late
 * unarchive brought back an entry archived since, so the views were no longer those of the log. Each agent's keys
 * now keep the last position applied to them, and a per-agent call changes nothing at or below it.
 */
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { connectRedis, type RedisClient } from '../../src/adapters/projections/redisConnection';
import { RedisLease } from '../../src/adapters/projections/redisLease';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { ProjectorDeposed } from '../../src/projections/projectorLease';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import { snapshotViews } from '../contract/projectionStore.contract';
import { LogBuilder, projectAll } from '../contract/projectionStoreLog';
import { openRedisHarness } from '../contract/redisHarness';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedisCluster, type TestRedisCluster } from '../support/redisTopologies';
import { waitFor } from '../support/waitFor';

let cluster: TestRedisCluster;
const clients: RedisClient[] = [];
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await cluster?.stop();
});

async function viewsOf(events: readonly ProjectedEvent[]) {
  const store = new MemoryProjectionStore(new InProcessWakeBus());
  await store.applyBatch(events);
  return snapshotViews(store);
}

/** The calls of `store`'s apply script that carry one agent's block (no check): held while `holding`, in order. */
function holdAgentCalls(store: object) {
  const client = (store as { client: Record<string, unknown> }).client;
  const apply = (client.mailboxApply as (...args: unknown[]) => Promise<unknown>).bind(client);
  const held: Array<() => void> = [];
  let holding = true;
  client.mailboxApply = (...args: unknown[]) => {
    const flags = String(args[Number(args[0]) + 1]); // after the key count and the keys
    if (!holding || flags.includes('c')) return apply(...args);
    return new Promise((resolve, reject) => held.push(() => void apply(...args).then(resolve, reject)));
  };
  return {
    held,
    release: () => {
      holding = false;
      for (const go of held.splice(0)) go();
    },
  };
}

it("a deposed writer's late per-agent calls change nothing its successor applied after them: three agents' views exact", async () => {
  const namespace = `clusterfence${process.pid}`;
  const old = await openRedisHarness(cluster.url, { namespace, eventsPerScript: 1000 });
  const fresh = await openRedisHarness(cluster.url, { namespace, eventsPerScript: 1000 });
  const client = await connectRedis(cluster.url, { name: 'lease-test', timeoutMs: REDIS_TEST_TIMEOUT_MS });
  clients.push(client);
  const lease = new RedisLease(client, new RedisKeys(namespace), 'projector');
  const hold = holdAgentCalls(old.store);
  try {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b', { priority: 'high' });
    const m2 = log.send('@a', '@c');
    const m3 = log.send('@c', ['@a', '@b']);
    log.archive('@c', m2);
    const applied = log.events.length;
    // The old writer's next batch: @b archives m1, @c unarchives m2, @a reads m3.
    log.archive('@b', m1).unarchive('@c', m2).read('@a', m3);
    const paused = log.events.length;
    // After it, applied only by the successor: m1 back in @b's inbox, m2 archived again, @b reads m3.
    log.unarchive('@b', m1).archive('@c', m2).read('@b', m3);
    const m4 = log.send('@b', '@c', { priority: 'low' });
    const events = projectAll(log.events);

    const oldToken = (await lease.acquire('old', 60_000))!;
    old.store.fenceWith({ node: 'old', token: oldToken });
    hold.release(); // its first batch goes in whole
    await old.store.applyBatch(events.slice(0, applied));
    const late = holdAgentCalls(old.store);
    // Its next batch passes the check (it holds the lease); its per-agent calls stall (a GC pause, SIGSTOP) ...
    const batch = old.store.applyBatch(events.slice(applied, paused));
    batch.catch(() => undefined); // awaited below
    await waitFor(() => late.held.length === 3, { what: "the old writer's three per-agent calls sent" });

    // ... past its lease: the successor takes it and applies the whole log.
    await lease.release('old', oldToken);
    const freshToken = (await lease.acquire('fresh', 60_000))!;
    fresh.store.fenceWith({ node: 'fresh', token: freshToken });
    await fresh.store.applyBatch(events);
    const whole = await viewsOf(events);
    expect(await snapshotViews(fresh.store)).toEqual(whole);

    // The old writer resumes: its per-agent calls land, its commit is refused.
    late.release();
    await expect(batch).rejects.toBeInstanceOf(ProjectorDeposed);
    const after = await snapshotViews(fresh.store);
    expect(after).toEqual(whole);
    expect(Object.keys(after.views).sort()).toEqual(['@a', '@b', '@c']);
    const listed = (identity: string) =>
      (after.views[identity] as { all: Array<{ messageId: string }> }).all.map((message) => message.messageId);
    expect(listed('@b')).toContain(m1); // unarchived by the successor: in @b's inbox
    expect(listed('@c')).toEqual([m4]); // m2 archived again by the successor

    expect(await fresh.store.checkpoint()).toBe(BigInt(events.length));
  } finally {
    hold.release();
    await fresh.close();
    await old.close();
  }
}, 60_000);
