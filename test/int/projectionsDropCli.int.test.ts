/**
 * `mailbox projections drop <generation>` on the SQLite views file: a generation kept by `rebuild --keep-previous` (or a
 * take-over at start) stayed in the file for good, listed nowhere; no command deleted it, and freeing its space meant
 * stopping the mailbox and moving the views file away. Now `status` lists it (keptGenerations) and `drop` deletes it
 * (exit 0), or a leftover; it refuses the active generation and one a rebuild is building (exit 2) and a name it holds
 * not (exit 1), each in one line naming the generations it can drop, nothing changed. A log of @a, @b, @c and seven more.
 */
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { SqliteGenerations } from '../../src/adapters/projections/sqliteViews/sqliteGenerations';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { runDropCommand, runRebuildCommand, runStatusCommand } from '../../src/cli/commands/projections';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { snapshotViews } from '../contract/projectionStore.contract';
import { appendLog, generateLog } from '../contract/projectionStoreLog';
import { scratchBase, tempDir } from '../support/fixtures';
import { runProjections, theOneLine } from '../support/projectionsCli';

const env = (dir: string) => ({ MAILBOX_DATA_DIR: dir });
const rebuild = (dir: string, flags: Record<string, unknown> = {}) =>
  runProjections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0', json: true, ...flags }), env(dir));
const status = async (dir: string): Promise<Record<string, unknown>> =>
  JSON.parse((await runProjections((io) => runStatusCommand(io), env(dir))).out);
const drop = (dir: string, generation: string) =>
  runProjections((io) => runDropCommand(io, generation, { json: true }), env(dir));

/** The generations whose tables are in the views file, by name. */
function generationsIn(file: string): string[] {
  const db = openSqliteDatabase(file);
  try {
    const rows = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'g[0-9]*_state'`).all();
    return (rows as Array<{ name: string }>).map(({ name }) => name.slice(0, -'_state'.length)).sort();
  } finally {
    db.close();
  }
}

/** What the views file serves: every agent's listings and counts. */
async function served(file: string) {
  const store = SqliteProjectionStore.open(file, new InProcessWakeBus());
  try {
    return await snapshotViews(store);
  } finally {
    await store.close();
  }
}

async function eventsInLog(dir: string): Promise<number> {
  const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  try {
    return (await log.readAll(null, 100_000)).length;
  } finally {
    await log.close();
  }
}

/** A data dir whose log holds a generated log of `events` sends and registrations (@a, @b, @c among them); no views yet. */
async function dataDirWithLog(events: number): Promise<{ dir: string; file: string }> {
  const dir = tempDir('mailbox-projections-drop-', scratchBase());
  const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  try {
    await appendLog(log, generateLog(events, 23));
  } finally {
    await log.close();
  }
  return { dir, file: path.join(dir, 'views.sqlite') };
}

test('a generation kept by rebuild --keep-previous: status lists it, drop deletes it; the active one, one being built and a wrong name are refused, nothing changed', async () => {
  const { dir, file } = await dataDirWithLog(300);
  const logged = await eventsInLog(dir);
  expect((await rebuild(dir)).code).toBe(0); // g2 served
  const kept = await rebuild(dir, { keepPrevious: true });
  expect(kept.out.trim().split('\n').at(-1)).toMatch(/; previous generation g2 kept$/);
  // A rebuild killed outright left g4 (its mark lapsed); another rebuild builds g5 now.
  const killed = SqliteProjectionStore.open(file, new InProcessWakeBus(), { buildingTtlMs: 1 });
  await killed.generations().create('a rebuild killed outright');
  await killed.close();
  const building = SqliteProjectionStore.open(file, new InProcessWakeBus());
  await building.generations().create('a rebuild running now');
  const views = await served(file);

  try {
    // Before: no word of g2 anywhere in status.
    expect(await status(dir)).toMatchObject({
      activeGeneration: 'g3',
      upToDate: true,
      leftoverGenerations: ['g4'],
      keptGenerations: ['g2'],
    });
    const refusals = {
      active: theOneLine(await drop(dir, 'g3'), 2),
      building: theOneLine(await drop(dir, 'g5'), 2),
      unknown: theOneLine(await drop(dir, 'g9'), 1),
    };
    expect(refusals).toEqual({
      active: {
        error: 'Generation not dropped',
        code: 'VALIDATION_FAILED',
        message:
          'Generation g3 is the active one, the views served: it is never dropped (`mailbox projections rebuild` ' +
          'replaces it with a new one); it can drop g2, g4. Nothing was changed.',
        generation: 'g3',
        activeGeneration: 'g3',
        droppable: ['g2', 'g4'],
      },
      building: {
        error: 'Generation not dropped',
        code: 'VALIDATION_FAILED',
        message:
          'Generation g5 is being built by a rebuild running now: stop that rebuild (Ctrl-C: it drops its generation ' +
          'itself) rather than drop it under it; it can drop g2, g4. Nothing was changed.',
        generation: 'g5',
        activeGeneration: 'g3',
        droppable: ['g2', 'g4'],
      },
      unknown: {
        error: 'No such generation',
        code: 'NOT_FOUND',
        message:
          `The SQLite views file ${file} holds no generation 'g9' to drop (a rebuild that switched away from one ` +
          'deletes it itself after its grace); besides the active one (g3), it can drop g2, g4. Nothing was changed.',
        generation: 'g9',
        activeGeneration: 'g3',
        droppable: ['g2', 'g4'],
      },
    });
    expect(generationsIn(file)).toEqual(['g2', 'g3', 'g4', 'g5']);

    const dropped = await drop(dir, 'g2');
    expect(dropped).toEqual({
      code: 0,
      out: `dropped generation g2 from the SQLite views file ${file}; the active views (g3) are unchanged\n`,
      err: '',
    });
    expect(generationsIn(file)).toEqual(['g3', 'g4', 'g5']);
    expect((await drop(dir, 'g4')).code).toBe(0); // a leftover too
  } finally {
    await building.close();
  }
  expect(generationsIn(file)).toEqual(['g3', 'g5']);
  const after = await status(dir);
  expect(after).toMatchObject({ activeGeneration: 'g3', upToDate: true });
  expect(after).not.toHaveProperty('keptGenerations');
  expect(await served(file)).toEqual(views); // @a, @b, @c's views as they were
  expect(Object.keys(views.views)).toEqual(expect.arrayContaining(['@a', '@b', '@c']));
  expect(await eventsInLog(dir)).toBe(logged); // nothing written to the log
});

test('the views file locked by another process when drop comes: one line, what holds it and what to do, exit code 2; nothing dropped', async () => {
  const { dir, file } = await dataDirWithLog(50);
  expect((await rebuild(dir, { keepPrevious: true })).code).toBe(0); // g2 served, g1 kept
  const views = await served(file);
  const dropOf = SqliteGenerations.prototype.drop;
  const spy = jest.spyOn(SqliteGenerations.prototype, 'drop').mockImplementation(async function (this: SqliteGenerations, name) {
    const other = openSqliteDatabase(file); // another process's write transaction, opened once the command has the file open
    other.exec('BEGIN IMMEDIATE');
    try {
      return await dropOf.call(this, name);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });
  const run = await runProjections((io) => runDropCommand(io, 'g1', { json: true }), {
    ...env(dir),
    MAILBOX_VIEWS_LOCK_WAIT_MS: '100',
  });
  spy.mockRestore();

  // Without its words: INTERNAL 'Projections command failed' with the rebuild's line.
  expect(theOneLine(run, 2)).toEqual({
    error: 'Operator action needed',
    code: 'UNAVAILABLE',
    message:
      `The views file ${file} is locked by another process (database is locked): it waited 100 ms ` +
      '(MAILBOX_VIEWS_LOCK_WAIT_MS) to drop generation g1 and gave up. A running mailbox writes the file in ' +
      'transactions of milliseconds: what holds it this long is likely a process with a write transaction left open ' +
      'on it (a sqlite3 shell or a script between BEGIN and COMMIT) or one holding it in exclusive mode. Nothing was ' +
      'dropped: the views file is as it was.',
    operatorAction:
      `end the transaction of the process that holds ${file} locked, or stop that process (\`lsof ${file}\` lists ` +
      'every process that has it open, the running mailbox among them); then run `mailbox projections drop g1` again',
    viewsFile: file,
    generation: 'g1',
  });
  expect(generationsIn(file)).toEqual(['g1', 'g2']);
  expect(await served(file)).toEqual(views);
  expect((await drop(dir, 'g1')).code).toBe(0); // the remedy
  expect(generationsIn(file)).toEqual(['g2']);
});
