/**
 * Generations that rebuilds killed outright (SIGKILL, a crash) left in the SQLite views file: partial copies of the
 * views that nothing deleted, one more per killed rebuild. A generation being built carries a mark its rebuild renews;
 * once it lapses the generation is a leftover: `projections status` lists it and the next rebuild drops it, saying so.
 * A generation a live rebuild is building is never one. Three agents, a message to two of them, a read.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { runRebuild, runStatus } from '../../src/cli/commands/projections';
import { projectStored } from '../../src/projections/projector';
import { threeAgentsDataDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

/** Starts building a generation from the log's first events, as a rebuild does; returns its name. */
async function startBuilding(dataDir: string, store: SqliteProjectionStore): Promise<string> {
  const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'), undefined, { readOnly: true });
  try {
    const generation = await store.generations().create(await log.logIdentity());
    await generation.applyBatch((await log.readAll(null, 3)).map(projectStored));
    return generation.name;
  } finally {
    await log.close();
  }
}

const tablesOf = (file: string, generation: string): string[] => {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ?`).all(`${generation}_*`);
    return (rows as Array<{ name: string }>).map((row) => row.name);
  } finally {
    db.close();
  }
};

const io = (dataDir: string) => {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk) => (out += chunk));
  return { io: { stdout, stderr: new PassThrough(), env: { MAILBOX_DATA_DIR: dataDir } }, out: () => out };
};

test('a generation whose rebuild died is a leftover once its mark lapses: status lists it, the next rebuild drops it and says so', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-leftovers-');
  const viewsFile = path.join(dataDir, 'views.sqlite');
  // A rebuild that dies: its generation holds part of the views, its mark stops being renewed (closed, as killed).
  const dying = SqliteProjectionStore.open(viewsFile, new InProcessWakeBus(), { buildingTtlMs: 1500 });
  const partial = await startBuilding(dataDir, dying);
  await dying.close();
  expect(tablesOf(viewsFile, partial)).toContain(`${partial}_entries`);

  const reader = SqliteProjectionStore.open(viewsFile, new InProcessWakeBus());
  try {
    await waitFor(async () => (await reader.generations().leftovers!()).includes(partial), {
      timeoutMs: 10_000,
      what: 'the dead rebuild’s mark to lapse',
    });
  } finally {
    await reader.close();
  }

  const status = io(dataDir);
  expect(await runStatus(status.io)).toBe(0);
  expect(JSON.parse(status.out())).toMatchObject({ activeGeneration: 'g1', leftoverGenerations: [partial] });

  const rebuild = io(dataDir);
  expect(await runRebuild({ graceMs: '0', settleMs: '0' }, rebuild.io)).toBe(0);
  expect(rebuild.out().trim().split('\n').at(-1)).toContain(
    `; dropped ${partial}: a generation left by a rebuild killed before it finished`,
  );
  expect(tablesOf(viewsFile, partial)).toEqual([]);
  const after = io(dataDir);
  expect(await runStatus(after.io)).toBe(0);
  expect(JSON.parse(after.out())).toMatchObject({ upToDate: true });
  expect(JSON.parse(after.out())).not.toHaveProperty('leftoverGenerations');
});

test('a generation a live rebuild is building is no leftover, however long it takes', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-leftovers-');
  const viewsFile = path.join(dataDir, 'views.sqlite');
  const building = SqliteProjectionStore.open(viewsFile, new InProcessWakeBus(), { buildingTtlMs: 300 });
  const other = SqliteProjectionStore.open(viewsFile, new InProcessWakeBus());
  try {
    const name = await startBuilding(dataDir, building);
    const mark = () => {
      const db = new Database(viewsFile, { readonly: true });
      try {
        return (db.prepare('SELECT value FROM views_meta WHERE key = ?').get(`building:${name}`) as { value: string }).value;
      } finally {
        db.close();
      }
    };
    // The positive signal: the mark was renewed twice, so more than its 300 ms have passed since the build began.
    const first = mark();
    let renewals = 0;
    let last = first;
    await waitFor(
      () => {
        const now = mark();
        if (now !== last) renewals++;
        last = now;
        return renewals >= 2 && Date.now() > Number(first);
      },
      { everyMs: 10, what: 'two renewals of the building mark' },
    );
    expect(await other.generations().leftovers!()).toEqual([]);
    await building.generations().drop(name); // the rebuild ends (here: gives up): its mark goes with its tables
    expect(tablesOf(viewsFile, name)).toEqual([]);
    expect(() => mark()).toThrow();
  } finally {
    await other.close();
    await building.close();
  }
});
