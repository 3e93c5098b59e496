/**
 * The views thread dies (a crash, a kill): the store starts a new one on the file, which claims the views for the
 * same log again; the batch the old thread had in hand rolled back with it and is applied again by the caller (the
 * projector retries), nothing counted twice; the views equal the pure read model's (memory store) on the same log.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { ThreadedSqliteProjectionStore } from '../../src/adapters/projections/threadedSqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { startThread } from '../../src/support/threads/startThread';
import { LogBuilder } from '../contract/projectionStoreLog';
import { storeQuery } from '../contract/storeQuery';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function openKeepingThreads() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'views-thread-'));
  dirs.push(dir);
  const threads: Worker[] = [];
  const store = await ThreadedSqliteProjectionStore.open(
    path.join(dir, 'views.sqlite'),
    new InProcessWakeBus(),
    {},
    (entry, options) => {
      const worker = startThread(entry, options);
      threads.push(worker);
      return worker;
    },
  );
  return { store, threads };
}

const views = async (store: ProjectionStore) =>
  Promise.all(
    ['@a', '@b', '@c'].map(async (identity) => [
      await store.unreadCount(identity),
      await store.listMessages(identity, storeQuery({ status: 'all', limit: 50 })),
    ]),
  );

function log(): LogBuilder {
  const built = new LogBuilder().register('@a', '@b', '@c');
  for (let i = 0; i < 30; i++) {
    const id = built.send(i % 3 === 0 ? '@a' : '@b', i % 2 === 0 ? '@c' : ['@a', '@c']);
    if (i % 4 === 0) built.read('@c', id);
  }
  return built;
}

it('a thread killed between batches is replaced: later batches apply, claimed for the same log, views exact', async () => {
  const { store, threads } = await openKeepingThreads();
  const expected = new MemoryProjectionStore(new InProcessWakeBus());
  try {
    const events = log().projected();
    await store.claim('log-1');
    await store.applyBatch(events.slice(0, 20));
    const exited = new Promise((resolve) => threads[0].once('exit', resolve));
    await threads[0].terminate();
    await exited;
    await store.applyBatch(events.slice(20));
    expect(threads).toHaveLength(2); // a new thread took over
    expect((await store.binding()).logIdentity).toBe('log-1');
    expect(await store.checkpoint()).toBe(events[events.length - 1].position);
    await expected.applyBatch(events);
    expect(await views(store)).toEqual(await views(expected));
  } finally {
    await store.close();
  }
});

it('a batch in hand when the thread dies fails loudly; applied again, it counts once', async () => {
  const { store, threads } = await openKeepingThreads();
  const expected = new MemoryProjectionStore(new InProcessWakeBus());
  try {
    const events = log().projected();
    await store.claim('log-1');
    await store.applyBatch(events.slice(0, 10));
    const inHand = store.applyBatch(events.slice(10));
    void threads[0].terminate();
    // Either the thread committed before it died (then the retry changes nothing), or the batch rolled back with it.
    await inHand.catch((error: Error) => expect(error.message).toMatch(/SQLite views thread exited .*a new one is started/));
    await store.applyBatch(events.slice(10)); // what the projector does after a failed apply
    expect(threads).toHaveLength(2);
    await expected.applyBatch(events);
    expect(await views(store)).toEqual(await views(expected));
  } finally {
    await store.close();
  }
});

it("the thread's young generation is capped at 12 MB (V8's default, 48, let it grow by 8-24 MB under load), its replacement's too", async () => {
  const { store, threads } = await openKeepingThreads();
  try {
    await store.claim('log-1');
    expect(threads[0].resourceLimits?.maxYoungGenerationSizeMb).toBe(12); // as the running thread's V8 reports it
    const exited = new Promise((resolve) => threads[0].once('exit', resolve));
    await threads[0].terminate();
    await exited;
    await store.applyBatch(log().projected());
    expect(threads).toHaveLength(2);
    expect(threads[1].resourceLimits?.maxYoungGenerationSizeMb).toBe(12);
  } finally {
    await store.close();
  }
});
