/**
 * A blue/green rebuild into Redis while Redis stops answering (SIGSTOP, past the command deadline) and comes back
 * (SIGCONT): the rebuild reports that it waits, goes on from where its generation stands, and switches to views equal
 * to a clean build, with every event counted once. Before, the first missed deadline ended the rebuild and dropped
 * everything it had built. Real redis-server; identities of the generated log: @a, @b, @c and seven more.
 */
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { StoredEvent } from '../../src/events/types';
import { rebuildProjections, type RebuildProgress } from '../../src/projections/rebuild';
import { snapshotViews } from '../contract/projectionStore.contract';
import { appendLog, generateLog, projectAll } from '../contract/projectionStoreLog';
import { startRedis, type TestRedis } from '../support/redisServer';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  redis.resume?.();
  await redis.stop();
});

async function viewsOf(events: readonly StoredEvent[]) {
  const store = new MemoryProjectionStore(new InProcessWakeBus());
  await store.applyBatch(projectAll(events));
  return snapshotViews(store);
}

it('Redis paused past its deadline mid-rebuild: the rebuild waits, says so, resumes where it stood; exact views', async () => {
  const log = new MemoryEventStore();
  await appendLog(log, generateLog(3_000, 41));
  const events = await log.readAll(null, 1_000_000);
  const store = new RedisProjectionStore(await connectRedis(redis.url, { name: 'outage-rebuild', timeoutMs: 300 }), {
    namespace: `outage${process.pid}`,
  });
  try {
    const progress: RebuildProgress[] = [];
    let paused = false;
    let resumed = false;
    const result = await rebuildProjections(log, store.generations(), {
      pageSize: 200,
      settleMs: 0,
      dropPreviousAfterMs: 0,
      onProgress: (p) => {
        progress.push(p);
        if (!paused && p.phase === 'building' && p.events >= 1_000) {
          paused = true;
          redis.pause!(); // Redis stops answering: the batches in flight and the next ones miss the 300 ms deadline
        }
        if (paused && !resumed && p.phase === 'retrying') {
          resumed = true; // the positive signal: the rebuild said it waits
          redis.resume!();
        }
      },
    });

    expect(resumed).toBe(true);
    const retry = progress.find((p) => p.phase === 'retrying')!.retry!;
    expect(retry.attempt).toBe(1);
    expect(retry.reason).toMatch(/^Redis projections \((apply|task records)\) is unavailable; retry later/);
    expect(result.events).toBe(events.length);
    expect(result.checkpoint).toBe(events.at(-1)!.position);
    expect(await snapshotViews(store)).toEqual(await viewsOf(events));
  } finally {
    redis.resume!(); // whatever happened above, Redis answers again for the clean-up
    await store.reset();
    await store.close();
  }
});
