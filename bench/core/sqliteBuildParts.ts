/**
 * Where a first start's bulk build of the SQLite views spends its CPU (issue 15), part by part, and the floors a
 * faster build path would meet. Not a benchmark (the runner skips it): a probe, run after `npm run build`:
 *   node dist/bench/core/sqliteBuildParts.js <dir>
 * <dir> holds a synthetic log (events.sqlite: 1,000 agents, as core/sqliteViews), written there first if absent
 * (PARTS_EVENTS events, default 200,000). Every figure is CPU per event of this process (one thread each, so the
 * machine's load moves them far less than wall time), each part on its own:
 * - read: the log read page by page and projected (projectStored), as the runner's catch-up does;
 * - rules: the read model alone (ScratchViews, in memory);
 * - store: SqliteProjectionStore's bulk build, inline (the views thread's work: rules, writer, SQLite), 1,000-event
 *   pages, listing indexes made at the end;
 * - writer: the same rules and writer (SqliteViewWriter) on a bare connection, to price what the file's setup
 *   costs: WAL (as the store) against no journal, transactions of 1,000 and 10,000 events, a 16 MiB cache (the
 *   store's) against one that holds the whole file (no I/O left: the writer's own floor);
 * - rows: the built generation's rows copied, in key order, into empty tables of the same schema: by SQLite alone
 *   (INSERT ... SELECT: the B-trees' floor) and from JavaScript one statement per row (better-sqlite3's binding: the
 *   floor of any path that writes its rows from JavaScript), listing indexes included.
 * bench/README.md ("Where the SQLite views' time goes") reads them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { SqliteViewWriter } from '../../src/adapters/projections/sqliteViews/sqliteViewWriter';
import {
  META_SCHEMA,
  dropListingIndexesSql,
  generationSchema,
} from '../../src/adapters/projections/sqliteViews/sqliteViewsSchema';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { projectStored } from '../../src/projections/projector';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { applyEvents } from '../../src/projections/readModel/applyEvents';
import { ScratchViews } from '../../src/projections/readModel/scratchViews';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import { writeSyntheticLog } from '../lib/syntheticLog';

const EVENTS = Number(process.env.PARTS_EVENTS ?? 200_000);
/** The tables a synthetic log fills (no tasks, no lists, no reply obligations), copied by the rows part. */
const TABLES = ['messages', 'entries', 'ledgers', 'ledger_rows', 'awaiting', 'identities', 'agents'];
const WAL = ['journal_mode = WAL', 'synchronous = NORMAL'];
const NO_JOURNAL = ['journal_mode = OFF', 'synchronous = OFF', 'locking_mode = EXCLUSIVE'];

const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

const removeFile = (file: string): void => {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
};

/** The synthetic log in `dir`, written first if absent. */
async function ensureLog(dir: string): Promise<string> {
  const file = path.join(dir, 'events.sqlite');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const store = SqliteEventStore.open(file);
    await writeSyntheticLog(store, { agents: 1000, events: EVENTS, readShare: 0.25, archiveShare: 0.1, broadcastEvery: 20_000 });
    await store.close();
  }
  return file;
}

async function readLog(file: string): Promise<ProjectedEvent[]> {
  const log = SqliteEventStore.open(file);
  const events: ProjectedEvent[] = [];
  for (let after: bigint | null = null; ;) {
    const page = await log.readAll(after, 1000);
    if (page.length === 0) break;
    for (const event of page) events.push(projectStored(event));
    after = page[page.length - 1].position;
  }
  await log.close();
  return events;
}

/** The store's rules and writer on a bare connection, one transaction per `per` events, indexes made at the end. */
function writerBuild(file: string, events: readonly ProjectedEvent[], per: number, cacheKiB: number, pragmas: string[]) {
  const db = openSqliteDatabase(file);
  for (const pragma of pragmas) db.pragma(pragma);
  db.pragma(`cache_size = -${cacheKiB}`);
  db.exec(META_SCHEMA);
  db.exec(generationSchema('g1'));
  db.exec(dropListingIndexesSql('g1'));
  const writer = new SqliteViewWriter(db, 'g1');
  let checkpoint: bigint | null = null;
  const chunk = db.transaction((batch: readonly ProjectedEvent[]) => {
    writer.beginBatch();
    checkpoint = applyEvents(writer, batch, checkpoint);
    writer.flush();
    writer.setCheckpoint(checkpoint);
  });
  for (let at = 0; at < events.length; at += per) chunk(events.slice(at, at + per));
  db.exec(generationSchema('g1'));
  db.close();
}

/** The rows of `built` (generation g1) copied into a new file in key order: by SQLite, or from JavaScript row by row. */
function copyRows(built: string, file: string, fromJs: boolean): void {
  const db = openSqliteDatabase(file);
  for (const pragma of NO_JOURNAL) db.pragma(pragma);
  db.exec(META_SCHEMA);
  db.exec(generationSchema('g2'));
  db.exec(dropListingIndexesSql('g2'));
  db.exec(`ATTACH '${built.replace(/'/g, "''")}' AS built`);
  let readMs = 0;
  for (const table of TABLES) {
    if (!fromJs) {
      db.exec(`INSERT INTO g2_${table} SELECT * FROM built.g1_${table}`);
      continue;
    }
    const started = cpuMs();
    const rows = db.prepare(`SELECT * FROM built.g1_${table}`).raw().all() as unknown[][];
    readMs += cpuMs() - started; // reading them back is not part of the floor
    if (rows.length === 0) continue;
    const insert = db.prepare(`INSERT INTO g2_${table} VALUES (${rows[0].map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (const row of rows) insert.run(row);
    })();
  }
  db.exec(generationSchema('g2'));
  db.close();
  copyReadMs = readMs;
}
let copyReadMs = 0;

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (dir === undefined) throw new Error('usage: node dist/bench/core/sqliteBuildParts.js <dir>');
  const figures: Record<string, number> = {};
  let events = 0;
  const part = async (name: string, run: () => unknown): Promise<void> => {
    const started = cpuMs();
    await run();
    figures[name] = Math.round(((cpuMs() - started - copyReadMs) * 10_000) / events) / 10; // µs per event
    copyReadMs = 0;
    process.stderr.write(`  ${name}: ${figures[name]} µs/event\n`);
  };
  const logFile = await ensureLog(dir);
  const started = cpuMs();
  const log = await readLog(logFile);
  events = log.length;
  figures.read = Math.round(((cpuMs() - started) * 10_000) / events) / 10;
  await part('rules', () => new ScratchViews().applyBatch(log));
  const file = path.join(dir, `parts-${process.pid}.sqlite`);
  await part('store', async () => {
    const store = SqliteProjectionStore.open(file, new InProcessWakeBus());
    for (let at = 0; at < log.length; at += 1000) await store.applyBatch(log.slice(at, at + 1000));
    await store.unreadCount('@nobody'); // the listing indexes made
    await store.close();
  });
  removeFile(file);
  const variants: Array<[string, number, number, string[]]> = [
    ['writer WAL 1000', 1000, 16 * 1024, WAL],
    ['writer no journal 1000', 1000, 16 * 1024, NO_JOURNAL],
    ['writer no journal 10000', 10_000, 16 * 1024, NO_JOURNAL],
    ['writer no journal 10000 whole file cached', 10_000, 1024 * 1024, NO_JOURNAL],
  ];
  for (const [name, per, cacheKiB, pragmas] of variants) {
    removeFile(file);
    await part(name, () => writerBuild(file, log, per, cacheKiB, pragmas));
  }
  const copy = path.join(dir, `parts-${process.pid}-copy.sqlite`);
  for (const fromJs of [false, true]) {
    removeFile(copy);
    await part(fromJs ? 'rows from JavaScript' : 'rows by SQLite', () => copyRows(file, copy, fromJs));
  }
  removeFile(copy);
  removeFile(file);
  console.log(JSON.stringify({ events, usPerEvent: figures }));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
