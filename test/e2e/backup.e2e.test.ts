/**
 * `mailbox backup <file>` as an operator runs it, while the mailbox keeps accepting sends: the copy holds every send
 * acknowledged before the backup started, a mailbox restored from it serves them (three recipients' inboxes) and its
 * views match its log; and every refusal says what to do, exits non-zero and leaves nothing behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { spawn } from 'node:child_process';
import { writeSyntheticLog } from '../../bench/lib/syntheticLog';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ensureBuilt, MAILBOX_BIN, ROOT, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

const ADMIN_TOKEN = 'backup-test-admin-token-0123456789';
const AGENTS = ['@ana', '@bo', '@cy'];

const open = (dataDir: string): Promise<Mailbox> =>
  createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: pino({ level: 'silent' }) });

/** A mailbox on the embedded default in `<root>/data`, with the three agents registered and a client for each. */
async function openWithAgents(root: string) {
  const dataDir = path.join(root, 'data');
  const mailbox = await open(dataDir);
  const admin = mailbox.asActor(ADMIN_ACTOR);
  for (const identity of AGENTS) await admin.registerAgent({ identity });
  const clients = AGENTS.map((identity) => mailbox.asActor({ identity, role: 'agent' }));
  return { dataDir, mailbox, clients };
}

beforeAll(() => ensureBuilt());

test('a backup taken during a send load holds every send acknowledged before it started; restored, a mailbox serves them', async () => {
  const root = tempDir('mailbox-backup-');
  const { dataDir, mailbox, clients } = await openWithAgents(root);

  // Three senders, each to the next agent, until told to stop; every acknowledged send is noted with its recipient.
  const acknowledged: Array<{ messageId: string; to: string }> = [];
  let sending = true;
  const senders = clients.map(async (client, i) => {
    const to = AGENTS[(i + 1) % AGENTS.length];
    for (let n = 0; sending; n++) {
      const sent = await client.send({ to, subject: `load ${i}-${n}`, body: 'keep going' });
      acknowledged.push({ messageId: sent.messageId, to });
    }
  });
  while (acknowledged.length < 300) await new Promise((resolve) => setTimeout(resolve, 10));
  const beforeBackup = [...acknowledged];
  const backupFile = path.join(root, 'backups', 'events-1.sqlite');
  fs.mkdirSync(path.dirname(backupFile));
  const run = await runCli(['backup', '--json', backupFile], { MAILBOX_DATA_DIR: dataDir });
  const afterBackup = acknowledged.length;
  sending = false;
  await Promise.all(senders);
  await mailbox.close();

  expect(run.stderr).not.toContain('"code"');
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(result).toMatchObject({ file: backupFile, source: path.join(dataDir, 'events.sqlite') });
  expect(afterBackup).toBeGreaterThan(beforeBackup.length); // sends went on during the backup
  expect(Number(result.head)).toBeGreaterThanOrEqual(Number(result.headAtStart));
  expect(fs.readdirSync(path.dirname(backupFile))).toEqual(['events-1.sqlite']); // no partial or journal file beside it
  expect(fs.statSync(backupFile).mode & 0o777).toBe(0o600); // every message is in it: its owner's only (was 0644)

  // Restore as the help says: a data dir whose events.sqlite is the backup, no views (built at start).
  const restoredDir = path.join(root, 'restored');
  fs.mkdirSync(restoredDir);
  fs.copyFileSync(backupFile, path.join(restoredDir, 'events.sqlite'));
  const restored = await open(restoredDir);
  try {
    expect((await restored.asActor(ADMIN_ACTOR).listAgents()).agents.map((agent) => agent.identity).sort()).toEqual(AGENTS);
    for (const identity of AGENTS) {
      const inbox = new Set<string>();
      const reader = restored.asActor({ identity, role: 'agent' });
      for (let cursor: string | undefined; ;) {
        const page = await reader.listMessages({ limit: 100, ...(cursor ? { cursor } : {}) });
        for (const message of page.messages) inbox.add(message.messageId);
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      const owed = beforeBackup.filter((sent) => sent.to === identity);
      expect(owed.length).toBeGreaterThan(50);
      expect(owed.filter((sent) => !inbox.has(sent.messageId))).toEqual([]);
      expect(inbox.size).toBeLessThanOrEqual(afterBackup); // nothing invented
    }
    const events = Number((await restored.eventStore.headPosition()) ?? 0n);
    expect(events).toBe(Number(result.head));
  } finally {
    await restored.close();
  }
  const verify = await runCli(['audit', 'verify'], { MAILBOX_DATA_DIR: restoredDir }, { timeoutMs: 60_000 });
  expect(verify.stdout).toContain('OK: the live projections match the log');
  expect(verify.code).toBe(0);
});

describe('refusals with --json: one envelope line, a non-zero exit, nothing written', () => {
  let root: string;
  let dataDir: string;
  beforeAll(async () => {
    root = tempDir('mailbox-backup-refusals-');
    dataDir = path.join(root, 'data');
    const mailbox = await open(dataDir);
    await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@ana' });
    await mailbox.close();
  });

  const envelope = (stderr: string) => JSON.parse(stderr.trim().split('\n').pop()!) as Record<string, string>;

  test('an existing file is never overwritten', async () => {
    const existing = path.join(root, 'taken.sqlite');
    fs.writeFileSync(existing, 'an older backup');
    const run = await runCli(['backup', '--json', existing], { MAILBOX_DATA_DIR: dataDir });
    expect(run.code).toBe(2);
    expect(envelope(run.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'destination' });
    expect(envelope(run.stderr).message).toContain(`${existing} already exists: mailbox backup never overwrites a file`);
    expect(fs.readFileSync(existing, 'utf8')).toBe('an older backup');
    expect(run.stdout).toBe('');
    // It suggested "with the date: events-$(date +%F).sqlite", the form of the name that was taken when the documented
    // line ran twice in a day. It now names a free one beside it, the time added, which a backup then takes.
    const [free] = envelope(run.stderr).suggestions as unknown as string[];
    expect(free).toMatch(new RegExp(`^${root}/taken-\\d{4}\\.sqlite$`));
    expect(envelope(run.stderr).message).toContain(`Give a new name, e.g. ${free} (the time added, UTC), or move`);
    const again = await runCli(['backup', free!], { MAILBOX_DATA_DIR: dataDir });
    expect([again.code, fs.existsSync(free!)]).toEqual([0, true]);
  });

  test('a directory is not a file name: the error gives one in it', async () => {
    const directory = path.join(root, 'backups-dir');
    fs.mkdirSync(directory);
    const run = await runCli(['backup', '--json', `${directory}/`], { MAILBOX_DATA_DIR: dataDir });
    expect(run.code).toBe(2);
    expect(envelope(run.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'destination' });
    expect(envelope(run.stderr).message).toMatch(
      new RegExp(
        `^${directory} is a directory: mailbox backup writes one file, so name it \\(e\\.g\\. ${directory}/events-\\d{4}-\\d{2}-\\d{2}\\.sqlite\\)\\.$`,
      ),
    );
    expect(fs.readdirSync(directory)).toEqual([]);
  });

  test('a directory that does not exist is not created', async () => {
    const target = path.join(root, 'no-such-dir', 'events.sqlite');
    const run = await runCli(['backup', '--json', target], { MAILBOX_DATA_DIR: dataDir });
    expect(run.code).toBe(2);
    expect(envelope(run.stderr).message).toContain(`The directory ${path.dirname(target)} does not exist: create it first`);
    expect(fs.existsSync(path.dirname(target))).toBe(false);
  });

  test('no log where the configuration points: not found, exit 1, and no log created', async () => {
    const missing = path.join(root, 'nothing-here');
    const run = await runCli(['backup', '--json', path.join(root, 'x.sqlite')], { MAILBOX_DATA_DIR: missing });
    expect(run.code).toBe(1);
    expect(envelope(run.stderr)).toMatchObject({ code: 'NOT_FOUND', field: 'MAILBOX_DATA_DIR' });
    expect(fs.existsSync(missing)).toBe(false);
    expect(fs.existsSync(path.join(root, 'x.sqlite'))).toBe(false);
  });

  // It said 'Backup failed' (UNAVAILABLE, field destination) 'could not be made: SQLite: file is not a database': the
  // destination was not the trouble, and nothing said which file was no log nor what to do.
  test("a log file that is no SQLite database: the readers' line naming it (field MAILBOX_DATA_DIR), exit 2", async () => {
    const notes = path.join(root, 'notes');
    fs.mkdirSync(notes);
    const log = path.join(notes, 'events.sqlite');
    fs.writeFileSync(log, 'these are notes, not an event log\n');
    const target = path.join(root, 'from-notes.sqlite');
    const run = await runCli(['backup', '--json', target], { MAILBOX_DATA_DIR: notes });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(envelope(run.stderr)).toMatchObject({
      error: 'Event log unreadable',
      code: 'UNAVAILABLE',
      field: 'MAILBOX_DATA_DIR',
      file: log,
    });
    expect(envelope(run.stderr).message).toContain(`the event log ${log} cannot be read as a SQLite database`);
    expect(envelope(run.stderr).message).toContain('Restore it from a backup');
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readdirSync(root).filter((name) => name.includes('from-notes'))).toEqual([]); // no partial copy beside it
    expect(fs.readdirSync(notes)).toEqual(['events.sqlite']);
  });

  test('a log in a server memory, and an EventStoreDB log, are refused with their own way to a backup', async () => {
    const memory = await runCli(['backup', '--json', path.join(root, 'm.sqlite')], { MAILBOX_EVENTSTORE_URL: 'memory:' });
    expect(memory.code).toBe(1);
    expect(envelope(memory.stderr)).toMatchObject({ code: 'NOT_FOUND', field: 'MAILBOX_EVENTSTORE_URL' });
    const esdb = await runCli(['backup', '--json', path.join(root, 'e.sqlite')], {
      MAILBOX_EVENTSTORE_URL: 'esdb://admin:s3cret-pass@127.0.0.1:1?tls=false',
    });
    expect(esdb.code).toBe(2);
    expect(envelope(esdb.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'MAILBOX_EVENTSTORE_URL' });
    expect(envelope(esdb.stderr).message).toContain("back that up with EventStoreDB's own tools");
    expect(esdb.stderr).not.toContain('s3cret-pass');
    expect(fs.existsSync(path.join(root, 'm.sqlite')) || fs.existsSync(path.join(root, 'e.sqlite'))).toBe(false);
  });
});

test('Ctrl-C during a backup: exit 130, it says so, and nothing is left at the destination nor beside it', async () => {
  const root = tempDir('mailbox-backup-stopped-');
  const dataDir = path.join(root, 'data');
  const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
  await writeSyntheticLog(log, { agents: 30, events: 60_000, readShare: 0.25, archiveShare: 0.1, broadcastEvery: 10_000 });
  await log.close();
  const backups = path.join(root, 'backups');
  fs.mkdirSync(backups);
  const target = path.join(backups, 'events.sqlite');

  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawn(process.execPath, [MAILBOX_BIN, 'backup', target], {
    cwd: ROOT,
    env: { ...base, MAILBOX_DATA_DIR: dataDir },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  // The positive signal: the copy is being written beside the destination.
  await waitFor(() => fs.readdirSync(backups).length > 0, { timeoutMs: 20_000, everyMs: 2, what: 'the partial copy' });
  child.kill('SIGINT');
  expect(await exited).toBe(130);
  expect(stderr).toContain(`backup interrupted: nothing was written to ${target} (the partial copy was removed) (SIGINT)`);
  expect(stdout).toBe('');
  expect(fs.readdirSync(backups)).toEqual([]);
}, 60_000);

test('a backup is read as it is: audit and projections status change nothing in it, and a read-only log takes no append', async () => {
  const root = tempDir('mailbox-backup-read-');
  const {
    dataDir,
    mailbox,
    clients: [ana, bo],
  } = await openWithAgents(root);
  await ana.send({ to: '@bo', subject: 'kept', body: 'in the backup' });
  await bo.send({ to: '@cy', subject: 'kept too', body: 'in the backup' });
  await mailbox.close();
  const backups = path.join(root, 'backups');
  fs.mkdirSync(backups);
  const backup = path.join(backups, 'events.sqlite');
  expect((await runCli(['backup', backup], { MAILBOX_DATA_DIR: dataDir })).code).toBe(0);
  const bytes = fs.readFileSync(backup);

  const env = { MAILBOX_EVENTSTORE_URL: `sqlite:${backup}`, MAILBOX_DATA_DIR: path.join(root, 'elsewhere') };
  const replay = await runCli(['audit', 'replay'], env);
  expect(replay.stdout).toContain('"kept too"');
  expect(replay.stdout).toMatch(/^#5 .*MessageSent/m);
  for (const args of [
    ['audit', 'replay', '--json'],
    ['audit', 'agent', '@bo'],
    ['projections', 'status'],
  ]) {
    const run = await runCli(args, env);
    expect({ args, code: run.code }).toEqual({ args, code: 0 });
  }
  // Byte for byte as written (before, a reader turned it into a WAL file), and nothing made beside it.
  expect(fs.readFileSync(backup).equals(bytes)).toBe(true);
  expect(fs.readdirSync(backups)).toEqual(['events.sqlite']);

  const readOnly = SqliteEventStore.open(backup, undefined, { readOnly: true });
  try {
    expect(await readOnly.headPosition()).toBe(5n);
    await expect(readOnly.append('mailbox-agents', [], 'any')).rejects.toThrow('opened read-only');
  } finally {
    await readOnly.close();
  }
  expect(fs.readFileSync(backup).equals(bytes)).toBe(true);
});
