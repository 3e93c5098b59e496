/** The projection store contract on the SQLite views (the embedded default), each store in a fresh file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { ThreadedSqliteProjectionStore } from '../../src/adapters/projections/threadedSqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { SqliteDriver } from '../../src/support/sqlite/sqliteDriver';
import { describeProjectionStoreContract, type ProjectionStoreFactory } from './projectionStore.contract';
import { describeTaskViewsContract } from './taskViews.contract';
import { LogBuilder } from './projectionStoreLog';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import type { TaskEnvelope } from '../../src/commands/messageFields';
import type { ProjectionStore } from '../../src/projections/projectionStore';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Small transactions too (16 events): a batch spans several, each with its checkpoint. */
const sqlite =
  (eventsPerTransaction?: number, driver?: SqliteDriver): ProjectionStoreFactory =>
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'views-contract-'));
    dirs.push(dir);
    const wakeBus = new InProcessWakeBus();
    const store = SqliteProjectionStore.open(path.join(dir, 'views.sqlite'), wakeBus, { eventsPerTransaction, driver });
    return { store, wakeBus, close: async () => Promise.all([store.close(), wakeBus.close()]).then(() => undefined) };
  };

/** The store the embedded mailbox runs on: the same file, written by a worker thread, read on the event loop. */
const threaded =
  (driver?: SqliteDriver): ProjectionStoreFactory =>
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'views-contract-'));
    dirs.push(dir);
    const wakeBus = new InProcessWakeBus();
    const store = await ThreadedSqliteProjectionStore.open(path.join(dir, 'views.sqlite'), wakeBus, { driver });
    if (driver !== undefined) expect(store.driver).toBe(driver);
    return { store, wakeBus, close: async () => Promise.all([store.close(), wakeBus.close()]).then(() => undefined) };
  };

describeProjectionStoreContract('sqlite', sqlite());
describeProjectionStoreContract('sqlite, 16 events per transaction', sqlite(16));
describeTaskViewsContract('sqlite', sqlite());
describeProjectionStoreContract('sqlite, written by a worker thread', threaded());
describeTaskViewsContract('sqlite, written by a worker thread', threaded());
// Where better-sqlite3 could not be compiled at install, the views run on libsql (sqliteViews/sqliteViewsDriver.ts).
describeProjectionStoreContract('sqlite through libsql (no better-sqlite3)', sqlite(undefined, 'libsql'));
describeProjectionStoreContract('sqlite through libsql, written by a worker thread', threaded('libsql'));

it('a task list longer than one read page, filtered by state, pages exactly as the pure read model does', async () => {
  const log = new LogBuilder().register('@a', '@b', '@c');
  for (let i = 0; i < 450; i++)
    log.send('@a', i % 2 === 0 ? '@b' : '@c', { task: { state: i % 3 === 0 ? 'Working' : 'Submitted' } as TaskEnvelope });
  const { store, close } = await sqlite()();
  const memory = new MemoryProjectionStore(new InProcessWakeBus());
  try {
    for (const views of [store, memory]) await views.applyBatch(log.projected());
    const pages = async (views: ProjectionStore) => {
      const all: unknown[] = [];
      let before: number | null = null;
      do {
        const page = await views.listTasks('@a', { list: 'sent', states: ['Working'], limit: 40, before });
        all.push(page);
        before = page.nextBefore;
      } while (before !== null);
      return all;
    };
    const expected = await pages(memory);
    expect(expected.length).toBe(4); // 150 Working tasks in pages of 40
    expect(await pages(store)).toEqual(expected);
  } finally {
    await close();
  }
});
