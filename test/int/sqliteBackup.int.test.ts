/**
 * The SQLite log's backup (adapters/eventstore/sqliteBackup.ts) on a log large enough to take a while: it reports
 * its progress as it goes, and stopped midway it leaves nothing at its destination nor beside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BackupInterrupted, backupSqliteLog, type BackupProgress } from '../../src/adapters/eventstore/sqliteBackup';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { writeSyntheticLog } from '../../bench/lib/syntheticLog';
import { tempDir } from '../support/fixtures';

let root: string;
let source: string;
let head: bigint;

beforeAll(async () => {
  root = tempDir('mailbox-backup-int-');
  source = path.join(root, 'events.sqlite');
  const log = SqliteEventStore.open(source);
  await writeSyntheticLog(log, { agents: 30, events: 40_000, readShare: 0.25, archiveShare: 0.1, broadcastEvery: 10_000 });
  head = (await log.headPosition())!;
  await log.close();
}, 60_000);

test.each(['better-sqlite3', 'libsql'] as const)(
  'copies with either SQLite binding (%s): every event, the head, the log identity, checked',
  async (driver) => {
    const destination = path.join(root, `with-${driver}`, 'copy.sqlite');
    fs.mkdirSync(path.dirname(destination));
    const backup = await backupSqliteLog(source, destination, { driver });
    expect(backup).toMatchObject({ file: destination, events: Number(head), head, headAtStart: head });
    expect(backup.logIdentity).toMatch(/^[0-9a-f-]{36}$/);
    expect(fs.readdirSync(path.dirname(destination))).toEqual(['copy.sqlite']);
  },
);

test('reports its progress, then the copy: every event, the head, the log identity', async () => {
  const reports: BackupProgress[] = [];
  const destination = path.join(root, 'progress', 'copy.sqlite');
  fs.mkdirSync(path.dirname(destination));
  const backup = await backupSqliteLog(source, destination, { progressEveryMs: 5, onProgress: (p) => reports.push(p) });
  expect(backup).toMatchObject({ file: destination, source, events: Number(head), head, headAtStart: head });
  expect(backup.logIdentity).toMatch(/^[0-9a-f-]{36}$/);
  expect(backup.bytes).toBe(fs.statSync(destination).size);
  expect(reports.length).toBeGreaterThan(0);
  expect(reports.every((p) => p.estimated === reports[0].estimated && p.estimated >= fs.statSync(source).size)).toBe(true);
  const written = reports.map((p) => p.written);
  expect(written).toEqual([...written].sort((a, b) => a - b)); // never goes back
  expect(fs.readdirSync(path.dirname(destination))).toEqual(['copy.sqlite']);
});

test('stopped midway: rejects with BackupInterrupted, nothing at the destination nor beside it; a backup after works', async () => {
  const destination = path.join(root, 'stopped', 'copy.sqlite');
  fs.mkdirSync(path.dirname(destination));
  const stop = new AbortController();
  let partialSeen = 0;
  const outcome = await backupSqliteLog(source, destination, {
    progressEveryMs: 2,
    signal: stop.signal,
    onProgress: ({ written }) => {
      // The positive signal: the partial copy is being written beside the destination.
      if (written > 0 && partialSeen === 0) {
        partialSeen = fs.readdirSync(path.dirname(destination)).length;
        stop.abort();
      }
    },
  }).then(
    () => null,
    (error: unknown) => error,
  );
  expect(partialSeen).toBeGreaterThan(0); // the partial copy (and the journal SQLite writes beside it)
  expect(outcome).toBeInstanceOf(BackupInterrupted);
  expect((outcome as Error).message).toBe(
    `backup interrupted: nothing was written to ${destination} (the partial copy was removed)`,
  );
  expect(fs.readdirSync(path.dirname(destination))).toEqual([]);

  const again = await backupSqliteLog(source, destination);
  expect(again.events).toBe(Number(head));
  expect(fs.readdirSync(path.dirname(destination))).toEqual(['copy.sqlite']);
});

test('a file that takes the name while the copy is made is not replaced: refused, the copy removed', async () => {
  const destination = path.join(root, 'raced', 'copy.sqlite');
  fs.mkdirSync(path.dirname(destination));
  let raced = false;
  const outcome = await backupSqliteLog(source, destination, {
    progressEveryMs: 2,
    onProgress: ({ written }) => {
      // The positive signal: the copy is being made; another backup to the same name finishes first.
      if (written > 0 && !raced) {
        raced = true;
        fs.writeFileSync(destination, 'the other backup');
      }
    },
  }).then(
    () => null,
    (error: unknown) => error,
  );
  expect(raced).toBe(true);
  expect(outcome).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(`${destination} already exists`) });
  expect(fs.readFileSync(destination, 'utf8')).toBe('the other backup');
  expect(fs.readdirSync(path.dirname(destination))).toEqual(['copy.sqlite']);
});
