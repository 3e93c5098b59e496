/**
 * A first build of the SQLite views in bulk (sqliteViews/sqliteBulkBuild.ts): a large batch into an empty generation
 * drops the listing indexes and marks the generation (`bulk:<generation>`); the next small (live) batch creates them
 * again inside its own transaction, and so does a read, also after the process stopped mid-build (the mark is in the
 * file). The views then equal a clean rebuild's, and the listings use their indexes again.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { BULK_MIN_EVENTS } from '../../src/adapters/projections/sqliteViews/sqliteBulkBuild';
import { LISTING_INDEXES } from '../../src/adapters/projections/sqliteViews/sqliteViewsSchema';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { projectStored } from '../../src/projections/projector';
import type { StoredEvent } from '../../src/events/types';
import { writeSyntheticLog } from '../../bench/lib/syntheticLog';
import { snapshotViews } from '../contract/projectionStore.contract';
import { tempDir } from '../support/fixtures';

let dir: string;
let events: StoredEvent[];

beforeAll(async () => {
  dir = tempDir('bulk-build-');
  const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  await writeSyntheticLog(log, { agents: 3, events: 1_000, readShare: 0.3, archiveShare: 0.2, broadcastEvery: 150 });
  events = await log.readAll(null, 10_000);
  await log.close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What the file says of its listing indexes and bulk marks, read on a connection of its own. */
function fileState(file: string): { indexes: string[]; marks: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    const names = (sql: string) => (db.prepare(sql).all() as Array<{ name: string }>).map((row) => row.name);
    return {
      indexes: names(`SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB 'g*_entries_*' ORDER BY name`).filter(
        (name) => LISTING_INDEXES.some((index) => name.endsWith(`_entries_${index}`)),
      ),
      marks: names(`SELECT key AS name FROM views_meta WHERE key GLOB 'bulk:*'`),
    };
  } finally {
    db.close();
  }
}

async function cleanRebuild(upTo: number) {
  const clean = new MemoryProjectionStore(new InProcessWakeBus());
  await clean.applyBatch(events.slice(0, upTo).map(projectStored));
  return snapshotViews(clean);
}

test('a bulk first batch leaves the listing indexes out; the next live batch puts them back in its transaction', async () => {
  const file = path.join(dir, 'live.sqlite');
  const bulkSize = events.length - 10;
  expect(bulkSize).toBeGreaterThanOrEqual(BULK_MIN_EVENTS);
  const store = SqliteProjectionStore.open(file, new InProcessWakeBus());
  try {
    await store.applyBatch(events.slice(0, bulkSize).map(projectStored));
    const building = fileState(file);
    expect(building.indexes).toEqual([]);
    expect(building.marks).toHaveLength(1);

    await store.applyBatch(events.slice(bulkSize, bulkSize + 3).map(projectStored)); // live: a few events
    const built = fileState(file);
    expect(built.indexes).toHaveLength(LISTING_INDEXES.length);
    expect(built.marks).toEqual([]);
    expect(await snapshotViews(store)).toEqual(await cleanRebuild(bulkSize + 3));
  } finally {
    await store.close();
  }
});

test('stopped mid-build (the mark stays in the file): reopened, a live batch finishes it; a read would too', async () => {
  const bulkSize = events.length - 10;
  for (const firstLook of ['live batch', 'read'] as const) {
    const file = path.join(dir, `stopped-${firstLook.replace(' ', '-')}.sqlite`);
    const builder = SqliteProjectionStore.open(file, new InProcessWakeBus());
    await builder.applyBatch(events.slice(0, bulkSize).map(projectStored));
    await builder.close();
    expect(fileState(file).marks).toHaveLength(1);

    const reopened = SqliteProjectionStore.open(file, new InProcessWakeBus());
    try {
      if (firstLook === 'live batch') await reopened.applyBatch(events.slice(bulkSize).map(projectStored));
      else await reopened.listAgents();
      const finished = fileState(file);
      expect(finished.marks).toEqual([]);
      expect(finished.indexes).toHaveLength(LISTING_INDEXES.length);
      expect(await snapshotViews(reopened)).toEqual(await cleanRebuild(firstLook === 'live batch' ? events.length : bulkSize));
    } finally {
      await reopened.close();
    }
  }
});
