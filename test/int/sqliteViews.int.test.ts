/**
 * Acceptance (issue 15): the SQLite views are the embedded default and
 * survive restarts. SIGKILL in the middle of a projection, then restart: the
 * views equal a clean rebuild (nothing counted twice). A restart resumes from
 * the stored checkpoint and says so. A views file deleted while stopped is
 * rebuilt, with a log line saying why; another log's views file is refused
 * (nothing written) or taken over on request. Blue/green rebuilds switch
 * generations inside the file while the mailbox keeps serving.
 * Identities: @a sends; @b and @c receive.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { PassThrough } from 'node:stream';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { VIEWS_SCHEMA_VERSION } from '../../src/adapters/projections/sqliteViews/sqliteViewsSchema';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import type { MailboxConfigInput } from '../../src/config';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { recordingLogger } from '../support/recordingLogger';
import { projectStored } from '../../src/projections/projector';
import { rebuildProjections } from '../../src/projections/rebuild';
import { runRebuild, runRebuildCommand } from '../../src/cli/commands/projections';
import { StartupError } from '../../src/startupError';
import { writeSyntheticLog } from '../../bench/lib/syntheticLog';
import { snapshotViews } from '../contract/projectionStore.contract';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { checkReadiness } from '../../src/adapters/http/readiness';
import { MailboxError } from '../../src/errors';
import { openPipeline } from '../../src/compositionRoot';
import { parseConfig } from '../../src/config';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { expectEqualLarge } from '../support/expectEqualLarge';

const ROOT = path.resolve(__dirname, '../..');

/** The views a clean rebuild from the whole log gives (the pure read model in memory). */
async function cleanRebuild(file: string) {
  const log = SqliteEventStore.open(file);
  const views = new MemoryProjectionStore(new InProcessWakeBus());
  try {
    for (let after: bigint | null = null; ;) {
      const page = await log.readAll(after, 5000);
      if (page.length === 0) break;
      await views.applyBatch(page.map(projectStored));
      after = page[page.length - 1].position;
    }
    return await snapshotViews(views);
  } finally {
    await log.close();
  }
}

const storedCheckpoint = (views: string): bigint | null => {
  const db = openSqliteDatabase(views, undefined, { readonly: true }); // the store's binding: one per file in a process
  try {
    db.pragma('busy_timeout = 5000');
    const active = (db.prepare("SELECT value FROM views_meta WHERE key = 'active'").get() as { value: string }).value;
    const row = db.prepare(`SELECT checkpoint FROM ${active}_state`).safeIntegers(true).get() as { checkpoint: bigint | null };
    return row.checkpoint;
  } finally {
    db.close();
  }
};

const config = (dir: string, extra: MailboxConfigInput = {}): MailboxConfigInput => ({
  eventStoreUrl: `sqlite:${dir}/events.sqlite`,
  adminToken: ADMIN_TOKEN,
  logLevel: 'silent',
  ...extra,
});

/**
 * Two stopped mailboxes: the first populated, the second with only @only-here registered and the first's views file
 * copied over its own (views of another log). Returns the second's directory.
 */
async function viewsOfAnotherLog(): Promise<string> {
  const first = tempDir('views-first-');
  const second = tempDir('views-second-');
  const populated = await createMailbox(config(first));
  await populate(populated);
  await populated.close();
  const other = await createMailbox(config(second));
  await other.asActor(ADMIN_ACTOR).registerAgent({ identity: '@only-here' });
  await other.close();
  for (const suffix of ['', '-wal', '-shm']) {
    fs.rmSync(path.join(second, `views.sqlite${suffix}`), { force: true });
    if (suffix !== '-shm' && fs.existsSync(path.join(first, `views.sqlite${suffix}`)))
      fs.copyFileSync(path.join(first, `views.sqlite${suffix}`), path.join(second, `views.sqlite${suffix}`));
  }
  return second;
}

/** The generations whose tables are in the views file, and the log each was built from. */
const generationsIn = (views: string): Record<string, string | null> => {
  const db = openSqliteDatabase(views, undefined, { readonly: true });
  try {
    const names = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'g[0-9]*_state'").all() as Array<{
        name: string;
      }>
    ).map((row) => row.name.replace(/_state$/, ''));
    return Object.fromEntries(
      names.map((g) => [
        g,
        (db.prepare(`SELECT log_identity FROM ${g}_state`).get() as { log_identity: string | null }).log_identity,
      ]),
    );
  } finally {
    db.close();
  }
};

/** @a, @b, @c and a few messages: a direct one read by @b, a broadcast, one archived by @c. */
async function populate(mailbox: Mailbox) {
  const admin = mailbox.asActor(ADMIN_ACTOR);
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) tokens[identity] = (await admin.registerAgent({ identity })).token;
  const [a, b, c] = await Promise.all(['@a', '@b', '@c'].map((identity) => mailbox.as(tokens[identity])));
  const direct = await a.send({ to: '@b', subject: 'direct', body: 'x', priority: 'high' });
  await a.send({ to: 'AGENT:*', subject: 'broadcast', body: 'y' });
  const toC = await a.send({ to: '@c', subject: 'for c', body: 'z', tags: ['ops'] });
  await b.markRead({ messageId: direct.messageId });
  await c.archive(toC.messageId);
  return { tokens, a, b, c };
}

/** A populated mailbox, stopped, whose views file was then overwritten with text (by hand, or a disk fault in its header). */
async function stoppedWithViewsOverwritten(prefix: string) {
  const dir = tempDir(prefix);
  const populated = await createMailbox(config(dir));
  const { tokens } = await populate(populated);
  const before = await snapshotViews(populated.projections);
  await populated.close();
  const file = path.join(dir, 'views.sqlite');
  const garbage = 'these bytes are not a SQLite database\n'.repeat(200);
  fs.writeFileSync(file, garbage);
  return { dir, file, garbage, tokens, before };
}

/**
 * A populated mailbox (the server) and a separate reader of its views, opened as `mailbox heartbeat` opens them;
 * `body` stops the server and replaces the views file as it likes. The reader is closed afterwards.
 */
async function withSeparateReader(
  prefix: string,
  body: (context: {
    file: string;
    reader: ProjectionStore;
    messages: () => string[];
    stopAndRemoveViews(): Promise<void>;
    restartAndSendToC(subject: string): Promise<Mailbox>;
  }) => Promise<void>,
): Promise<void> {
  const dir = tempDir(prefix);
  mailbox = await createMailbox(config(dir));
  const { tokens } = await populate(mailbox);
  const { logger, messages } = recordingLogger();
  const pipeline = await openPipeline(parseConfig(config(dir)), logger, 'auto');
  const file = path.join(dir, 'views.sqlite');
  try {
    await body({
      file,
      reader: pipeline.projections,
      messages,
      stopAndRemoveViews: async () => {
        await mailbox?.close();
        mailbox = null;
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
      },
      restartAndSendToC: async (subject) => {
        const server = (mailbox = await createMailbox(config(dir)));
        await (await server.as(tokens['@a'])).send({ to: '@c', subject, body: 'w' });
        return server;
      },
    });
  } finally {
    await pipeline.close();
  }
}

let mailbox: Mailbox | null = null;
afterEach(async () => {
  await mailbox?.close();
  mailbox = null;
});

describe('SQLite views (embedded default)', () => {
  it('SIGKILL in the middle of projecting, then restart: resumes from the stored checkpoint, views equal a clean rebuild', async () => {
    const dir = tempDir('views-crash-');
    const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    // Twelve of the projector's 1,000-event batches: killed once the first is committed, it dies with most still to
    // apply (40,000 took 21 s of CI for the same check).
    const { events } = await writeSyntheticLog(log, {
      agents: 12,
      events: 12_000,
      readShare: 0.25,
      archiveShare: 0.2,
      broadcastEvery: 400,
      bodyBytes: 16,
    });
    const head = await log.headPosition();
    await log.close();

    const child = spawn(
      process.execPath,
      ['-r', path.join(ROOT, 'test/support/tsRequireHook.js'), path.join(ROOT, 'test/support/viewsCrashChild.ts'), dir],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
    const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('opening');
    const views = path.join(dir, 'views.sqlite');
    // Kill once some of the log is projected (a committed checkpoint), usually inside a later transaction.
    for (;;) {
      const checkpoint = fs.existsSync(views)
        ? await Promise.resolve()
            .then(() => storedCheckpoint(views))
            .catch(() => null)
        : null;
      if (checkpoint !== null) break; // (null also while the child is still creating the file)
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const killedAt = storedCheckpoint(views)!;
    expect(killedAt).toBeLessThan(head!); // it died in the middle of the projection

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    expect(messages()).toContain(
      `projections: SQLite views resume from their stored checkpoint ${killedAt} (no rebuild); wake bus: in process`,
    );
    expect(await mailbox.projections.checkpoint()).toBe(head);
    expectEqualLarge(await snapshotViews(mailbox.projections), await cleanRebuild(path.join(dir, 'events.sqlite')));
    expect(events).toBeGreaterThanOrEqual(12_000);
  }, 120_000);

  it('a restart resumes from the stored checkpoint (the log says so) and applies nothing again', async () => {
    const dir = tempDir('views-restart-');
    mailbox = await createMailbox(config(dir));
    const { tokens } = await populate(mailbox);
    const checkpoint = await mailbox.projections.checkpoint();
    await mailbox.close();

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    expect(messages()).toContain(
      `projections: SQLite views resume from their stored checkpoint ${checkpoint} (no rebuild); wake bus: in process`,
    );
    expect(messages()).not.toContain('projections caught up'); // nothing was left to apply
    expect((await checkReadiness(mailbox)).checks.projectionStore).toEqual({
      ok: true,
      backend: 'sqlite',
      checkpoint: `${checkpoint}`,
    });
    const b = await mailbox.as(tokens['@b']);
    expect(await b.unreadCount()).toEqual({
      unreadCount: 1,
      unread: 1,
      byPriority: { low: 0, normal: 1, high: 0 },
      unseenCount: 1,
    });
    const c = await mailbox.as(tokens['@c']);
    expect((await c.listMessages({})).messages.map((m) => m.subject)).toEqual(['broadcast']); // the archived one stays hidden
  });

  it('a second start of an empty log says that nothing was projected yet, not that views are missing', async () => {
    const dir = tempDir('views-empty-log-');
    mailbox = await createMailbox(config(dir));
    expect(await mailbox.eventStore.headPosition()).toBeNull(); // nothing was ever written
    await mailbox.close();

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    expect(messages()).toContain(
      'projections: SQLite views file has no checkpoint yet (nothing projected into it so far): projecting the log ' +
        'from its start; wake bus: in process',
    );
    expect(messages().filter((line) => line.includes('no views yet'))).toEqual([]);
  });

  it('a views file deleted while stopped is rebuilt at start, with a log line saying why', async () => {
    const dir = tempDir('views-deleted-');
    mailbox = await createMailbox(config(dir));
    const { tokens } = await populate(mailbox);
    const before = await snapshotViews(mailbox.projections);
    await mailbox.close();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dir, `views.sqlite${suffix}`), { force: true });

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    expect(messages()).toContain(
      'projections: SQLite views file not found (first start, or deleted while stopped): building the views from the whole log; wake bus: in process',
    );
    expect(messages()).toContain('projections caught up');
    expect(await snapshotViews(mailbox.projections)).toEqual(before);
    const b = await mailbox.as(tokens['@b']);
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.subject)).toEqual(['broadcast']);
  });

  it('a views file that is not a database is moved aside at start (kept, not deleted) and rebuilt from the log, with a log line saying why', async () => {
    const { dir, tokens, before, garbage } = await stoppedWithViewsOverwritten('views-not-a-db-');

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    const asideFiles = fs.readdirSync(dir).filter((name) => name.startsWith('views.sqlite.damaged-'));
    expect(asideFiles).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, asideFiles[0]), 'utf8')).toBe(garbage);
    expect(messages()).toContain(
      `projections: SQLite views file unreadable (file is not a database): moved aside to ${path.join(dir, asideFiles[0])}; ` +
        'building the views from the whole log (the log is the truth); wake bus: in process',
    );
    expect(messages()).toContain('projections caught up');
    expect(await snapshotViews(mailbox.projections)).toEqual(before);
    const b = await mailbox.as(tokens['@b']);
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.subject)).toEqual(['broadcast']);
  });

  it('a separate reader of the views (heartbeat daemon, audit verify) never moves a damaged file: it says to restart the server', async () => {
    const { dir, file, garbage } = await stoppedWithViewsOverwritten('views-reader-');

    const { logger } = recordingLogger();
    await expect(openPipeline(parseConfig(config(dir)), logger, 'auto')).rejects.toBeInstanceOf(StartupError); // one line, exit code 2
    await expect(openPipeline(parseConfig(config(dir)), logger, 'auto')).rejects.toThrow(
      `The views file ${file} is damaged (file is not a database); ` +
        'restart the mailbox server first: it moves the file aside and rebuilds the views from the event log.',
    );
    expect(fs.readFileSync(file, 'utf8')).toBe(garbage); // left where the server will look for it
    expect(fs.readdirSync(dir).filter((name) => name.includes('damaged'))).toEqual([]);

    mailbox = await createMailbox(config(dir)); // the owner repairs it
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('views.sqlite.damaged-'))).toHaveLength(1);
    await mailbox.close();
    mailbox = null;
    fs.writeFileSync(`${file}.damaged`, '2026-11-25T00:00:00.000Z database disk image is malformed\n'); // as a running server leaves it
    const pipeline = await openPipeline(parseConfig(config(dir)), logger, 'auto'); // a reader opens it as it is
    try {
      expect(fs.existsSync(`${file}.damaged`)).toBe(true);
      expect(fs.readdirSync(dir).filter((name) => name.startsWith('views.sqlite.damaged-'))).toHaveLength(1);
      expect(pipeline.projections.damage?.()).toMatch(
        /is damaged \(database disk image is malformed, found at 2026-11-25T00:00:00.000Z\)/,
      );
    } finally {
      await pipeline.close();
    }
  });

  it('a separate reader (heartbeat daemon) follows the views file the server built anew, instead of reading the old one frozen', async () => {
    await withSeparateReader('views-replaced-', async ({ reader, messages, stopAndRemoveViews, restartAndSendToC }) => {
      expect((await reader.unreadCount('@c')).unread).toBe(1); // the broadcast ('for c' is archived)
      // A reader says it reads the server's file: "resume from their stored checkpoint" is what the server does.
      const opened = messages().find((message) => message.startsWith('projections: '));
      expect(opened).toMatch(/^projections: reading the SQLite views file that the server keeps \(at checkpoint \d+\)$/);
      await stopAndRemoveViews();
      const server = await restartAndSendToC('after the rebuild'); // the views built anew, in a new file

      expect(await reader.checkpoint()).toBe(await server.projections.checkpoint());
      expect((await reader.unreadCount('@c')).unread).toBe(2);
      expect((await reader.heartbeat('@b')).unread).toBe(1);
      expect(await snapshotViews(reader)).toEqual(await snapshotViews(server.projections));
      expect(messages()).toContain(
        'projections: the SQLite views file was replaced (the server built the views anew): reading the new one',
      );
    });
  });

  it('a separate reader keeps the views it has while the file that replaced them cannot be opened, and says why once', async () => {
    await withSeparateReader(
      'views-replaced-damaged-',
      async ({ file, reader, messages, stopAndRemoveViews, restartAndSendToC }) => {
        const checkpoint = await reader.checkpoint();
        await stopAndRemoveViews();
        fs.writeFileSync(file, 'these bytes are not a SQLite database\n'.repeat(200)); // a new file, unreadable

        expect(await reader.checkpoint()).toBe(checkpoint); // the views it had, not an error
        expect((await reader.unreadCount('@c')).unread).toBe(1);
        const refusals = messages().filter((message) => message.includes('the new one cannot be opened'));
        expect(refusals).toEqual([
          'projections: the SQLite views file was replaced, and the new one cannot be opened yet; reading the previous one until it can',
        ]); // once, not once per call

        const server = await restartAndSendToC('after the repair'); // the server moves it aside and builds the views anew
        expect((await reader.unreadCount('@c')).unread).toBe(2);
        expect(await reader.checkpoint()).toBe(await server.projections.checkpoint());
      },
    );
  });

  it('damage found while running answers 503 naming the remedy; the next start moves the file aside and rebuilds it', async () => {
    const dir = tempDir('views-damaged-');
    mailbox = await createMailbox(config(dir));
    const { tokens } = await populate(mailbox);
    const before = await snapshotViews(mailbox.projections);
    await mailbox.close();
    mailbox = null;
    const file = path.join(dir, 'views.sqlite');
    // Damage only the page of the inbox entries (a few rows: the table's root is its only page); the schema and the
    // counters stay readable, so the file opens and the damage is found by the first listing, not at start.
    const db = openSqliteDatabase(file);
    const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'g1_entries'").get() as { rootpage: number };
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (rootpage - 1) * pageSize);
    fs.closeSync(fd);

    mailbox = await createMailbox(config(dir));
    const b = await mailbox.as(tokens['@b']);
    const failure = await b.listMessages({}).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(MailboxError);
    expect((failure as MailboxError).status).toBe(503);
    expect((failure as MailboxError).envelope).toEqual({
      error: 'Operator action needed',
      code: 'UNAVAILABLE',
      message:
        `The views file ${file} is damaged (database disk image is malformed); the operator must restart the mailbox, ` +
        'which moves the file aside and rebuilds the views from the event log (no message is lost: the log is intact).',
      viewsFile: file,
      operatorAction: 'restart the mailbox (it moves the damaged views file aside and rebuilds the views)',
    });
    expect(fs.readFileSync(`${file}.damaged`, 'utf8')).toMatch(/ database disk image is malformed\n$/);
    const readiness = await checkReadiness(mailbox); // not ready until a restart rebuilds the views
    expect(readiness.ready).toBe(false);
    expect(readiness.checks.projectionStore).toEqual({
      ok: false,
      backend: 'sqlite',
      checkpoint: expect.any(String),
      error: expect.stringMatching(
        new RegExp(
          `^The views file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged \\(database disk image is malformed, found at \\S+\\); ` +
            'restart the mailbox: it moves the file aside and rebuilds the views from the event log\\.$',
        ),
      ),
    });
    await mailbox.close();

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    const asideFiles = fs.readdirSync(dir).filter((name) => /^views\.sqlite\.damaged-[^.]*$/.test(name)); // not its -wal, -shm
    expect(asideFiles).toHaveLength(1);
    expect(fs.existsSync(`${file}.damaged`)).toBe(false); // the mark went with the file
    expect(messages()).toContainEqual(
      expect.stringMatching(
        /^projections: SQLite views file unreadable \(found damaged while running: \S+ database disk image is malformed\): moved aside to /,
      ),
    );
    expect(await snapshotViews(mailbox.projections)).toEqual(before);
    expect((await checkReadiness(mailbox)).ready).toBe(true);
    const again = await mailbox.as(tokens['@b']);
    expect((await again.listMessages({ status: 'unread' })).messages.map((m) => m.subject)).toEqual(['broadcast']);
  });

  it('a views file of an earlier schema (before the delivery ledger) is dropped and rebuilt at start, with a log line saying why', async () => {
    const dir = tempDir('views-old-schema-');
    mailbox = await createMailbox(config(dir));
    const { tokens } = await populate(mailbox);
    const before = await snapshotViews(mailbox.projections);
    await mailbox.close();
    mailbox = null;
    const file = path.join(dir, 'views.sqlite');
    const old = openSqliteDatabase(file); // what a file written before issue 13 lacks: the schema row and the ledger's tables
    old.exec("DELETE FROM views_meta WHERE key = 'schema'; DROP TABLE g1_ledgers; DROP TABLE g1_ledger_rows;");
    old.close();

    const { logger, messages } = recordingLogger();
    mailbox = await createMailbox(config(dir), { logger });
    expect(messages()).toContain(
      'projections: SQLite views file dropped (its tables are of views schema 1 (before the delivery ledger), ' +
        `this mailbox reads schema ${VIEWS_SCHEMA_VERSION}): ` +
        'building the views from the whole log (the log is the truth); wake bus: in process',
    );
    expect(messages()).toContain('projections caught up');
    expect(await snapshotViews(mailbox.projections)).toEqual(before);
    const b = await mailbox.as(tokens['@b']);
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.subject)).toEqual(['broadcast']);
  });

  it("another log's views file is refused with one line and left unchanged; take-over rebuilds it from this log", async () => {
    const second = await viewsOfAnotherLog();
    const copied = storedCheckpoint(path.join(second, 'views.sqlite'));

    const refused = await createMailbox(config(second)).then(
      () => null,
      (error: unknown) => error,
    );
    // The library's refusal: a MailboxError naming its option (mailbox serve's own is a StartupError: logIdentity.e2e).
    expect(refused).toBeInstanceOf(MailboxError);
    expect((refused as MailboxError).envelope).toMatchObject({ code: 'UNAVAILABLE', error: 'Refused at open' });
    const message = (refused as MailboxError).message;
    expect(message).not.toMatch(/MAILBOX_/);
    expect(message).toContain("projectionsOnForeign: 'take-over'");
    expect(message).toMatch(
      /^The views in the SQLite views file .*views\.sqlite belong to another event log \(.+\), not to this one/,
    );
    expect(message).toContain('Move the views file away (it is then rebuilt from this log at start)');
    expect(message).not.toContain('\n');
    expect(storedCheckpoint(path.join(second, 'views.sqlite'))).toBe(copied); // nothing written

    mailbox = await createMailbox(config(second, { projectionsOnForeign: 'take-over' }));
    await mailbox.viewsReady;
    expect((await mailbox.projections.listAgents()).map((agent) => agent.identity)).toEqual(['@only-here']);
    expect(await mailbox.projections.binding()).toMatchObject({ logIdentity: await mailbox.eventStore.logIdentity() });
  });

  it("what a take-over does with the other log's views: kept by the one at start, deleted after the grace by rebuild --take-over unless --keep-previous", async () => {
    // At start (MAILBOX_PROJECTIONS_ON_FOREIGN=take-over): the other log's generation stays in the file, as its warn line says.
    const atStart = await viewsOfAnotherLog();
    const { logger, messages, lines } = recordingLogger();
    const otherLog = generationsIn(path.join(atStart, 'views.sqlite')).g1;
    mailbox = await createMailbox(config(atStart, { projectionsOnForeign: 'take-over' }), { logger });
    await mailbox.viewsReady;
    const thisLog = await mailbox.eventStore.logIdentity();
    expect(messages()).toContain(
      'projections: took over the SQLite views file ' +
        `${path.join(atStart, 'views.sqlite')}; the previous views (generation g1) are kept until deleted`,
    );
    // Said as an admin's act is: what was done, by what, to which views (grep adminAction finds every such line).
    expect(lines.filter((line) => line.adminAction !== undefined)).toEqual([
      expect.objectContaining({
        adminAction: 'took over views',
        by: 'MAILBOX_PROJECTIONS_ON_FOREIGN=take-over',
        location: `the SQLite views file ${path.join(atStart, 'views.sqlite')}`,
        viewsOf: otherLog,
        logIdentity: thisLog,
        generation: 'g2',
        previous: 'g1',
      }),
    ]);
    await mailbox.close();
    mailbox = null;
    expect(generationsIn(path.join(atStart, 'views.sqlite'))).toEqual({ g1: otherLog, g2: thisLog });

    // `mailbox projections rebuild --take-over`: deleted after the grace, as any rebuild's previous generation; kept with --keep-previous.
    for (const keepPrevious of [false, true]) {
      const offline = await viewsOfAnotherLog();
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (chunk) => (out += chunk));
      const env = { MAILBOX_EVENTSTORE_URL: `sqlite:${offline}/events.sqlite` };
      const flags = { graceMs: '0', settleMs: '0', takeOver: true, ...(keepPrevious ? { keepPrevious } : {}) };
      expect(await runRebuild(flags, { stdout, stderr: new PassThrough(), env })).toBe(0);
      expect(out.trim().split('\n').at(-1)).toMatch(
        keepPrevious
          ? /; previous generation g1 kept; took over the SQLite views file .*views\.sqlite from log /
          : /; previous generation g1 deleted after the 0 ms grace; took over the SQLite views file .*views\.sqlite from log /,
      );
      expect(Object.keys(generationsIn(path.join(offline, 'views.sqlite')))).toEqual(keepPrevious ? ['g1', 'g2'] : ['g2']);
    }
  });

  it("mailbox projections rebuild on another log's views file speaks of the file, never of a Redis namespace", async () => {
    const dir = await viewsOfAnotherLog();
    const file = path.join(dir, 'views.sqlite');
    const otherLog = generationsIn(file).g1!;
    const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    const thisLog = await log.logIdentity();
    await log.close();
    const rebuild = async (flags: Record<string, unknown>) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const text = { out: '', err: '' };
      stdout.on('data', (chunk) => (text.out += chunk));
      stderr.on('data', (chunk) => (text.err += chunk));
      process.exitCode = undefined;
      // --json: the refusals' envelopes are read below.
      await runRebuildCommand(
        { stdout, stderr, env: { MAILBOX_EVENTSTORE_URL: `sqlite:${dir}/events.sqlite` } },
        { ...flags, json: true },
      );
      const code = process.exitCode;
      process.exitCode = undefined;
      return { code, ...text };
    };
    const markLive = async (mark: boolean) => {
      const views = SqliteProjectionStore.open(file, new InProcessWakeBus());
      await (mark ? views.markLiveWriter(otherLog) : views.releaseLiveWriter(otherLog));
      await views.close();
    };

    // Refused: the views file is named, and the remedy is the file's (it spoke of "the projection store" and of MAILBOX_REDIS_NAMESPACE).
    const refused = await rebuild({ graceMs: '0', settleMs: '0' });
    expect(refused.code).toBe(2);
    expect(refused.err.trim().split('\n')).toHaveLength(1);
    const { message } = JSON.parse(refused.err);
    expect(message.startsWith(`The views in the SQLite views file ${file} belong to another event log (${otherLog})`)).toBe(true);
    expect(message).toContain('Move the views file away (it is then rebuilt from this log at start), or take it over');
    expect(message).not.toContain('MAILBOX_REDIS_NAMESPACE');
    expect(generationsIn(file)).toEqual({ g1: otherLog });

    // The other log's projector live on the file: stop it (another namespace is no remedy for a file).
    await markLive(true);
    const live = await rebuild({ graceMs: '0', settleMs: '0', takeOver: true });
    expect(live.code).toBe(2);
    expect(JSON.parse(live.err).message).toMatch(
      new RegExp(`^A projector of another event log \\(${otherLog}\\) is live on these views .*: stop that mailbox first\\.$`),
    );
    expect(generationsIn(file)).toEqual({ g1: otherLog });
    await markLive(false);

    // Taken over: what happened to the file, in its own terms (it said "took the namespace over").
    const taken = await rebuild({ graceMs: '0', settleMs: '0', takeOver: true });
    expect(taken.code).toBe(0);
    expect(taken.out).not.toContain('namespace');
    expect(taken.out.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        '; previous generation g1 deleted after the 0 ms grace; ' +
          `took over the SQLite views file ${file.replace(/[.]/g, '\\.')} from log ${otherLog}: its active generation g1 ` +
          `\\(views of log ${otherLog}\\) was replaced by g2, built from this log \\(${thisLog}\\)$`,
      ),
    );
    expect(generationsIn(file)).toEqual({ g2: thisLog });
  });

  it('blue/green rebuild inside the file while the mailbox serves and sends: switches to a new generation, same views', async () => {
    const dir = tempDir('views-rebuild-');
    mailbox = await createMailbox(config(dir));
    const { a } = await populate(mailbox);
    const file = path.join(dir, 'views.sqlite');
    const maintenance = SqliteProjectionStore.open(file, new InProcessWakeBus()); // as `mailbox projections rebuild` opens it
    try {
      const sending = (async () => {
        for (let i = 0; i < 30; i++) await a.send({ to: '@b', subject: `during ${i}`, body: 'x' });
      })();
      const result = await rebuildProjections(mailbox.eventStore, maintenance.generations(), {
        dropPreviousAfterMs: 0,
        settleMs: 200,
      });
      await sending;
      expect(result).toMatchObject({ previous: 'g1', generation: 'g2' });
      expect((await maintenance.generations().active()).name).toBe('g2');
      await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!);
      expect((await mailbox.projections.unreadCount('@b')).unread).toBe(31); // the broadcast and the 30 sent meanwhile
      await mailbox.close();
      mailbox = null;
      expect(await snapshotViews(maintenance)).toEqual(await cleanRebuild(path.join(dir, 'events.sqlite')));
    } finally {
      await maintenance.close();
    }
  });
});
