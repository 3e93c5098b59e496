/**
 * Background WAL checkpoints (the event log's and the SQLite views file's): pages committed to the WAL reach
 * the database file without the writer checkpointing (its own threshold is far off), the data stays intact,
 * and close() stops the worker thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { WRITER_LIMIT_WITH_SIDECAR } from '../../src/support/sqlite/sqliteCheckpointer';
import { generateLog, projectAll } from '../contract/projectionStoreLog';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { tempDir } from '../support/fixtures';

const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

it('copies committed pages into the database file in the background; close() ends the worker', async () => {
  const dir = tempDir('mailbox-checkpoint-');
  const file = path.join(dir, 'events.sqlite');
  const store = SqliteEventStore.open(file);
  try {
    const sizeBefore = sizeOf(file);
    const streams = Array.from({ length: 200 }, () => freshStream());
    // One commit each (the worker starts once a store has committed 100 times).
    for (const [i, stream] of streams.entries()) await store.append(stream, [contractEvent(`e${i}`)], 'no_stream');
    expect(sizeOf(`${file}-wal`)).toBeGreaterThan(0); // committed to the WAL
    // ~600 WAL frames, below the writer's own 1,000-page threshold: only the background checkpointer moves them.
    expect(await waitFor(() => sizeOf(file) > sizeBefore + 20 * 4096, 5000)).toBe(true);
    expect((await store.readStream(streams[123])).map((e) => (e.data as { identity: string }).identity)).toEqual(['@e123']);
  } finally {
    await store.close();
  }
  const reopened = SqliteEventStore.open(file);
  try {
    expect((await reopened.readAll(null, 1000)).length).toBe(200);
  } finally {
    await reopened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('the SQLite views file is checkpointed in the background too: its own limit is pushed out, pages still reach the file', async () => {
  const dir = tempDir('mailbox-views-checkpoint-');
  const file = path.join(dir, 'views.sqlite');
  const store = SqliteProjectionStore.open(file, new InProcessWakeBus());
  const events = projectAll(generateLog(300));
  try {
    const sizeBefore = sizeOf(file);
    // One transaction per event (the checkpointer starts once the store has committed 100 times).
    for (const event of events) await store.applyBatch([event]);
    const db = (store as unknown as { db: { prepare: (sql: string) => { get: () => { wal_autocheckpoint: number } } } }).db;
    const ownLimit = () => db.prepare('PRAGMA wal_autocheckpoint').get().wal_autocheckpoint;
    expect(await waitFor(() => ownLimit() === WRITER_LIMIT_WITH_SIDECAR, 5000)).toBe(true); // handed to the other thread
    expect(await waitFor(() => sizeOf(file) > sizeBefore + 20 * 4096, 5000)).toBe(true);
    expect(await store.checkpoint()).toBe(events[events.length - 1].position);
  } finally {
    await store.close();
  }
  const reopened = SqliteProjectionStore.open(file, new InProcessWakeBus());
  try {
    expect(await reopened.checkpoint()).toBe(events[events.length - 1].position);
  } finally {
    await reopened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
