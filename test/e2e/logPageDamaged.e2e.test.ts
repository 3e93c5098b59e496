/**
 * A SQLite log with a damaged page (a disk fault) that the file's open does not read: `mailbox audit replay` (and
 * verify, message, agent, unwoken, `projections rebuild`) printed {"error":"Audit failed","code":"INTERNAL","message":
 * "database disk image is malformed"}, naming neither the file nor a remedy, and `mailbox serve` the driver's stack
 * trace when the page was the table's root (its head). They now say it as a log that cannot be read at open is said:
 * `Event log unreadable` naming the file, MAILBOX_DATA_DIR and the remedies (serve: its one `mailbox:` line), exit
 * code 2, and the file is left as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';

beforeAll(() => ensureBuilt());

/** A closed data dir whose log's events table spans several pages: three agents and 60 messages among them. */
async function dataDirWithTraffic(): Promise<string> {
  const dataDir = tempDir('mailbox-log-page-damaged-');
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  for (let i = 0; i < 30; i += 1) {
    await a.send({ to: ['@b', '@c'], subject: `s${i}`, body: 'x'.repeat(300) });
    await b.send({ to: 'AGENT:*', subject: `b${i}`, body: 'y'.repeat(300) });
  }
  await mailbox.close();
  return dataDir;
}

/**
 * The page the events table's `which` page is: its root, or its first leaf (the left child of the root's first cell,
 * where the first events are: the head's query reads the last leaf, never this one).
 */
function pageOfEvents(file: string, which: 'root' | 'first leaf'): number {
  const db = openSqliteDatabase(file);
  const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'events'").get() as { rootpage: number };
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.close();
  if (which === 'root') return rootpage;
  const root = Buffer.alloc(pageSize);
  const fd = fs.openSync(file, 'r');
  fs.readSync(fd, root, 0, pageSize, (rootpage - 1) * pageSize);
  fs.closeSync(fd);
  expect(root[0]).toBe(0x05); // an interior table page: the table spans several pages
  return root.readUInt32BE(root.readUInt16BE(12)); // the first cell's left child
}

function damagePage(file: string, page: number): Buffer {
  const db = openSqliteDatabase(file);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma('wal_checkpoint(TRUNCATE)'); // every page in the file itself
  db.close();
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (page - 1) * pageSize);
  fs.closeSync(fd);
  return fs.readFileSync(file);
}

const unreadable = (dataDir: string) => ({
  error: 'Event log unreadable',
  code: 'UNAVAILABLE',
  message:
    `MAILBOX_DATA_DIR='${dataDir}': the event log ${path.join(dataDir, 'events.sqlite')} cannot be read as a SQLite ` +
    'database (SQLite: database disk image is malformed): it is damaged, or not a log at all. Restore it from a ' +
    'backup (mailbox backup writes one), or point MAILBOX_DATA_DIR at the data directory the server uses. Nothing was ' +
    'read or changed.',
  field: 'MAILBOX_DATA_DIR',
  file: path.join(dataDir, 'events.sqlite'),
});

test.each<['root' | 'first leaf', string[]]>([
  ['first leaf', ['audit', 'replay']],
  ['first leaf', ['audit', 'verify']],
  ['first leaf', ['audit', 'agent', '@a']],
  ['first leaf', ['projections', 'rebuild']],
  ['root', ['audit', 'replay']],
  ['root', ['projections', 'status']],
])(
  'a damaged %s page of the log: mailbox %j says Event log unreadable, exit code 2, the file left as it was',
  async (which, args) => {
    const dataDir = await dataDirWithTraffic();
    const log = path.join(dataDir, 'events.sqlite');
    const damaged = damagePage(log, pageOfEvents(log, which));

    // One line, as serve says it; the envelope with --json.
    const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir });
    expect(run.stderr.trimEnd().split('\n')).toEqual([`mailbox: ${unreadable(dataDir).message}`]);
    expect(run.code).toBe(2);
    const json = await runCli([...args, '--json'], { MAILBOX_DATA_DIR: dataDir });
    expect(json.stderr.trimEnd().split('\n')).toEqual([JSON.stringify(unreadable(dataDir))]);
    expect(json.code).toBe(2);
    expect(fs.readFileSync(log).equals(damaged)).toBe(true);
  },
  60_000,
);

test('mailbox serve on a log whose root page is damaged: one line naming the file and the remedies, exit code 2', async () => {
  const dataDir = await dataDirWithTraffic();
  const log = path.join(dataDir, 'events.sqlite');
  const damaged = damagePage(log, pageOfEvents(log, 'root'));

  const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    `mailbox: MAILBOX_DATA_DIR='${dataDir}': the event log ${log} cannot be read as a SQLite database (SQLite: database ` +
      'disk image is malformed): it is damaged, or not a log at all. Restore it from a backup, or move it aside (a new, ' +
      'empty log is created in its place), or set MAILBOX_DATA_DIR to another place.',
  ]);
  expect(run.stdout).not.toContain('mailbox listening on');
  expect(run.code).toBe(2);
  expect(fs.readFileSync(log).equals(damaged)).toBe(true);
}, 60_000);
