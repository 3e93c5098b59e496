/** The projection store contract on the SQLite views (the embedded default), each store in a fresh file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { describeProjectionStoreContract, type ProjectionStoreFactory } from './projectionStore.contract';
import { describeTaskViewsContract } from './taskViews.contract';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Small transactions too (16 events): a batch spans several, each with its checkpoint. */
const sqlite =
  (eventsPerTransaction?: number): ProjectionStoreFactory =>
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'views-contract-'));
    dirs.push(dir);
    const wakeBus = new InProcessWakeBus();
    const store = SqliteProjectionStore.open(path.join(dir, 'views.sqlite'), wakeBus, { eventsPerTransaction });
    return { store, wakeBus, close: async () => Promise.all([store.close(), wakeBus.close()]).then(() => undefined) };
  };

describeProjectionStoreContract('sqlite', sqlite());
describeProjectionStoreContract('sqlite, 16 events per transaction', sqlite(16));
describeTaskViewsContract('sqlite', sqlite());
