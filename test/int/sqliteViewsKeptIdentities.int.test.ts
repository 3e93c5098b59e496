/**
 * The SQLite views writer keeps each identity's counter row from one batch to the next (sqliteViewWriter.ts), trusted
 * only while nobody else changed the file. Two connections on one views file take turns applying the log, each
 * batch moving the same identities' counters: every count, listing and heartbeat equals a clean rebuild (a writer that
 * trusted its kept rows after the other's commit would write back stale counters). Then a reset through one of them,
 * and the log applied again through it: the same views.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { projectStored } from '../../src/projections/projector';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import type { StoredEvent } from '../../src/events/types';
import { agentIdentity } from '../../bench/lib/mailbox';
import { writeSyntheticLog } from '../../bench/lib/syntheticLog';
import { snapshotViews } from '../contract/projectionStore.contract';
import { tempDir } from '../support/fixtures';

let dir: string;
let pages: StoredEvent[][];

beforeAll(async () => {
  dir = tempDir('kept-identities-');
  const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  // Three agents: every batch moves the counters of all three (sends, reads, archives, a broadcast).
  await writeSyntheticLog(log, { agents: 3, events: 1_200, readShare: 0.3, archiveShare: 0.3, broadcastEvery: 200 });
  pages = [];
  for (let after: bigint | null = null; ;) {
    const page = await log.readAll(after, 40);
    if (page.length === 0) break;
    pages.push(page);
    after = page[page.length - 1].position;
  }
  await log.close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function applyTakingTurns(stores: ProjectionStore[]): Promise<void> {
  for (const [i, page] of pages.entries()) await stores[i % stores.length].applyBatch(page.map(projectStored));
}

test('two connections taking turns on one views file give the views of a clean rebuild, after a reset too', async () => {
  const clean = new MemoryProjectionStore(new InProcessWakeBus());
  for (const page of pages) await clean.applyBatch(page.map(projectStored));
  const expected = await snapshotViews(clean);

  const file = path.join(dir, 'views.sqlite');
  const first = SqliteProjectionStore.open(file, new InProcessWakeBus());
  const second = SqliteProjectionStore.open(file, new InProcessWakeBus());
  try {
    await applyTakingTurns([first, second]);
    expect(pages.length).toBeGreaterThan(20);
    expect(await snapshotViews(first)).toEqual(expected);
    expect(await snapshotViews(second)).toEqual(expected);

    // A reset deletes the rows through the same connection (the file's stamp does not change): the kept rows go too.
    await second.reset();
    await applyTakingTurns([second]);
    expect(await snapshotViews(second)).toEqual(expected);
    const counts = await Promise.all([0, 1, 2].map((i) => clean.unreadCount(agentIdentity(i))));
    expect(counts.every((count) => count.unread > 0)).toBe(true);
    expect(await Promise.all([0, 1, 2].map((i) => second.unreadCount(agentIdentity(i))))).toEqual(counts);
  } finally {
    await first.close();
    await second.close();
  }
});
