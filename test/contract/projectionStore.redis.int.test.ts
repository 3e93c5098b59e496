/**
 * The projection store contract on the Redis adapter, against a real
 * redis-server: one script per chunk of events (single node, the default) and
 * one script per hash tag (the Redis Cluster layout, run here on one node).
 */
import { RedisScriptApplier } from '../../src/adapters/projections/redisApplier';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { LIVE_WRITER_TTL_MS, type RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { openRedisHarness } from './redisHarness';
import { startRedis, type TestRedis } from '../support/redisServer';
import { ProjectionCheckpointRewound, ViewsOfAnotherLog } from '../../src/projections/projectionStore';
import {
  describeProjectionStoreContract,
  listAll,
  recordWakes,
  snapshotViews,
  type ProjectionStoreHarness,
} from './projectionStore.contract';
import { LogBuilder } from './projectionStoreLog';
import { describeTaskViewsContract } from './taskViews.contract';
import { CONTRACT_TIMEOUT_MS } from './contractRedisTimeout';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

describeProjectionStoreContract('redis (one script per chunk of events)', () => openRedisHarness(redis.url));
describeProjectionStoreContract('redis (one script per hash tag, Cluster layout)', () =>
  openRedisHarness(redis.url, { scriptPerTag: true, eventsPerScript: 16 }),
);
describeTaskViewsContract('redis (one script per chunk of events)', () => openRedisHarness(redis.url, { eventsPerScript: 4 }));
describeTaskViewsContract('redis (one script per hash tag, Cluster layout)', () =>
  openRedisHarness(redis.url, { scriptPerTag: true, eventsPerScript: 3 }),
);

describe('Redis projection store specifics', () => {
  let harnesses: Array<ProjectionStoreHarness & { store: RedisProjectionStore }> = [];
  const open = async (namespace?: string) => {
    const harness = await openRedisHarness(redis.url, namespace ? { namespace } : {});
    harnesses.push(harness);
    return harness;
  };
  afterEach(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    harnesses = [];
  });

  it('a lost checkpoint never double-counts: the whole log again changes no count and wakes nobody', async () => {
    const first = await open();
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b', { priority: 'high' });
    log.send('@a', 'AGENT:*', {}, ['@b', '@c']);
    log.read('@b', m1);
    log.send('@c', '@b');
    await first.store.applyBatch(log.projected());
    const before = await snapshotViews(first.store);
    const admin = await connectRedis(redis.url, { name: 'contract-admin', timeoutMs: CONTRACT_TIMEOUT_MS });
    await admin.del(first.store.keys.checkpoint(first.store.keys.defaultPrefix));
    await admin.quit();

    const again = await open(first.store.keys.namespace); // a fresh projector that never saw a checkpoint
    const recorder = await recordWakes(again.wakeBus, ['@a', '@b', '@c']);
    await again.store.applyBatch(log.projected());
    await recorder.flush();
    expect(recorder.wakes).toEqual([]);
    expect(await snapshotViews(again.store)).toEqual(before);
    await recorder.stop();
  });

  it('a checkpoint that went back is reported (ProjectionCheckpointRewound) before anything is applied', async () => {
    const { store } = await open();
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', '@b');
    const events = log.projected();
    await store.applyBatch(events.slice(0, 3));
    await store.generations().drop(store.keys.defaultPrefix); // every view and the checkpoint gone, as after a restart
    const error = await store.applyBatch(events.slice(3)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProjectionCheckpointRewound);
    expect((error as ProjectionCheckpointRewound).checkpoint).toBeNull();
    expect(await store.listAgents()).toEqual([]); // nothing of the batch landed in the emptied store
    expect(await listAll(store, '@b')).toEqual([]);
    await store.applyBatch(events); // the projector resumes from the start
    expect((await listAll(store, '@b')).map((m) => m.messageId)).toEqual(['m1']);
  });

  it('after a blue/green switch, a projector on the old generation follows the new one; the old one stops changing', async () => {
    const { store } = await open();
    const log = new LogBuilder().register('@a', '@b', '@c');
    for (let i = 0; i < 6; i++) log.send('@a', i % 2 ? '@b' : '@c');
    const events = log.projected();
    await store.applyBatch(events.slice(0, 6));
    const generation = await store.generations().create();
    await generation.applyBatch(events.slice(0, 6));
    expect(await store.generations().activate(generation, store.keys.defaultPrefix, false)).toEqual({
      outcome: 'switched',
      previous: store.keys.defaultPrefix,
      previousCheckpoint: 6n, // where the previous generation stood at the switch
    });
    await store.applyBatch(events.slice(6));
    expect(await generation.checkpoint()).toBe(BigInt(events.length));
    const admin = await connectRedis(redis.url, { name: 'contract-admin', timeoutMs: CONTRACT_TIMEOUT_MS });
    expect(await admin.get(store.keys.checkpoint(store.keys.defaultPrefix))).toBe('6'.padStart(20, '0'));
    await admin.quit();
    expect((await listAll(store, '@b')).map((m) => m.messageId)).toEqual(['m6', 'm4', 'm2']);
    await store.generations().drop(store.keys.defaultPrefix);
  });

  it('a rebuild holding the live projector makes it wait, not fail; after the switch it applies in the new generation', async () => {
    const { store } = await open();
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', '@b');
    log.send('@a', '@c');
    const events = log.projected();
    await store.applyBatch(events.slice(0, 4));
    const generations = store.generations();
    const generation = await generations.create();
    await generation.applyBatch(events.slice(0, 4));
    await generations.holdLive(generation, 5000);
    // The positive signal: the live store's script ran and answered 'fenced' (it waits and tries again).
    let fencedSeen!: () => void;
    const fenced = new Promise<void>((resolve) => (fencedSeen = resolve));
    const apply = RedisScriptApplier.prototype.apply;
    const spy = jest.spyOn(RedisScriptApplier.prototype, 'apply').mockImplementation(async function (
      this: RedisScriptApplier,
      ...args
    ) {
      const outcome = await apply.apply(this, args);
      if (outcome.status === 'fenced') fencedSeen();
      return outcome;
    });
    let applied = false;
    const pending = store.applyBatch(events.slice(4)).then(() => (applied = true));
    await fenced;
    spy.mockRestore();
    expect(applied).toBe(false); // held: nothing written to the old generation meanwhile
    expect(await generation.checkpoint()).toBe(4n);
    expect(await generations.activate(generation, store.keys.defaultPrefix, false)).toMatchObject({ outcome: 'switched' });
    await pending;
    expect(await generation.checkpoint()).toBe(BigInt(events.length));
    expect((await listAll(store, '@c')).map((m) => m.messageId)).toEqual(['m2']);
    await generations.drop(store.keys.defaultPrefix);
  });
});

describe.each([
  ['one script per chunk', {}],
  ['one script per hash tag', { scriptPerTag: true, eventsPerScript: 4 }],
] as const)('Redis views bound to their log (%s)', (_layout, options) => {
  let harnesses: Array<ProjectionStoreHarness & { store: RedisProjectionStore }> = [];
  const open = async (namespace?: string) => {
    const harness = await openRedisHarness(redis.url, { ...options, ...(namespace ? { namespace } : {}) });
    harnesses.push(harness);
    return harness;
  };
  afterEach(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    harnesses = [];
  });

  const scenario = () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', '@b');
    log.send('@b', '@c');
    return log.projected();
  };

  it('a claim records the log with the checkpoint; the other log finds them held, writes nothing, and neither applies nor reads them', async () => {
    const owner = await open();
    expect(await owner.store.claim('log-a')).toMatchObject({ logIdentity: 'log-a', checkpoint: null, liveWriter: null });
    await owner.store.applyBatch(scenario());
    await owner.store.markLiveWriter('log-a');
    expect(await owner.store.binding()).toMatchObject({
      logIdentity: 'log-a',
      liveWriter: 'log-a',
      location: `Redis namespace '${owner.store.keys.namespace}'`,
    });
    const before = await snapshotViews(owner.store);

    const other = await open(owner.store.keys.namespace);
    const recorder = await recordWakes(other.wakeBus, ['@a', '@b', '@c']);
    expect(await other.store.claim('log-b')).toMatchObject({ logIdentity: 'log-a' });
    const events = new LogBuilder().register('@x', '@y', '@z').projected();
    const refused = await other.store.applyBatch(events).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ViewsOfAnotherLog);
    expect((refused as ViewsOfAnotherLog).owner).toBe('log-a');
    await expect(other.store.listAgents()).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('another event log (log-a)'),
    });
    await expect(other.store.unreadCount('@b')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await recorder.flush();
    expect(recorder.wakes).toEqual([]);
    expect(await snapshotViews(owner.store)).toEqual(before);
    expect((await owner.store.listAgents()).map((agent) => agent.identity)).toEqual(['@a', '@b', '@c']);
    await recorder.stop();
  });

  it('views of no recorded log (written before identities) are never claimed nor applied to', async () => {
    const legacy = await open();
    await legacy.store.applyBatch(scenario()); // an unbound writer, as before log identities
    expect((await legacy.store.binding()).logIdentity).toBeNull();
    const bound = await open(legacy.store.keys.namespace);
    expect(await bound.store.claim('log-a')).toMatchObject({ logIdentity: null, checkpoint: expect.any(BigInt) });
    const refused = await bound.store.applyBatch(new LogBuilder().register('@x').projected()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ViewsOfAnotherLog);
    expect((await legacy.store.listAgents()).map((agent) => agent.identity)).toEqual(['@a', '@b', '@c']);
  });

  it('views lost (Redis emptied) are claimed again by the next apply of their log, in the same script', async () => {
    const { store } = await open();
    await store.claim('log-a');
    const events = scenario();
    await store.applyBatch(events.slice(0, 3));
    await store.generations().drop(store.keys.defaultPrefix);
    await expect(store.applyBatch(events.slice(3))).rejects.toBeInstanceOf(ProjectionCheckpointRewound);
    await store.applyBatch(events);
    expect(await store.binding()).toMatchObject({ logIdentity: 'log-a', checkpoint: events[events.length - 1].position });
    expect((await listAll(store, '@c')).length).toBe(1);
  });

  it('the live writer mark is set only for the log holding the views, expires by itself and is released only by its own log', async () => {
    const { store } = await open();
    await store.markLiveWriter('log-a'); // views of no log yet: not renewed
    expect((await store.binding()).liveWriter).toBeNull();
    await store.claim('log-a');
    await store.markLiveWriter('log-b');
    expect((await store.binding()).liveWriter).toBeNull();
    await store.markLiveWriter('log-a');
    await store.releaseLiveWriter('log-b');
    expect((await store.binding()).liveWriter).toBe('log-a');
    await store.releaseLiveWriter('log-a');
    expect((await store.binding()).liveWriter).toBeNull();
    const admin = await connectRedis(redis.url, { name: 'contract-admin', timeoutMs: CONTRACT_TIMEOUT_MS });
    await store.markLiveWriter('log-a');
    const ttl = await admin.pttl(store.keys.liveWriter);
    await admin.quit();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(LIVE_WRITER_TTL_MS);
  });
});
