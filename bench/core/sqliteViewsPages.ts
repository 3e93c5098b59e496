/**
 * Where the SQLite views' write cost goes (issue 15): pages written per event, by B-tree, for live transactions of
 * a few sizes. Not a benchmark (the runner skips it): a probe, run after `npm run build`:
 *   node dist/bench/core/sqliteViewsPages.js
 * A synthetic log (1,000 agents, as core/sqliteViews) is built into views in bulk, all but its last LIVE events;
 * then, for each transaction size, a copy of those views applies the last events as a live store does, while a
 * reader holds its snapshot so that no checkpoint can consume the WAL. The WAL then holds every page each COMMIT
 * wrote (a page dirtied by several events of one transaction is written once): each frame's page is named by
 * dbstat. Every written page costs about the same (two write() calls into the WAL, then a read and a write at the
 * checkpoint, and a read first when the cache missed it), whatever the row, so these counts are the write cost.
 * Counts are deterministic: they do not move with the machine's load. bench/README.md reads them.
 * PAGES_EVENTS (default 120,000), PAGES_LIVE (default 20,000), PAGES_BATCHES (default 32,1000,10000).
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { projectStored } from '../../src/projections/projector';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import { writeSyntheticLog } from '../lib/syntheticLog';
import { withTmpDir } from '../lib/tmp';

const EVENTS = Number(process.env.PAGES_EVENTS ?? 120_000);
const LIVE = Number(process.env.PAGES_LIVE ?? 20_000);
const BATCHES = (process.env.PAGES_BATCHES ?? '32,1000,10000').split(',').map(Number);
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** The page number of every frame in a WAL file, in order. */
function walPages(file: string): number[] {
  const wal = fs.readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const pages: number[] = [];
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize)
    pages.push(wal.readUInt32BE(at));
  return pages;
}

/** The whole log, projected, and how many events of each type its last `last` are. */
async function readLog(log: SqliteEventStore, last: number) {
  const events: ProjectedEvent[] = [];
  const types: string[] = [];
  for (let from: bigint | null = null; ;) {
    const page = await log.readAll(from, 1000);
    if (page.length === 0) break;
    for (const event of page) types.push(event.type);
    events.push(...page.map(projectStored));
    from = page[page.length - 1].position;
  }
  const kinds: Record<string, number> = {};
  for (const type of types.slice(-last)) kinds[type] = (kinds[type] ?? 0) + 1;
  return { events, kinds };
}

/** Applies `events` onto a copy of `base` in transactions of `batch` events; the pages their COMMITs wrote, by B-tree. */
async function pagesWritten(base: string, events: ProjectedEvent[], batch: number) {
  const file = `${base}-${batch}.sqlite`;
  fs.copyFileSync(base, file);
  const store = SqliteProjectionStore.open(file, new InProcessWakeBus(), {
    eventsPerTransaction: batch,
    transactionBudgetMs: 1e9,
    cacheKiB: 256 * 1024, // large enough that no transaction spills pages into the WAL before its COMMIT
  });
  const reader = openSqliteDatabase(file, store.driver, { readonly: true });
  reader.prepare('BEGIN').run();
  reader.prepare('SELECT count(*) FROM views_meta').get(); // holds this snapshot: no checkpoint passes it
  for (let start = 0; start < events.length; start += batch) await store.applyBatch(events.slice(start, start + batch));
  const frames = walPages(file);
  reader.prepare('COMMIT').run();
  const owners = new Map(
    (reader.prepare('SELECT pageno, name FROM dbstat').raw().all() as Array<[number, string]>).map(([page, name]) => [
      page,
      name,
    ]),
  );
  reader.close();
  await store.close();
  const byTree = new Map<string, number>();
  for (const page of frames) {
    const tree = (owners.get(page) ?? '(freed)').replace(/^g[0-9]+_/, '');
    byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
  }
  const perEvent = (count: number): number => Math.round((count / events.length) * 100) / 100;
  return {
    eventsPerTransaction: batch,
    pagesPerEvent: perEvent(frames.length),
    distinctPagesPerEvent: perEvent(new Set(frames).size),
    byTree: Object.fromEntries([...byTree].sort((a, b) => b[1] - a[1]).map(([tree, count]) => [tree, perEvent(count)])),
  };
}

async function main(): Promise<void> {
  await withTmpDir(async (dir) => {
    const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    await writeSyntheticLog(log, { agents: 1000, events: EVENTS, readShare: 0.25, archiveShare: 0.1, broadcastEvery: 20_000 });
    const { events: all, kinds } = await readLog(log, LIVE);
    const cut = all.length - LIVE;
    const base = path.join(dir, 'views.sqlite');
    const building = SqliteProjectionStore.open(base, new InProcessWakeBus());
    for (let start = 0; start < cut; start += 1000) await building.applyBatch(all.slice(start, Math.min(cut, start + 1000)));
    await building.unreadCount('nobody'); // the listing indexes, as a first read creates them
    await building.close();
    const live = all.slice(cut);
    process.stdout.write(`${JSON.stringify({ events: all.length, live: live.length, kinds })}\n`);
    for (const batch of BATCHES) process.stdout.write(`${JSON.stringify(await pagesWritten(base, live, batch))}\n`);
    await log.close();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
