/**
 * `mailbox projections rebuild` meeting a refusal that only an operator mends (an UNAVAILABLE made by operatorNeeded:
 * here EventStoreDB refusing the mailbox's credentials, changed under the rebuild) took it for an outage: it waited and
 * tried again for 60 s, one 'could not copy ... trying again' line after another, then gave up with "make the views
 * reachable", hiding the refusal's own remedy. It now stops at once with that refusal as its one line, exit code 2,
 * its generation dropped and the active views unchanged.
 *
 * The log (EventStoreDB test double) holds a generated log of @a, @b, @c and seven more; the views are a SQLite views
 * file (MAILBOX_VIEWS=sqlite). The credentials are refused once the rebuild has created its new generation.
 */
import path from 'node:path';
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { SqliteGenerations } from '../../src/adapters/projections/sqliteViews/sqliteGenerations';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { runRebuildCommand } from '../../src/cli/commands/projections';
import { appendLog, generateLog } from '../contract/projectionStoreLog';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { scratchBase, tempDir } from '../support/fixtures';
import { runProjections, theOneLine, type ProjectionsRun } from '../support/projectionsCli';

let double: EsdbDouble;

/** The log's events as a reader sees them (a rebuild writes none). */
async function eventsInLog(): Promise<number> {
  const log = EsdbEventStore.connect(double.url);
  try {
    return (await log.readAll(null, 100_000)).length;
  } finally {
    await log.close();
  }
}

beforeAll(async () => {
  double = await EsdbDouble.start();
  const log = EsdbEventStore.connect(double.url);
  try {
    await log.logIdentity(); // the rebuild opens the log read-only: it finds this identity, it makes none
    await appendLog(log, generateLog(300, 13));
  } finally {
    await log.close();
  }
});
afterAll(async () => {
  jest.restoreAllMocks();
  await double?.close();
});

test('credentials refused mid-rebuild: the refusal and its remedy at once, one line, exit code 2; no retry, nothing switched', async () => {
  const dataDir = tempDir('mailbox-rebuild-operator-', scratchBase());
  const eventsBefore = await eventsInLog();
  expect(eventsBefore).toBe(300);
  const create = SqliteGenerations.prototype.create;
  let denied = 0;
  jest.spyOn(SqliteGenerations.prototype, 'create').mockImplementation(async function (this: SqliteGenerations, ...args) {
    const generation = await create.apply(this, args);
    double.faults.denyAccess(); // the new generation exists: its first read of the log is refused
    denied++;
    return generation;
  });

  let text: ProjectionsRun;
  try {
    text = await runProjections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '50', json: true }), {
      MAILBOX_EVENTSTORE_URL: double.url,
      MAILBOX_VIEWS: 'sqlite',
      MAILBOX_DATA_DIR: dataDir,
    });
  } finally {
    double.faults.allowAccess();
  }

  expect(denied).toBe(1);
  const envelope = theOneLine(text, 2);
  expect(envelope).toEqual({
    error: 'Operator action needed',
    code: 'UNAVAILABLE',
    message: expect.stringMatching(/^The event store \(EventStoreDB\) refused the mailbox access \(access-denied: .*\)/),
    operatorAction: expect.stringContaining('MAILBOX_EVENTSTORE_URL'),
  }); // before: after 60 s, 'The rebuild could not write to ...', operatorAction 'make ... reachable', stoppedAfter
  expect(text.out).not.toContain('could not copy'); // no wait, no try again
  expect(text.out).not.toContain('switched the active views');

  expect(await eventsInLog()).toBe(eventsBefore);
  // The active views are as they were (none built yet), and the new generation was dropped, not left behind.
  const views = SqliteProjectionStore.open(path.join(dataDir, 'views.sqlite'), new InProcessWakeBus());
  try {
    const active = await views.generations().active();
    expect(active.checkpoint).toBeNull();
    expect(active.logIdentity).toBeNull();
    expect(await views.generations().leftovers!()).toEqual([]);
  } finally {
    await views.close();
  }
}, 120_000); // before the fix the rebuild gave up only after 60 s of tries
