/**
 * The commands that only read the log (`mailbox audit ...`, `mailbox projections status | rebuild`) never create one.
 * Pointed at an empty or mistyped MAILBOX_DATA_DIR (or a sqlite: URL naming no file), they created a new
 * events.sqlite (a new log identity) and views.sqlite there, then answered as if the log were empty: `0 of 0 events
 * shown`, `OK: the live projections match`, a status of a log nobody wrote. Now each refuses with one line naming the
 * file it looked for and what to check, exit code 1 (not found, as `audit replay --json` always did), and the
 * directory is left exactly as it was.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { runRebuildCommand, runStatusCommand, type ProjectionsIo } from '../../src/cli/commands/projections';
import { configFromEnv } from '../../src/config';
import { checkConfig } from '../../src/startupChecks';
import { appendLog, generateLog } from '../contract/projectionStoreLog';
import { capture, runAuditCli as audit } from '../support/auditCli';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { tempDir } from '../support/fixtures';
import { ensureBuilt, runCli } from '../support/builtCli';

type Run = (env: NodeJS.ProcessEnv) => Promise<{ code: number; stdout: string; stderr: string }>;

/** `mailbox projections <command>` as the CLI runs it, with its output and the exit code it set. */
const projections =
  (command: (io: ProjectionsIo) => Promise<void>): Run =>
  async (env) => {
    const out = capture();
    const err = capture();
    process.exitCode = undefined;
    await command({ stdout: out.stream, stderr: err.stream, env });
    const code = Number(process.exitCode ?? 0);
    process.exitCode = undefined;
    return { code, stdout: out.text(), stderr: err.text() };
  };

/**
 * Each with --json: these tests read the refusal's envelope (without it, the refusal is one line, `mailbox: <message>`:
 * test/e2e/toolFailureLine.e2e.test.ts, which runs the text replay's refusals too).
 */
const COMMANDS: Array<[string, Run]> = [
  ['audit replay --json', (env) => audit(['replay', '--no-progress', '--json'], env)],
  ['audit message <id>', (env) => audit(['message', randomUUID(), '--json'], env)],
  ['audit agent @a', (env) => audit(['agent', '@a', '--json'], env)],
  ['audit unwoken', (env) => audit(['unwoken', '--json'], env)],
  ['audit verify', (env) => audit(['verify', '--no-progress', '--json'], env)],
  ['projections status', projections((io) => runStatusCommand(io, { json: true }))],
  ['projections rebuild', projections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0', json: true }))],
];

/**
 * What a command run with `args` said of its refusal: with --json the envelope, else the one line `mailbox: <message>`
 * (checked to be that); the message either way.
 */
function refusal(args: string[], stderr: string): { message: string; envelope: Record<string, unknown> | null } {
  expect(stderr.trim().split('\n')).toHaveLength(1);
  if (args.includes('--json')) {
    const envelope = JSON.parse(stderr) as Record<string, unknown>;
    return { message: String(envelope.message), envelope };
  }
  expect(stderr).toMatch(/^mailbox: [^{]/);
  return { message: stderr.slice('mailbox: '.length).trimEnd(), envelope: null };
}

/** Every path under dir, so that a test sees any file or directory a command left. */
const tree = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((entry) => path.join(dir, entry))
    .sort();

describe.each(COMMANDS)('mailbox %s where there is no log', (_name, run) => {
  let root: string;
  beforeEach(() => {
    root = tempDir('mailbox-read-only-');
  });

  async function refuses(env: NodeJS.ProcessEnv, file: string, check: string) {
    const { code, stdout, stderr } = await run({ MAILBOX_LOG_LEVEL: 'silent', ...env });
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    const error = JSON.parse(stderr);
    expect(error).toMatchObject({ error: 'No event log', code: 'NOT_FOUND', file, field: check });
    expect(error.message).toContain(`There is no event log at ${file}`);
    expect(error.message).toContain(`check ${check}`);
    expect(code).toBe(1);
    return error.message as string;
  }

  test('an empty MAILBOX_DATA_DIR: refused, and nothing is created in it', async () => {
    const dataDir = path.join(root, 'data');
    fs.mkdirSync(dataDir);
    await refuses({ MAILBOX_DATA_DIR: dataDir }, path.join(dataDir, 'events.sqlite'), 'MAILBOX_DATA_DIR');
    expect(tree(root)).toEqual([dataDir]);
  });

  test('a mistyped MAILBOX_DATA_DIR: refused, saying the directory does not exist, and it is not made', async () => {
    const dataDir = path.join(root, 'dta');
    const message = await refuses({ MAILBOX_DATA_DIR: dataDir }, path.join(dataDir, 'events.sqlite'), 'MAILBOX_DATA_DIR');
    expect(message).toContain(`MAILBOX_DATA_DIR is ${dataDir}, a directory that does not exist`);
    expect(tree(root)).toEqual([]);
  });

  test('a sqlite: URL naming no file: refused, naming MAILBOX_EVENTSTORE_URL, and nothing is created', async () => {
    const file = path.join(root, 'log.sqlite');
    await refuses({ MAILBOX_EVENTSTORE_URL: `sqlite:${file}` }, file, 'MAILBOX_EVENTSTORE_URL');
    expect(tree(root)).toEqual([]);
  });
});

/**
 * A MAILBOX_DATA_DIR that is a regular file (or a path under one): these commands said "There is no event log at
 * <file>/events.sqlite", exit 1 (nothing to work on), sending the operator to look for a log that cannot be there.
 * Now each says serve's line for it (the data dir is a file, named), exit 2 as for any configuration serve refuses,
 * and the file is left as it was.
 */
const NOT_A_DIRECTORY = 'a file where the data directory should be\n';

describe.each(COMMANDS)('mailbox %s with MAILBOX_DATA_DIR a file', (_name, run) => {
  test.each([
    ['the file itself', (file: string) => file],
    ['a path under it', (file: string) => path.join(file, 'data')],
  ])("%s: serve's line naming the file, exit 2, the file untouched", async (_case, dataDirOf) => {
    const root = tempDir('mailbox-data-dir-file-');
    const file = path.join(root, 'data');
    fs.writeFileSync(file, NOT_A_DIRECTORY);
    const env = { MAILBOX_LOG_LEVEL: 'silent', MAILBOX_DATA_DIR: dataDirOf(file) };
    expect(await refusedAsServeRefuses(run, env, 'MAILBOX_DATA_DIR')).toBe(
      `MAILBOX_DATA_DIR='${dataDirOf(file)}' cannot be a directory: ${file} is a file; set MAILBOX_DATA_DIR to a directory path.`,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe(NOT_A_DIRECTORY);
    expect(tree(root)).toEqual([file]);
  });
});

test.each([
  ['backup', ['backup', 'copy.sqlite']],
  ['heartbeat --once', ['heartbeat', '--once']],
])(
  'the real CLI: %s with MAILBOX_DATA_DIR a file says so in one line, exit 2, nothing written',
  async (_name, args) => {
    ensureBuilt();
    const root = tempDir('mailbox-data-dir-file-');
    const file = path.join(root, 'data');
    fs.writeFileSync(file, NOT_A_DIRECTORY);
    const { code, stdout, stderr } = await runCli(args, { MAILBOX_DATA_DIR: file }, { cwd: root });
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(
      `MAILBOX_DATA_DIR='${file}' cannot be a directory: ${file} is a file; set MAILBOX_DATA_DIR to a directory path.`,
    );
    expect(code).toBe(2);
    expect(fs.readFileSync(file, 'utf8')).toBe(NOT_A_DIRECTORY);
    expect(tree(root)).toEqual([file]); // no copy.sqlite
  },
  120_000,
);

/**
 * A log file that is no SQLite database (notes saved under its name, a half-copied file): the commands that read it
 * said {"error":"Audit failed","code":"INTERNAL","message":"file is not a database"} (or "Projections command failed"),
 * naming neither the file nor a remedy, while serve refuses the same file in one line. Now each says serve's sentence
 * with a reader's remedies, exit code 2, and the file and its directory are left as they were.
 */
const NOT_A_LOG = 'these are notes, not an event log\n';

describe.each(COMMANDS)('mailbox %s on a log that is not a SQLite database', (_name, run) => {
  test('one line naming the file, that it is no SQLite database, and what to do; exit 2; the file untouched', async () => {
    const dataDir = tempDir('mailbox-not-a-log-');
    const log = path.join(dataDir, 'events.sqlite');
    fs.writeFileSync(log, NOT_A_LOG);
    const { code, stdout, stderr } = await run({ MAILBOX_LOG_LEVEL: 'silent', MAILBOX_DATA_DIR: dataDir });
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(stderr)).toEqual({
      error: 'Event log unreadable',
      code: 'UNAVAILABLE',
      field: 'MAILBOX_DATA_DIR',
      file: log,
      message:
        `MAILBOX_DATA_DIR='${dataDir}': the event log ${log} cannot be read as a SQLite database (SQLite: file is not a ` +
        'database): it is damaged, or not a log at all. Restore it from a backup (mailbox backup writes one), or point ' +
        'MAILBOX_DATA_DIR at the data directory the server uses. Nothing was read or changed.',
    });
    expect(code).toBe(2);
    expect(fs.readFileSync(log, 'utf8')).toBe(NOT_A_LOG);
    expect(tree(dataDir)).toEqual([log]); // no -wal, -shm or views file made beside it
  });
});

test('the real CLI (bin/mailbox.js, built) says it alike: audit replay --json on a text file, exit 2', async () => {
  ensureBuilt();
  const dataDir = tempDir('mailbox-not-a-log-');
  const log = path.join(dataDir, 'events.sqlite');
  fs.writeFileSync(log, NOT_A_LOG);
  const { code, stdout, stderr } = await runCli(['audit', 'replay', '--json'], { MAILBOX_DATA_DIR: dataDir });
  expect(stdout).toBe('');
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(JSON.parse(stderr)).toMatchObject({ error: 'Event log unreadable', code: 'UNAVAILABLE', file: log });
  expect(JSON.parse(stderr).message).toContain(`the event log ${log} cannot be read as a SQLite database`);
  expect(code).toBe(2);
  expect(tree(dataDir)).toEqual([log]);
}, 120_000); // a first build of dist (ensureBuilt) takes its time on a loaded machine

/**
 * MAILBOX_EVENTSTORE_URL=memory: names a log that lives only in the server's process: these commands, in a process of
 * their own, read a new, always empty one and answered from it (`0 of 0 events shown`, `OK` from verify, exit 0). Now
 * each refuses with one line saying so and teaching the remedy (--url to the running server where the command has
 * it; a SQLite or EventStoreDB log), exit 1 as for a missing log, before opening anything (Redis included).
 */
const READS_OVER_HTTP = new Set(['audit replay --json', 'audit message <id>', 'audit agent @a', 'audit unwoken']);

describe.each(COMMANDS)('mailbox %s with MAILBOX_EVENTSTORE_URL=memory:', (name, run) => {
  test.each([
    ['views in memory', {}],
    ['views in Redis', { MAILBOX_REDIS_URL: 'redis://127.0.0.1:9' }],
  ])('%s: refused (the log lives only in the server), exit 1, nothing created', async (_views, extra) => {
    const dataDir = tempDir('mailbox-memory-log-');
    const { code, stdout, stderr } = await run({
      MAILBOX_LOG_LEVEL: 'silent',
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_EVENTSTORE_URL: 'memory:',
      ...extra,
    });
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    const error = JSON.parse(stderr);
    expect(error).toMatchObject({ error: 'No event log', code: 'NOT_FOUND', field: 'MAILBOX_EVENTSTORE_URL' });
    expect(error.message).toMatch(
      /^MAILBOX_EVENTSTORE_URL is memory:, a log that lives only in the memory of the server that writes it: this command runs in a process of its own, where that log is out of reach and a memory log is always empty\. /,
    );
    expect(error.message).toContain('a log this process can read: SQLite (unset MAILBOX_EVENTSTORE_URL');
    if (READS_OVER_HTTP.has(name)) {
      expect(error.message).toContain('Point --url at the running server with an auditor or admin token (MAILBOX_AUDIT_TOKEN)');
    } else {
      expect(error.message).not.toContain('--url'); // verify and projections cannot read the log over HTTP
    }
    expect(code).toBe(1);
    expect(tree(dataDir)).toEqual([]);
  });
});

/**
 * A configuration `mailbox serve` refuses (MAILBOX_VIEWS=sqlite with a log in memory, a sqlite: URL that names no file,
 * a value out of range) came out of these commands as {"error":"Audit failed","code":"INTERNAL"} (or "Projections
 * command failed"), or, for the URL naming no file, as INTERNAL 'unable to open database file': a configuration error
 * read as a bug of the mailbox. Now it is the VALIDATION_FAILED envelope with serve's own words for the same
 * environment and the variable as field, exit code 2 (as serve's), before anything is opened or created.
 */
const REFUSED_CONFIGURATIONS: Array<[string, Record<string, string>, string]> = [
  [
    'MAILBOX_VIEWS=sqlite with MAILBOX_EVENTSTORE_URL=memory:',
    { MAILBOX_VIEWS: 'sqlite', MAILBOX_EVENTSTORE_URL: 'memory:' },
    'MAILBOX_VIEWS',
  ],
  ['MAILBOX_EVENTSTORE_URL=sqlite: (no file)', { MAILBOX_EVENTSTORE_URL: 'sqlite:' }, 'MAILBOX_EVENTSTORE_URL'],
  ['MAILBOX_PROJECTOR_LEASE_MS=10', { MAILBOX_PROJECTOR_LEASE_MS: '10' }, 'MAILBOX_PROJECTOR_LEASE_MS'],
  // A CA file that cannot be used was read at the first connection: INTERNAL ENOENT (or "Redis is unreachable").
  [
    'MAILBOX_REDIS_TLS_CA_FILE missing',
    { MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9', MAILBOX_REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' },
    'MAILBOX_REDIS_TLS_CA_FILE',
  ],
  [
    'MAILBOX_REDIS_TLS_CA_FILE a directory',
    { MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9', MAILBOX_REDIS_TLS_CA_FILE: __dirname },
    'MAILBOX_REDIS_TLS_CA_FILE',
  ],
  [
    'MAILBOX_REDIS_TLS_CA_FILE not PEM',
    { MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9', MAILBOX_REDIS_TLS_CA_FILE: __filename },
    'MAILBOX_REDIS_TLS_CA_FILE',
  ],
  // An empty secret file was taken as unset.
  ['MAILBOX_ADMIN_TOKEN_FILE empty', { MAILBOX_ADMIN_TOKEN_FILE: '/dev/null' }, 'MAILBOX_ADMIN_TOKEN_FILE'],
  ['MAILBOX_RATE_LIMIT_BURST=0', { MAILBOX_RATE_LIMIT_BURST: '0' }, 'MAILBOX_RATE_LIMIT_BURST'],
];

/** What `mailbox serve` prints for this environment (after 'mailbox: '): its configuration checks, before it opens anything. */
function serveRefuses(env: NodeJS.ProcessEnv): string {
  try {
    checkConfig(configFromEnv(env));
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('serve accepts this configuration');
}

/** The command's refusal of `env`: one envelope line, a configuration error in serve's words naming `field`, exit 2. */
async function refusedAsServeRefuses(run: Run, env: NodeJS.ProcessEnv, field: string): Promise<string> {
  const { code, stdout, stderr } = await run(env);
  expect(stdout).toBe('');
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(JSON.parse(stderr)).toEqual({
    error: 'Invalid configuration',
    code: 'VALIDATION_FAILED',
    message: serveRefuses(env),
    field,
  });
  expect(code).toBe(2);
  return JSON.parse(stderr).message as string;
}

describe.each(COMMANDS)('mailbox %s with a configuration mailbox serve refuses', (_name, run) => {
  test.each(REFUSED_CONFIGURATIONS)(
    "%s: the configuration error in serve's words, exit 2, nothing created",
    async (_case, bad, field) => {
      const dataDir = tempDir('mailbox-bad-config-');
      const env = { MAILBOX_LOG_LEVEL: 'silent', MAILBOX_DATA_DIR: dataDir, ...bad };
      const message = await refusedAsServeRefuses(run, env, field);
      // A file named by the variable is named in the message (the CA file, the secret file).
      for (const value of Object.values(bad)) if (value.startsWith('/')) expect(message).toContain(`'${value}'`);
      expect(tree(dataDir)).toEqual([]);
    },
  );
});

/**
 * A log but no views file (the server never started on it, or the file was deleted while it was stopped): `projections
 * status` and `audit verify` created an empty views.sqlite, and status said `viewsOfThisLog: false` (as if the views
 * were another log's) and, on an empty log, `upToDate: true`. Now neither creates anything; status says there are no
 * views yet (viewsBuilt: false, and a note), verify that there are none to verify. Views of another log are never
 * up to date with this one.
 */
describe('a log with no views, or views of another log: status and verify say no more than is true, and create nothing', () => {
  let dataDir: string;
  let logIdentity: string;
  const env = () => ({ MAILBOX_LOG_LEVEL: 'silent', MAILBOX_DATA_DIR: dataDir });
  const status = projections(runStatusCommand);

  /** A log of `events` events in a fresh data dir, and nothing else. */
  async function logOf(events: number) {
    dataDir = tempDir('mailbox-no-views-');
    const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    if (events > 0) await appendLog(log, generateLog(events));
    logIdentity = await log.logIdentity();
    await log.close();
    expect(tree(dataDir)).toEqual([path.join(dataDir, 'events.sqlite')]);
  }

  const noViews = (logHead: unknown, activeGeneration: string | null, holds: string) => ({
    file: path.join(dataDir, 'views.sqlite'),
    viewsBuilt: false,
    activeGeneration,
    checkpoint: null,
    logHead,
    upToDate: false,
    viewsLogIdentity: null,
    logIdentity,
    viewsOfThisLog: null,
    liveWriter: null,
    note:
      `no views yet: ${holds}; the server (mailbox serve) builds them from the log at its next start` +
      // A log with events and no views file: a server may keep its views in Redis (status run without its
      // MAILBOX_REDIS_URL said only "no views yet") or in memory.
      (logHead !== null && holds === 'there is no views file'
        ? ', unless it keeps them elsewhere: in Redis (give this command the MAILBOX_REDIS_URL the server has) or in ' +
          'its memory (MAILBOX_VIEWS=memory: no views file is kept)'
        : ''),
  });

  test.each([
    ['with events', 30],
    ['empty', 0],
  ])('projections status, the log %s: says there are no views yet, and creates no views file', async (_name, events) => {
    await logOf(events);
    const before = tree(dataDir);
    const { code, stdout, stderr } = await status(env());
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const said = JSON.parse(stdout);
    expect(said).toEqual(noViews(events === 0 ? null : expect.stringMatching(/^\d+$/), null, 'there is no views file'));
    expect(tree(dataDir)).toEqual(before);
  });

  test('projections status on a views file that holds no views of any log: no views yet either (not "another log\'s")', async () => {
    await logOf(0);
    await SqliteProjectionStore.open(path.join(dataDir, 'views.sqlite'), new InProcessWakeBus()).close(); // as old readers left it
    const { code, stdout } = await status(env());
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(noViews(null, 'g1', 'the views file holds none, of any log'));
  });

  /**
   * The same views file (empty, of no log, as older readers left it): status says no views yet, but verify compared
   * it with the log (drift on a log with events, 'OK' on an empty one). It is refused as a missing file is.
   */
  test.each([
    ['with events, text', 30, ['verify', '--no-progress']],
    ['with events, --json', 30, ['verify', '--json', '--no-progress']],
    ['empty', 0, ['verify', '--no-progress']],
  ])(
    'audit verify on a views file that holds no views of any log, the log %s: no views to verify, exit 1, nothing written',
    async (_name, events, args) => {
      await logOf(events);
      const file = path.join(dataDir, 'views.sqlite');
      await SqliteProjectionStore.open(file, new InProcessWakeBus()).close(); // as old readers left it
      const before = tree(dataDir);
      const bytes = fs.readFileSync(file);
      const { code, stdout, stderr } = await audit(args, env());
      expect(stdout).toBe('');
      const message =
        `There are no views to verify: the SQLite views file ${file} holds none, of any log (no server has built ` +
        'them since the file was created). The server (mailbox serve) builds the views from the log at its next ' +
        'start; verify them after that. Nothing was written.';
      const said = refusal(args, stderr);
      expect(said.message).toBe(message);
      if (said.envelope) expect(said.envelope).toEqual({ error: 'No views', code: 'NOT_FOUND', file, message });
      expect(code).toBe(1);
      expect(tree(dataDir)).toEqual(before);
      expect(fs.readFileSync(file).equals(bytes)).toBe(true);
      expect(JSON.parse((await status(env())).stdout).note).toMatch(/^no views yet: the views file holds none, of any log;/);
    },
  );

  test("projections status once the views are this log's: built, this log's, up to date, no note", async () => {
    await logOf(30);
    const rebuilt = await projections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0' }))(env());
    expect(rebuilt.code).toBe(0);
    const { code, stdout } = await status(env());
    expect(code).toBe(0);
    const said = JSON.parse(stdout);
    expect(said).toEqual({
      file: path.join(dataDir, 'views.sqlite'),
      viewsBuilt: true,
      activeGeneration: 'g2',
      checkpoint: said.logHead,
      logHead: expect.stringMatching(/^\d+$/),
      upToDate: true,
      viewsLogIdentity: logIdentity,
      logIdentity,
      viewsOfThisLog: true,
      liveWriter: null,
    });
  });

  test("projections status on another log's views: never up to date with this log, even where both are empty", async () => {
    await logOf(0);
    const other = dataDir;
    expect((await projections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0' }))(env())).code).toBe(0);
    const otherIdentity = logIdentity;
    await logOf(0);
    fs.copyFileSync(path.join(other, 'views.sqlite'), path.join(dataDir, 'views.sqlite'));
    const { code, stdout } = await status(env());
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      viewsBuilt: true,
      checkpoint: null,
      logHead: null,
      upToDate: false,
      viewsLogIdentity: otherIdentity,
      viewsOfThisLog: false,
    });
  });

  test.each([
    ['text', ['verify', '--no-progress']],
    ['--json', ['verify', '--json', '--no-progress']],
  ])('audit verify (%s): no views to verify, exit 1, and no views file is created', async (_name, args) => {
    await logOf(30);
    const before = tree(dataDir);
    const { code, stdout, stderr } = await audit(args, env());
    expect(stdout).toBe('');
    const file = path.join(dataDir, 'views.sqlite');
    const message =
      `There are no views to verify: the SQLite views file ${file} does not exist (no server has started on this log, ` +
      "the file was deleted while it was stopped, or the server keeps its views in Redis: run this with the server's " +
      'MAILBOX_REDIS_URL). The server (mailbox serve) builds the views from the log at its next start; verify them ' +
      'after that. Nothing was created.';
    const said = refusal(args, stderr);
    expect(said.message).toBe(message);
    if (said.envelope) expect(said.envelope).toEqual({ error: 'No views', code: 'NOT_FOUND', file, message });
    expect(code).toBe(1);
    expect(tree(dataDir)).toEqual(before);
  });
  /**
   * Views of another log, or ahead of this log's head (the log was replaced by an older copy): verify diffed them
   * against this log and listed every view as drift, exit 1, as if this log's views had gone wrong. Now it checks
   * whose views they are first and says so in one line with the server's remedy, exit 1, no drift list, nothing written.
   */
  const rebuild = projections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0' }));

  async function refusesViewsNotOfThisLog(args: string[], viewsOf: string, what: RegExp) {
    const before = tree(dataDir);
    const file = path.join(dataDir, 'views.sqlite');
    const bytes = fs.readFileSync(file);
    const { code, stdout, stderr } = await audit(args, env());
    expect(stdout).toBe(''); // no drift list, no summary
    const said = refusal(args, stderr);
    expect(said.message).toMatch(what);
    if (said.envelope)
      expect(said.envelope).toEqual({
        error: 'Views of another log',
        code: 'FOREIGN_VIEWS',
        location: `the SQLite views file ${file}`,
        viewsOf,
        logIdentity,
        message: said.message,
      });
    expect(said.message).toContain(
      ': not verified (compared with this log, every view would differ; that is not drift). Move the views file away ' +
        '(it is then rebuilt from this log at start), or take it over (rebuilds the views from this log into a fresh ' +
        'generation, once no projector of the other log is live): `mailbox projections rebuild --take-over`, or start ' +
        'with MAILBOX_PROJECTIONS_ON_FOREIGN=take-over.',
    );
    expect(code).toBe(1);
    expect(tree(dataDir)).toEqual(before);
    expect(fs.readFileSync(file).equals(bytes)).toBe(true);
  }

  test.each([
    ['text', ['verify', '--no-progress']],
    ['--json', ['verify', '--json', '--no-progress']],
  ])(
    "audit verify (%s) on another log's views: says whose they are and the remedy, exit 1, no drift list",
    async (_name, args) => {
      await logOf(30);
      expect((await rebuild(env())).code).toBe(0);
      const other = dataDir;
      const otherIdentity = logIdentity;
      await logOf(30);
      fs.copyFileSync(path.join(other, 'views.sqlite'), path.join(dataDir, 'views.sqlite'));
      await refusesViewsNotOfThisLog(
        args,
        otherIdentity,
        new RegExp(
          `^The views in the SQLite views file \\S+ belong to another event log \\(${otherIdentity}\\), not to this one \\(${logIdentity}\\): not verified`,
        ),
      );
    },
  );

  test("audit verify on views ahead of this log's head (an older copy of the log put back): says so, exit 1", async () => {
    await logOf(0);
    const log = path.join(dataDir, 'events.sqlite');
    const olderCopy = path.join(dataDir, '..', `${path.basename(dataDir)}-older.sqlite`);
    fs.copyFileSync(log, olderCopy); // the same log (same identity), before its events
    const store = SqliteEventStore.open(log);
    await appendLog(store, generateLog(30));
    await store.close();
    expect((await rebuild(env())).code).toBe(0);
    fs.copyFileSync(olderCopy, log);
    fs.rmSync(olderCopy);
    await refusesViewsNotOfThisLog(
      ['verify', '--no-progress'],
      logIdentity,
      new RegExp(
        `^The views in the SQLite views file \\S+ stand at log position \\d+, ahead of this event log's head \\(empty; log ${logIdentity}\\): ` +
          'the log was replaced or lost events: not verified',
      ),
    );
  });
});

/**
 * A views file the commands cannot open: damaged (garbage written into it while no server runs), or locked by another
 * process. The store refused it at open with a line saying what to do, but these commands printed that line (or
 * SQLite's bare 'database is locked') as {"error":"Audit failed"|"Projections command failed","code":"INTERNAL"}, as
 * if the mailbox had a bug. Now the refusal is said as itself, exit code 2 (as serve's), and the file is left where
 * and as it was: a reader never moves it aside (the server does, at its next start).
 */
describe.each(COMMANDS.filter(([name]) => /^(audit verify|projections)/.test(name)))(
  'mailbox %s on a views file it cannot open',
  (_name, run) => {
    let dataDir: string;
    let file: string;
    beforeEach(async () => {
      dataDir = tempDir('mailbox-views-unopenable-');
      const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
      await appendLog(log, generateLog(5));
      await log.close();
      file = path.join(dataDir, 'views.sqlite');
    });
    const env = () => ({ MAILBOX_LOG_LEVEL: 'silent', MAILBOX_DATA_DIR: dataDir });

    test('damaged: "Views file damaged" with the remedy, exit 2, and the file neither changed nor moved', async () => {
      fs.writeFileSync(file, Buffer.alloc(8192, 'garbage!'));
      const before = tree(dataDir);
      const { code, stdout, stderr } = await run(env());
      expect(stdout).toBe('');
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(stderr)).toEqual({
        error: 'Views file damaged',
        code: 'UNAVAILABLE',
        viewsFile: file,
        message:
          `The views file ${file} is damaged (file is not a database); restart the mailbox server first: ` +
          'it moves the file aside and rebuilds the views from the event log.',
      });
      expect(code).toBe(2);
      expect(tree(dataDir)).toEqual(before);
      expect(fs.readFileSync(file).equals(Buffer.alloc(8192, 'garbage!'))).toBe(true);
    });

    test('locked by another process: "Views file locked", exit 2, nothing changed', async () => {
      expect((await projections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0' }))(env())).code).toBe(0);
      const holder = openSqliteDatabase(file);
      holder.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
      try {
        const before = tree(dataDir);
        // A lock that is never released: the wait for it is made short (each case waited SQLite's 5 s busy wait).
        const started = performance.now();
        const { code, stdout, stderr } = await run({ ...env(), MAILBOX_VIEWS_LOCK_WAIT_MS: '50' });
        expect(performance.now() - started).toBeLessThan(4_000); // well under the 5 s of the default wait
        expect(stdout).toBe('');
        expect(stderr.trim().split('\n')).toHaveLength(1);
        expect(JSON.parse(stderr)).toEqual({
          error: 'Views file locked',
          code: 'UNAVAILABLE',
          viewsFile: file,
          message:
            `The views file ${file} is locked by another process (database is locked): a process holds it in ` +
            'exclusive mode, or in a write that outlasted the 50 ms wait (MAILBOX_VIEWS_LOCK_WAIT_MS); stop that ' +
            'process or let it finish, then try again. Nothing was changed.',
        });
        expect(code).toBe(2);
        expect(tree(dataDir)).toEqual(before);
      } finally {
        holder.close();
      }
    });
  },
);
