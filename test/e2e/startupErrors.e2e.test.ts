/**
 * `mailbox serve` as an operator runs it: every startup failure prints one line on stderr naming
 * the variable, the bad value and the fix, exits with code 2, and creates nothing (no admin token
 * generated, no log opened) because all configuration is checked first. Unreachable Redis and
 * EventStoreDB are retried with backoff (said in the log) for MAILBOX_STARTUP_RETRY_MS.
 */
import type * as ChildProcess from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ensureBuilt, runCli, type CliRun } from '../support/builtCli';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { freePort, spawnRedis, stopChild } from '../support/redisServer';
import { makeReadOnly, READ_ONLY_SKIPPED } from '../support/readOnlyFile';
import { startedOnce } from '../support/startedOnce';
import { startRedisSentinel } from '../support/redisTopologies';

let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-startup-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const listening = (server: net.Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
const closed = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A loopback port nobody listens on. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  const port = await listening(server);
  await closed(server);
  return port;
}

async function serve(name: string, env: Record<string, string>, timeoutMs?: number): Promise<CliRun & { dataDir: string }> {
  const dataDir = path.join(root, name);
  const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', ...env }, { timeoutMs });
  return { ...run, dataDir };
}

function expectOneLine(run: CliRun & { dataDir: string }, variable: string, ...mentions: string[]) {
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^mailbox: /);
  expect(lines[0]).toContain(variable);
  for (const mention of mentions) expect(lines[0]).toContain(mention);
  expect(lines[0]).not.toMatch(/\n\s+at /);
  expect(run.code).toBe(2);
  // Nothing was created: no admin token generated and printed, no log opened.
  expect(fs.existsSync(run.dataDir)).toBe(false);
  expect(run.stdout).not.toContain('Admin token');
}

test.concurrent.each([
  ['port-abc', { MAILBOX_PORT: 'abc' }, 'MAILBOX_PORT', ["'abc'", '0..65535']],
  ['port-blank', { MAILBOX_PORT: ' ' }, 'MAILBOX_PORT', ['blank', '0..65535']],
  // Number() reads hex and exponents: 0x1DB1 bound port 7601, 1e3 made a 1000 ms sweep. Decimal digits only.
  ['port-hex', { MAILBOX_PORT: '0x1DB1' }, 'MAILBOX_PORT', ["'0x1DB1'", '0..65535', 'written in plain decimal digits']],
  ['sweep-exponent', { MAILBOX_TASK_SWEEP_MS: '1e3' }, 'MAILBOX_TASK_SWEEP_MS', ["'1e3'", 'written in plain decimal digits']],
  ['token-short', { MAILBOX_ADMIN_TOKEN: 'short' }, 'MAILBOX_ADMIN_TOKEN', ['5 characters', '32 or more characters']],
  // 16 characters were accepted: 64 bits at best, for the one credential that registers every agent and is not rate-limited.
  [
    'token-16',
    { MAILBOX_ADMIN_TOKEN: '0123456789abcdef' },
    'MAILBOX_ADMIN_TOKEN',
    ['(16 characters, not shown)', '32 or more characters', '`openssl rand -hex 32`', 'or unset it to generate one'],
  ],
  ['token-31', { MAILBOX_ADMIN_TOKEN: 'x'.repeat(31) }, 'MAILBOX_ADMIN_TOKEN', ['(31 characters, not shown)', '32 or more']],
  ['token-blank', { MAILBOX_ADMIN_TOKEN: '                    ' }, 'MAILBOX_ADMIN_TOKEN', ['blank', '32 or more characters']],
  ['host-bad', { MAILBOX_HOST: '999.1.1.1' }, 'MAILBOX_HOST', ["'999.1.1.1'", '127.0.0.1']],
  ['host-not-local', { MAILBOX_HOST: '192.0.2.1' }, 'MAILBOX_HOST', ["'192.0.2.1'", 'not an address of this machine']],
  [
    'store-sqlite-empty',
    { MAILBOX_EVENTSTORE_URL: 'sqlite:' },
    'MAILBOX_EVENTSTORE_URL',
    ["'sqlite:'", 'sqlite:<path to a file>'],
  ],
  ['store-unsupported', { MAILBOX_EVENTSTORE_URL: 'postgres://x' }, 'MAILBOX_EVENTSTORE_URL', ['esdb://host:2113']],
  ['redis-url-bad', { MAILBOX_REDIS_URL: 'localhost:6379' }, 'MAILBOX_REDIS_URL', ['redis://host:6379']],
  ['strict-typo', { MAILBOX_STRICT_RECIPIENTS: 'ture' }, 'MAILBOX_STRICT_RECIPIENTS', ["'ture'", 'true or false']],
  ['level-typo', { MAILBOX_LOG_LEVEL: 'verbose' }, 'MAILBOX_LOG_LEVEL', ["'verbose'", 'debug']],
  // The in-process heartbeat's switch read anything but 1/true/yes/on as off, unsaid; it is read as every boolean is.
  ['heartbeat-enabled', { MAILBOX_HEARTBEAT: 'enabled' }, 'MAILBOX_HEARTBEAT', ["'enabled'", 'true or false']],
  ['heartbeat-maybe', { MAILBOX_HEARTBEAT: 'maybe' }, 'MAILBOX_HEARTBEAT', ["'maybe'", 'true or false']],
  ['heartbeat-2', { MAILBOX_HEARTBEAT: '2' }, 'MAILBOX_HEARTBEAT', ["'2'", 'true or false']],
  // A burst of 0 turned the rate limit off, unsaid: MAILBOX_RATE_LIMIT_PER_SECOND=0 is the one way to.
  [
    'burst-zero',
    { MAILBOX_RATE_LIMIT_BURST: '0' },
    'MAILBOX_RATE_LIMIT_BURST',
    ["'0'", '1 or more', 'MAILBOX_RATE_LIMIT_PER_SECOND=0'],
  ],
  // A CA file that cannot be used was read at the first connection: a stack trace, exit code 1 (or "unreachable").
  [
    'redis-ca-missing',
    { MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9', MAILBOX_REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' },
    'MAILBOX_REDIS_TLS_CA_FILE',
    ["'/nonexistent/ca.pem' does not exist", 'a PEM file'],
  ],
  [
    'redis-ca-directory',
    { MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9', MAILBOX_REDIS_TLS_CA_FILE: __dirname },
    'MAILBOX_REDIS_TLS_CA_FILE',
    [`'${__dirname}' is a directory`],
  ],
  [
    'redis-ca-not-pem',
    { MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9', MAILBOX_REDIS_TLS_CA_FILE: __filename },
    'MAILBOX_REDIS_TLS_CA_FILE',
    [`'${__filename}' holds no PEM certificate`],
  ],
])('%s: one line naming the variable, exit code 2, nothing created', async (name, env, variable, mentions) => {
  expectOneLine(await serve(name, env), variable, ...mentions);
});

test.concurrent(
  'an admin token file (MAILBOX_ADMIN_TOKEN_FILE) of 16 characters: one line naming it, the length and the remedy',
  async () => {
    const file = path.join(root, 'admin-token-16');
    fs.writeFileSync(file, '0123456789abcdef\n');
    const run = await serve('token-file-16', { MAILBOX_ADMIN_TOKEN_FILE: file });
    expectOneLine(run, 'MAILBOX_ADMIN_TOKEN_FILE', `'${file}'`, '16 characters', '32 or more characters', 'openssl rand -hex 32');
    expect(run.stderr).not.toContain('0123456789abcdef');
  },
);

test.concurrent(
  'a stored admin token (<data dir>/admin.token) under 32 characters: one line naming the file, exit 2, no log made',
  async () => {
    const dataDir = path.join(root, 'stored-short');
    fs.mkdirSync(dataDir, { mode: 0o700 });
    fs.writeFileSync(path.join(dataDir, 'admin.token'), '0123456789abcdef0123\n', { mode: 0o600 });
    const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
    expect(run.stderr.trimEnd()).toBe(
      `mailbox: ${path.join(dataDir, 'admin.token')} holds an admin token of 20 characters, under the 32 required: delete ` +
        'the file to generate a new one, or write one of 32 or more characters in it (e.g. the output of `openssl rand -hex 32`).',
    );
    expect(run.code).toBe(2);
    expect(fs.readdirSync(dataDir)).toEqual(['admin.token']); // no log, no views: nothing created
    expect(run.stdout).not.toContain('mailbox listening');
  },
);

// A directory there was a stack trace (EISDIR from readFileSync); a link to nothing was taken for no file, a token
// generated, and its write then failed (EEXIST, then ENOENT reading it back): a stack trace too.
test.concurrent.each([
  ['a directory', (file: string) => fs.mkdirSync(file), 'EISDIR: it is a directory'],
  [
    'a link to nothing',
    (file: string) => fs.symlinkSync(path.join(root, 'no-such-token'), file),
    'ENOENT: it is a link to nothing',
  ],
])(
  'a stored admin token (<data dir>/admin.token) that is %s: one line naming the file, exit 2, nothing created',
  async (kind, make, why) => {
    const dataDir = path.join(root, `stored-${kind.replace(/ /g, '-')}`);
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const file = path.join(dataDir, 'admin.token');
    make(file);
    const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
    expect(run.stderr.trimEnd()).toBe(
      `mailbox: ${file} cannot be read (${why}), and it is where the admin token is kept: move it aside to generate a new ` +
        'one at this start, make it a readable file holding the token, or set MAILBOX_ADMIN_TOKEN to the admin token ' +
        '(e.g. the output of `openssl rand -hex 32`).',
    );
    expect(run.code).toBe(2);
    expect(fs.readdirSync(dataDir)).toEqual(['admin.token']); // no log, no views: nothing created
    expect(run.stdout).toBe('');
  },
);

test.concurrent(
  'heartbeat --once with a CA file that cannot be used: the line serve prints, exit code 2 (it was INTERNAL ENOENT)',
  async () => {
    const dataDir = path.join(root, 'heartbeat-ca');
    const run = await runCli(['heartbeat', '--once'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_REDIS_URL: 'rediss://127.0.0.1:9',
      MAILBOX_REDIS_TLS_CA_FILE: '/nonexistent/ca.pem',
    });
    expectOneLine({ ...run, dataDir }, 'MAILBOX_REDIS_TLS_CA_FILE', "'/nonexistent/ca.pem' does not exist");
    expect(run.stderr).not.toContain('INTERNAL');
  },
);

test.concurrent.each([
  ['empty', '', 'is empty'],
  ['a newline alone', '\n', 'is empty'],
  ['spaces', '    \n', 'is blank (only spaces)'],
])(
  'MAILBOX_ADMIN_TOKEN_FILE %s (a Docker secret never populated): one line naming the variable and the file, no token generated',
  async (name, content, said) => {
    const file = path.join(root, `admin-token-${name.replace(/\W+/g, '-')}`);
    fs.writeFileSync(file, content);
    const run = await serve(`token-file-${name.replace(/\W+/g, '-')}`, { MAILBOX_ADMIN_TOKEN_FILE: file });
    expectOneLine(run, 'MAILBOX_ADMIN_TOKEN_FILE', `MAILBOX_ADMIN_TOKEN_FILE='${file}' ${said}`);
    expect(run.stderr).not.toMatch(/MAILBOX_ADMIN_TOKEN[^_]/);
  },
);

test.concurrent(
  'MAILBOX_ADMIN_TOKEN_FILE holding a token too short: one line naming the file variable and the file',
  async () => {
    const file = path.join(root, 'admin-token-short');
    fs.writeFileSync(file, 'short\n');
    const run = await serve('token-file-short', { MAILBOX_ADMIN_TOKEN_FILE: file });
    expectOneLine(run, 'MAILBOX_ADMIN_TOKEN_FILE', `MAILBOX_ADMIN_TOKEN_FILE='${file}' holds (5 characters, not shown)`, '32');
  },
);

describe('admin commands: where the admin token comes from', () => {
  test.concurrent(
    'MAILBOX_ADMIN_TOKEN_FILE that cannot be read: one line naming it, exit code 2 (not ./data/admin.token instead)',
    async () => {
      const cwd = tempDir('mailbox-admin-cli-');
      fs.mkdirSync(path.join(cwd, 'data'));
      fs.writeFileSync(path.join(cwd, 'data', 'admin.token'), 'a-stored-admin-token-0123456789ab\n');
      const run = await runCli(
        ['agent', 'add', '@x'],
        { MAILBOX_URL: `http://127.0.0.1:${await deadPort()}`, MAILBOX_ADMIN_TOKEN_FILE: '/nonexistent/admin_token' },
        { cwd },
      );
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        "mailbox: MAILBOX_ADMIN_TOKEN_FILE='/nonexistent/admin_token' cannot be read (ENOENT): set it to a readable file " +
          'holding the secret (e.g. /run/secrets/<name>), or unset it.',
      ]);
    },
  );

  test.concurrent('no admin token anywhere: agent add says where it looked', async () => {
    const cwd = tempDir('mailbox-admin-cli-');
    const run = await runCli(['agent', 'add', '@x'], { MAILBOX_URL: `http://127.0.0.1:${await deadPort()}` }, { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const message = run.stderr.trimEnd();
    expect(message).toMatch(/^error: No admin token: /);
    for (const place of ['--token', 'MAILBOX_TOKEN', 'MAILBOX_ADMIN_TOKEN', 'MAILBOX_ADMIN_TOKEN_FILE', 'MAILBOX_DATA_DIR']) {
      expect(message).toContain(place);
    }
    expect(message).toContain(`no ${path.join(fs.realpathSync(cwd), 'data', 'admin.token')}`);
  });

  test.concurrent.each([
    ['empty', (file: string) => fs.writeFileSync(file, '\n'), 'is empty'],
    ['a directory', (file: string) => fs.mkdirSync(file), 'cannot be read (EISDIR)'],
  ])('./data/admin.token %s: agent add names the file and what is wrong with it', async (_kind, make, why) => {
    const cwd = tempDir('mailbox-admin-cli-');
    fs.mkdirSync(path.join(cwd, 'data'));
    const file = path.join(fs.realpathSync(cwd), 'data', 'admin.token');
    make(file);
    const run = await runCli(['agent', 'add', '@x'], { MAILBOX_URL: `http://127.0.0.1:${await deadPort()}` }, { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const message = run.stderr.trimEnd();
    const opening = `error: No admin token: ${file} ${why}. `;
    expect(message.slice(0, opening.length)).toBe(opening);
    expect(message).toContain('--token');
    expect(message).not.toContain('No token: pass --token'); // the generic line sent users looking for a flag
  });
});

test.concurrent('MAILBOX_DATA_DIR under a file: one line naming the file', async () => {
  const file = path.join(root, 'plain-file');
  fs.writeFileSync(file, 'not a directory');
  const run = await serve('unused', { MAILBOX_DATA_DIR: path.join(file, 'data') });
  expectOneLine({ ...run, dataDir: path.join(file, 'data') }, 'MAILBOX_DATA_DIR', `${file} is a file`);
});

test.concurrent(
  'MAILBOX_DATA_DIR through a link to nothing (a volume not mounted): one line naming the link and its target',
  async () => {
    const link = path.join(root, 'volume-link');
    const target = path.join(root, 'volume-not-mounted', 'mailbox');
    fs.symlinkSync(target, link);
    const dataDir = path.join(link, 'data');
    const run = await serve('unused', { MAILBOX_DATA_DIR: dataDir });
    expectOneLine({ ...run, dataDir }, 'MAILBOX_DATA_DIR', `${link} is a link to ${target}, which does not exist`);
    expect(fs.existsSync(path.join(root, 'volume-not-mounted'))).toBe(false);
  },
);

// Node's recursive mkdir spun there forever at full CPU, deaf to SIGTERM, printing nothing (runCli kills it at 45 s).
const withProc = fs.existsSync('/proc/self') ? test.concurrent : test.concurrent.skip;
withProc('a data dir or log where no directory can be made (/proc): one line, exit code 2', async () => {
  const dataDir = '/proc/mailbox-startup-test';
  const url = 'sqlite:/proc/mailbox-startup-test/events.sqlite';
  const [dataDirRun, run] = await Promise.all([
    serve('unused', { MAILBOX_DATA_DIR: dataDir }),
    serve('proc-log', { MAILBOX_EVENTSTORE_URL: url, MAILBOX_ADMIN_TOKEN: 'a-token-of-thirty-two-characters' }),
  ]);
  expectOneLine({ ...dataDirRun, dataDir }, 'MAILBOX_DATA_DIR', `cannot create the directory ${dataDir}`);
  expectOneLine(run, 'MAILBOX_EVENTSTORE_URL', `'${url}'`, 'cannot create the directory /proc/mailbox-startup-test');
});

// A start refused there printed a log line on stdout above its refusal, as if a store had been set up: "event store:
// SQLite (embedded default)" (said before the log was opened), "projections: in memory, ..." (the views opened before
// the admin token's directory was found unusable); with /proc itself as the data dir and the log in memory, writing the
// generated admin token ended in a stack trace, exit code 1. Now the one line, and nothing on stdout.
withProc.each([
  ['in /proc', { MAILBOX_DATA_DIR: '/proc/mailbox-startup-quiet' }, 'cannot create the directory /proc/mailbox-startup-quiet'],
  [
    'in /proc, the log in memory',
    { MAILBOX_DATA_DIR: '/proc/mailbox-startup-quiet', MAILBOX_EVENTSTORE_URL: 'memory:' },
    'cannot create the directory /proc/mailbox-startup-quiet',
  ],
  [
    '/proc itself, the log in memory',
    { MAILBOX_DATA_DIR: '/proc', MAILBOX_EVENTSTORE_URL: 'memory:' },
    'cannot write /proc/admin.token (ENOENT), where the generated admin token is kept',
  ],
  [
    '/proc itself, the admin token given',
    { MAILBOX_DATA_DIR: '/proc', MAILBOX_ADMIN_TOKEN: 'a-token-of-thirty-two-characters' },
    'SQLite cannot open its file',
  ],
])('a data dir %s: the refusal alone, nothing on stdout, exit code 2', async (_where, env, said) => {
  const run = await serve('unused', env);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^mailbox: MAILBOX_DATA_DIR='\/proc[^']*': /)]);
  expect(run.stderr).toContain(said);
  expect(run.code).toBe(2);
  expect(fs.existsSync('/proc/mailbox-startup-quiet')).toBe(false);
});

test.concurrent('a data dir path too long to use: one line naming the variable', async () => {
  const dataDir = path.join(root, 'x'.repeat(300));
  expectOneLine(
    { ...(await serve('unused', { MAILBOX_DATA_DIR: dataDir })), dataDir },
    'MAILBOX_DATA_DIR',
    'the path is too long',
  );
});

// `mailbox serve --data-dir "$DIR"` with DIR unset: the empty flag was dropped and the server started on the
// default data dir (or MAILBOX_DATA_DIR), a mailbox other than the one named. Refused like the empty variable.
// A bad flag is named as typed: `--port abc` was refused as "MAILBOX_PORT='abc'", a variable set to 0 here; then as
// "--port='abc' is not valid: set --port to ...", a variable's form no command line takes. Now the flag, the value, what
// it is not and what to give, one line.
test.concurrent.each([
  [['--data-dir', ''], "--data-dir: '' is empty: give --data-dir a directory path (default ./data)."],
  [['--host', ''], "--host: '' is empty: give --host an IP address or host name of this machine (default 127.0.0.1)."],
  [
    ['--port', 'abc'],
    "--port: 'abc' is not a port number: give --port an integer 0..65535 (0 picks any free port; default 7420), " +
      'written in plain decimal digits.',
  ],
  [
    ['--port', '70000'],
    "--port: '70000' is not a port number: give --port an integer 0..65535 (0 picks any free port; default 7420).",
  ],
])(
  'serve %j (a flag given empty or bad): one line naming the flag, exit code 2, nothing created anywhere',
  async (flags, said) => {
    const dataDir = path.join(root, `bad-flag-${flags[0]}`);
    const run = await runCli(['serve', ...flags], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' }, { timeoutMs: 25_000 });
    expect(run.stderr).toBe(`mailbox: ${said}\n`);
    expectOneLine({ ...run, dataDir }, flags[0]);
    expect(run.stderr).not.toContain('MAILBOX_');
  },
);

// Refused after the settings were read (the host checked, the data dir's parent, the port in use), a flag's value was
// said as the variable's: `serve --data-dir /etc/hostname/data` was "MAILBOX_DATA_DIR='...' cannot be a directory ...;
// set MAILBOX_DATA_DIR to a directory path", a variable the operator never set.
test.concurrent('serve --host, --data-dir or --port refused at start names the flag, not its variable', async () => {
  const file = path.join(root, 'a-file');
  fs.writeFileSync(file, '');
  const dataDir = path.join(root, 'flag-host');
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as net.AddressInfo).port;
  try {
    // Four processes, started together.
    const [underFile, host, inUse, byVariable] = await Promise.all([
      runCli(['serve', '--data-dir', path.join(file, 'data')], { MAILBOX_PORT: '0' }),
      runCli(['serve', '--host', 'bad host!'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' }),
      runCli(['serve', '--port', String(port)], { MAILBOX_DATA_DIR: dataDir }),
      runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: String(port) }),
    ]);
    expect([underFile.code, underFile.stderr]).toEqual([
      2,
      `mailbox: --data-dir: '${path.join(file, 'data')}' cannot be a directory: ${file} is a file; give --data-dir a directory path.\n`,
    ]);
    expect([host.code, host.stderr]).toEqual([
      2,
      "mailbox: --host: 'bad host!' is not an IP address or host name: give --host an address of this machine " +
        '(127.0.0.1 for loopback, 0.0.0.0 for every interface).\n',
    ]);
    expect([inUse.code, inUse.stderr]).toEqual([
      2,
      `mailbox: port ${port} on 127.0.0.1 is in use: another mailbox? stop it, or give --port a free port (0 picks one).\n`,
    ]);
    // Set by the variable, it is still said as the variable.
    expect(byVariable.stderr).toContain('or set MAILBOX_PORT to a free port (0 picks one).');
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
  expect(fs.existsSync(dataDir)).toBe(false);
});

// Found by SQLite while opening them, after it had made a -wal and -shm beside a read-only log: "MAILBOX_DATA_DIR='...': a
// file there, or the disk, is read-only (SQLite: attempt to write a readonly database); set MAILBOX_DATA_DIR to a
// writable place with room." Which file, and that it could be made writable, went unsaid.
test.concurrent.each(['events.sqlite', 'views.sqlite'])(
  'a read-only %s in the data dir: one line naming the file and how to make it writable, exit 2, nothing made beside it',
  async (name) => {
    const dataDir = path.join(root, `read-only-${name}`);
    const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' });
    await mailbox.close();
    const before = fs.readdirSync(dataDir).sort();
    const file = path.join(dataDir, name);
    const undo = makeReadOnly(file);
    if (undo === null) {
      process.stderr.write(READ_ONLY_SKIPPED);
      return;
    }
    try {
      const run = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(run.stderr.trimEnd()).toMatch(
        new RegExp(
          `^mailbox: MAILBOX_DATA_DIR='${dataDir}': ${file} is read-only for this user \\((EACCES|EPERM)\\): make it ` +
            'writable by this user \\(chmod u\\+w, chown it to this user, or chattr -i\\), or set MAILBOX_DATA_DIR to a ' +
            'directory this user can write[.]$',
        ),
      );
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(fs.readdirSync(dataDir).sort()).toEqual(before); // no -wal or -shm made beside it
    } finally {
      undo();
    }
  },
);

test.concurrent(
  'a log that is not a SQLite database: one line naming the file and the remedies, exit code 2, the file untouched',
  async () => {
    const dataDir = path.join(root, 'not-a-log');
    fs.mkdirSync(dataDir);
    const log = path.join(dataDir, 'events.sqlite');
    const text = 'these are notes, not an event log\n';
    fs.writeFileSync(log, text);
    const run = await runCli(['serve'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_PORT: '0',
      MAILBOX_ADMIN_TOKEN: 'a-token-of-thirty-two-characters',
    });
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mailbox: MAILBOX_DATA_DIR=/);
    expect(lines[0]).toContain(`the event log ${log} cannot be read as a SQLite database`);
    expect(lines[0]).toContain('Restore it from a backup, or move it aside');
    expect(run.code).toBe(2);
    expect(fs.readFileSync(log, 'utf8')).toBe(text);
    expect(fs.readdirSync(dataDir)).toEqual(['events.sqlite']); // no -wal or -shm left beside it
  },
);

// Beside the views a server made, a log file replaced by another file: the heartbeat said {"error":"Heartbeat failed",
// "code":"INTERNAL","message":"<file> cannot be read as a SQLite database ..."}, as if it had a bug.
test.concurrent(
  "heartbeat --once on a log file that is not a SQLite database: the readers' line naming it, exit 2, untouched",
  async () => {
    const dataDir = path.join(root, 'heartbeat-not-a-log');
    await (await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' })).close(); // a log and its views
    const log = path.join(dataDir, 'events.sqlite');
    const text = 'these are notes, not an event log\n';
    for (const file of fs.readdirSync(dataDir)) if (file.startsWith('events.sqlite')) fs.rmSync(path.join(dataDir, file));
    fs.writeFileSync(log, text);
    const before = fs.readdirSync(dataDir).sort();
    const run = await runCli(['heartbeat', '--once'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' });
    expect(run.stderr.trimEnd()).toBe(
      `mailbox: MAILBOX_DATA_DIR='${dataDir}': the event log ${log} cannot be read as a SQLite database (SQLite: file is ` +
        'not a database): it is damaged, or not a log at all. Restore it from a backup (mailbox backup writes one), or ' +
        'point MAILBOX_DATA_DIR at the data directory the server uses. Nothing was read or changed.',
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(fs.readFileSync(log, 'utf8')).toBe(text);
    expect(fs.readdirSync(dataDir).sort()).toEqual(before);
  },
);

test.concurrent('port in use: names the port and MAILBOX_PORT, generates no admin token', async () => {
  const other = net.createServer();
  const port = await listening(other);
  try {
    expectOneLine(
      await serve('port-in-use', { MAILBOX_PORT: String(port) }),
      'MAILBOX_PORT',
      `port ${port}`,
      'in use',
      'another mailbox?',
    );
  } finally {
    await closed(other);
  }
});

test.concurrent('unreachable Redis: retried with backoff (said in the log), then one line naming the host', async () => {
  const port = await deadPort();
  const run = await serve('redis-down', { MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}`, MAILBOX_STARTUP_RETRY_MS: '1500' });
  expectOneLine(run, 'MAILBOX_REDIS_URL', `Redis at redis://127.0.0.1:${port} is unreachable`, 'MAILBOX_STARTUP_RETRY_MS');
  // Why, in the socket's words: it said '(Redis at ... is unavailable; retry later (the request was not applied))', a
  // request's answer, and the retry lines had no cause at all.
  expect(run.stderr).toContain(`is unreachable (ECONNREFUSED 127.0.0.1:${port}) after `);
  // The time to a tenth of a second: 1500 ms read 'up to 2s', and 600 ms 'up to 1s'.
  expect(run.stderr).toMatch(/ attempt\(s\) in 1\.[0-9]s: /);
  const retries = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((entry) => /retrying/.test(entry.msg));
  expect(retries.length).toBeGreaterThanOrEqual(2);
  for (const retry of retries) expect(retry.cause).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  for (const retry of retries) expect(retry.msg).toContain('retrying for up to 1.5s (MAILBOX_STARTUP_RETRY_MS)');
  expect(retries.map((entry) => entry.retryInMs).slice(0, 2)).toEqual([250, 500]); // backoff doubles
  // The waits use the whole MAILBOX_STARTUP_RETRY_MS, the last one cut to what is left (it gave up a step early:
  // 250 + 500 ms of 1500, the next step of 1000 ms not taken).
  const waited = retries.reduce((sum, entry) => sum + entry.retryInMs, 0);
  expect(waited).toBeGreaterThan(1000);
  expect(waited).toBeLessThanOrEqual(1500);
});

// An EventStoreDB URL carries its credentials (esdb://admin:changeit@host). A scheme the mailbox does not take was
// refused quoting the URL whole, password and all; an option the client does not read (a misspelled tlsCAFile) or
// tlsVerifyCert=false was ignored by the client with a warning that printed the whole connection string, and the
// server went on without the option. Each is now one line that names the option, without the password.
test.concurrent.each([
  ['esdbs://admin:changeit@127.0.0.1:2113', ["'esdbs://***@127.0.0.1:2113' is not supported", 'esdb://host:2113']],
  [
    'esdb://admin:changeit@127.0.0.1:2113?tls=true&tlsCAFlie=/etc/ca.pem',
    ["the option 'tlsCAFlie' is not one the EventStoreDB client reads (it would be ignored)", 'tlsCAFile'],
  ],
  ['esdb://admin:changeit@127.0.0.1:2113?tlsVerifyCert=false', ['tlsVerifyCert=false has no effect', 'tlsCAFile=']],
])('MAILBOX_EVENTSTORE_URL=%s is refused in one line without its password', async (url, mentions) => {
  const run = await serve(`esdb-credentials-${url.length}`, { MAILBOX_EVENTSTORE_URL: url });
  expectOneLine(run, 'MAILBOX_EVENTSTORE_URL', ...mentions);
  expect(run.stderr + run.stdout).not.toContain('changeit');
});

/** `mailbox serve` on `dataDir` with `extra` in its environment, stopped with one SIGTERM once it listens. */
function serveUntilListening(dataDir: string, extra: Record<string, string>): Promise<CliRun> {
  return new Promise<CliRun>((resolve) => {
    const { spawn } = jest.requireActual<typeof ChildProcess>('node:child_process');
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
    const child = spawn(process.execPath, ['bin/mailbox.js', 'serve'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...env, MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', ...extra },
    });
    let stdout = '';
    let stderr = '';
    let signalled = false; // one SIGTERM: a second one means "exit without waiting" (shutdown logs in several chunks)
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
      if (!signalled && stdout.includes('mailbox listening on')) signalled = child.kill('SIGTERM');
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON log lines of a run (off a terminal the CLI logs JSON). */
const logLines = (run: CliRun): Array<{ level: number; msg: string; [key: string]: unknown }> =>
  run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));

test.concurrent(
  'a misspelled variable is warned with the nearest name; JSON logs off a terminal; shutdown lines in order',
  async () => {
    const run = await serveUntilListening(path.join(root, 'runs'), { MAILBOX_STRICT_RECIPENTS: 'true' });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const messages = logLines(run).map((line) => line.msg);
    expect(messages[0]).toBe(
      'MAILBOX_STRICT_RECIPENTS is not a mailbox variable and is ignored: did you mean MAILBOX_STRICT_RECIPIENTS?',
    );
    const order = ['mailbox listening on', 'shutting down', 'stopped'].map((text) =>
      messages.findIndex((m) => m.startsWith(text)),
    );
    expect(order.every((index) => index >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(messages[messages.length - 1]).toMatch(/^stopped/);
  },
);

test.concurrent(
  'Redis-only variables set without Redis: one warning line naming them and where they take effect; then it serves',
  async () => {
    const run = await serveUntilListening(path.join(root, 'redis-only'), {
      MAILBOX_REDIS_PASSWORD: 'not-shown-anywhere',
      MAILBOX_REDIS_USERNAME: 'mailbox',
      MAILBOX_REDIS_TLS: 'true',
      MAILBOX_REDIS_NAMESPACE: 'team-a',
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const warnings = logLines(run).filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      msg:
        'MAILBOX_REDIS_USERNAME, MAILBOX_REDIS_PASSWORD, MAILBOX_REDIS_TLS, MAILBOX_REDIS_NAMESPACE are set but no Redis ' +
        'is configured, so they are ignored: they take effect only with MAILBOX_REDIS_URL (or MAILBOX_REDIS_SENTINELS ' +
        'with MAILBOX_REDIS_SENTINEL_NAME, or MAILBOX_REDIS_CLUSTER).',
      variables: ['MAILBOX_REDIS_USERNAME', 'MAILBOX_REDIS_PASSWORD', 'MAILBOX_REDIS_TLS', 'MAILBOX_REDIS_NAMESPACE'],
    });
    expect(run.stdout).not.toContain('not-shown-anywhere'); // a secret is named, never shown
    expect(logLines(run).some((line) => line.msg.startsWith('mailbox listening on'))).toBe(true);
  },
);

describe('a Redis Cluster named as one node, or one node named as a Cluster: one line saying which, at once', () => {
  // Found walking the stack: redis:// on a Cluster node stopped serve with a stack trace and exit code 1 ("Redis
  // projections is unavailable; retry later": the node answered for no slot of the mailbox's keys), and redis-cluster://
  // (or MAILBOX_REDIS_CLUSTER) on a lone node was waited out for 30 s as unreachable ("Failed to refresh slots cache").
  const nodes = startedOnce(
    async () => {
      const [clusterPort, plainPort] = [await freePort(), await freePort()];
      const conf = path.join(root, `nodes-${clusterPort}.conf`);
      const cluster = await spawnRedis(clusterPort, ['--cluster-enabled', 'yes', '--cluster-config-file', conf]);
      return { clusterPort, plainPort, cluster, plain: await spawnRedis(plainPort) };
    },
    async ({ cluster, plain }) => {
      await stopChild(cluster);
      await stopChild(plain);
    },
  );

  test.concurrent.each([
    [
      'cluster-node-as-one',
      'MAILBOX_REDIS_URL',
      'redis://',
      'is a node of a Redis Cluster (cluster_enabled:1)',
      'redis-cluster://',
    ],
    ['one-node-as-cluster', 'MAILBOX_REDIS_URL', 'redis-cluster://', 'is no Redis Cluster node', 'as redis://host:6379'],
    ['one-node-as-cluster-variable', 'MAILBOX_REDIS_CLUSTER', '', 'is no Redis Cluster node', 'unset MAILBOX_REDIS_CLUSTER'],
  ])('%s', async (name, variable, scheme, said, remedy) => {
    const { clusterPort, plainPort } = await nodes();
    const port = scheme === 'redis://' ? clusterPort : plainPort;
    const run = await serve(name, { [variable]: `${scheme}127.0.0.1:${port}` }); // the default 30 s of retries: none taken
    expectOneLine(run, variable, said, remedy);
    expect(run.stdout).not.toContain('retrying');
  });
});

describe('sentinels that watch no master of the name given: one line naming the names they watch, at once', () => {
  // Found walking the Sentinel setup: the sentinels' answer "ERR No such master with that name" was waited out for
  // MAILBOX_STARTUP_RETRY_MS (30 s) as "Redis ... is unreachable (All sentinels are unreachable ...)", then "start it".
  const group = startedOnce(
    () => startRedisSentinel(),
    (sentinel) => sentinel.stop(),
  );

  test.concurrent.each([
    ['sentinel-name-url', 'MAILBOX_REDIS_URL', 'end MAILBOX_REDIS_URL with one they watch'],
    ['sentinel-name-variable', 'MAILBOX_REDIS_SENTINELS', 'set MAILBOX_REDIS_SENTINEL_NAME to one they watch'],
  ])('%s', async (name, variable, remedy) => {
    const sentinel = await group();
    const hosts = sentinel.sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',');
    const env: Record<string, string> =
      variable === 'MAILBOX_REDIS_URL'
        ? { MAILBOX_REDIS_URL: `redis+sentinel://${hosts}/no-such-master` }
        : { MAILBOX_REDIS_SENTINELS: hosts, MAILBOX_REDIS_SENTINEL_NAME: 'no-such-master' };
    const started = Date.now();
    const run = await serve(name, env); // the default 30 s of retries: none taken
    expectOneLine(
      run,
      variable === 'MAILBOX_REDIS_URL' ? variable : 'MAILBOX_REDIS_SENTINEL_NAME',
      `Redis master 'no-such-master' via sentinels ${hosts}: the sentinels watch no master of that name`,
      remedy,
      `they watch '${sentinel.masterName}'`,
    );
    expect(run.stdout).not.toContain('retrying');
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('a Redis that answers and refuses the handshake: one line saying what it refused, at once (no retry)', () => {
  // It was retried for MAILBOX_STARTUP_RETRY_MS (30 s), then "Redis ... is unreachable ... start it" (ioredis says only
  // "Connection is closed" for refused credentials); and a database the server does not have was used as database 0.
  const redis = startedOnce(
    async () => {
      const port = await freePort();
      return { port, child: await spawnRedis(port, ['--requirepass', 'the-redis-password-0123']) };
    },
    ({ child }) => stopChild(child),
  );

  test.concurrent.each([
    ['redis-no-password', {}, 'asks for a password (NOAUTH)'],
    ['redis-wrong-password', { MAILBOX_REDIS_PASSWORD: 'not-the-password' }, 'refused the credentials (WRONGPASS'],
    ['redis-no-database', { MAILBOX_REDIS_PASSWORD: 'the-redis-password-0123', path: '/99' }, 'has no such database'],
  ])('%s', async (name, { path: database = '', ...env }: Record<string, string>, refused) => {
    const { port } = await redis();
    const url = `redis://127.0.0.1:${port}${database}`;
    const run = await serve(name, { MAILBOX_REDIS_URL: url, ...env }); // the default 30 s of retries: none taken
    expectOneLine(run, 'MAILBOX_REDIS_URL', `Redis at ${url} ${refused}`, database ? 'databases' : 'MAILBOX_REDIS_PASSWORD');
    expect(run.stdout).not.toContain('retrying');
  });

  // The heartbeat's own nudge Redis (MAILBOX_HEARTBEAT_REDIS_URL) was not checked at start: wrong credentials there were
  // first met at a nudge, as a failed publish (--once: exit 3, a JSON report); the daemon ran on, nudging nobody.
  describe("the heartbeat's own nudge Redis (MAILBOX_HEARTBEAT_REDIS_URL) is checked at start the same way", () => {
    const logDir = startedOnce(async () => {
      const dataDir = path.join(root, 'heartbeat-nudge-redis');
      await (await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' })).close(); // a log and its views
      return dataDir;
    });
    const once = async (url: string) =>
      runCli(['heartbeat', '--once'], { MAILBOX_DATA_DIR: await logDir(), MAILBOX_HEARTBEAT_REDIS_URL: url });

    test.concurrent.each([
      ['no password', '', '', 'asks for a password (NOAUTH)'],
      ['a wrong password', ':not-the-password@', '', 'refused the credentials (WRONGPASS'],
      ['a database it does not have', ':the-redis-password-0123@', '/99', 'has no such database'],
    ])('%s: one line naming it and the variable, exit code 2, no tick', async (_, credentials, database, refused) => {
      const { port } = await redis();
      const run = await once(`redis://${credentials}127.0.0.1:${port}${database}`);
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^mailbox: Redis at redis:\/\/\S+ /);
      expect(lines[0]).toContain(refused);
      expect(lines[0]).toContain('--redis-url / MAILBOX_HEARTBEAT_REDIS_URL');
      expect(lines[0]).not.toContain('not-the-password'); // the URL is shown redacted
      if (!database) expect(lines[0]).toContain("MAILBOX_REDIS_PASSWORD is for the mailbox's own Redis");
      expect(run.stdout).toBe(''); // no tick report
      expect(run.code).toBe(2);
    });

    test.concurrent(
      'serve --heartbeat checks it too: one line naming it and the variable, exit code 2, nothing created',
      async () => {
        const { port } = await redis();
        const url = `redis://:not-the-password@127.0.0.1:${port}`;
        const dataDir = path.join(root, 'serve-heartbeat-nudge-redis');
        const run = await runCli(['serve', '--heartbeat'], {
          MAILBOX_DATA_DIR: dataDir,
          MAILBOX_PORT: '0',
          MAILBOX_HEARTBEAT_REDIS_URL: url,
        });
        expectOneLine({ ...run, dataDir }, '--redis-url / MAILBOX_HEARTBEAT_REDIS_URL', 'refused the credentials (WRONGPASS');
      },
    );

    test.concurrent('the right password: the tick runs (exit code 0)', async () => {
      // Beside the running mailbox, whose projector keeps the views (with none, --once exits 1: projector_absent).
      const { port } = await redis();
      const mailbox = await createMailbox({ dataDir: await logDir(), adminToken: ADMIN_TOKEN, logLevel: 'silent' });
      try {
        const run = await once(`redis://:the-redis-password-0123@127.0.0.1:${port}`);
        expect(JSON.parse(run.stdout)).toMatchObject({ failed: [], pipeline: { projectorLive: true } });
        expect(run.code).toBe(0);
      } finally {
        await mailbox.close();
      }
    });
  });

  test.concurrent(
    'mailbox projections status says the same in its envelope (it read "is unavailable; retry later")',
    async () => {
      const { port } = await redis();
      const dataDir = path.join(root, 'redis-refused-status');
      await (await createMailbox({ dataDir, views: 'memory', adminToken: ADMIN_TOKEN, logLevel: 'silent' })).close(); // a log
      const run = await runCli(['projections', 'status', '--json'], {
        MAILBOX_DATA_DIR: dataDir,
        MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}`,
        MAILBOX_REDIS_PASSWORD: 'not-the-password',
      });
      expect(JSON.parse(run.stderr)).toMatchObject({
        error: 'Redis refused the connection',
        code: 'UNAVAILABLE',
        message: expect.stringContaining(`Redis at redis://127.0.0.1:${port} refused the credentials (WRONGPASS`),
      });
      expect(run.code).toBe(2);
    },
  );
});

// Ctrl-C during a first start on an empty data dir: serve said "stopped: start-up stopped while the views caught up with
// the log, at position 0 of unknown", as if the log could not be read; an empty log has no head, which is 0.
test.concurrent('stopped during a first start on an empty log: said as position 0 of 0, not "of unknown"', async () => {
  const dataDir = tempDir('mailbox-empty-interrupted-');
  try {
    const stop = new AbortController();
    stop.abort();
    await expect(
      createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, {}, { interrupted: stop.signal }),
    ).rejects.toThrow('while the views caught up with the log, at position 0 of 0 (the next start resumes there)');
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

// Redis 7 takes any password for a user with nopass (the default user of a server without requirepass): an operator who
// set one (MAILBOX_REDIS_PASSWORD, or redis://:password@host) believed the views protected, and the start said nothing.
describe('a password given to a Redis that accepts any password: one warning line at start, and it serves', () => {
  const servers = startedOnce(
    async () => {
      const [open, guarded] = [await freePort(), await freePort()];
      return {
        open,
        guarded,
        children: [await spawnRedis(open), await spawnRedis(guarded, ['--requirepass', 'the-redis-password-0123'])],
      };
    },
    async ({ children }) => {
      for (const child of children) await stopChild(child);
    },
  );
  const anyPassword = (run: CliRun) => logLines(run).filter((line) => /accepts any password/.test(line.msg));

  test.concurrent.each([
    [
      'in MAILBOX_REDIS_PASSWORD',
      (port: number) => ({ MAILBOX_REDIS_URL: `redis://127.0.0.1:${port}`, MAILBOX_REDIS_PASSWORD: 'pw' }),
    ],
    ['in the URL', (port: number) => ({ MAILBOX_REDIS_URL: `redis://:pw@127.0.0.1:${port}` })],
  ])('no requirepass, the password %s: warned, with how to protect it', async (name, env) => {
    const { open } = await servers();
    const run = await serveUntilListening(path.join(root, `redis-any-password-${name.length}`), {
      ...env(open),
      MAILBOX_REDIS_NAMESPACE: `any-password-${name.length}`, // each its own log's views
    });
    expect(run.code).toBe(0);
    expect(anyPassword(run).map((line) => [line.level, line.msg])).toEqual([
      [
        40,
        expect.stringMatching(
          new RegExp(`^Redis at redis://(\\*\\*\\*@)?127\\.0\\.0\\.1:${open} accepts any password for its user 'default'`),
        ),
      ],
    ]);
    expect(anyPassword(run)[0].msg).toContain(
      'requirepass <password> in redis.conf, or ACL SETUSER default resetpass ><password>',
    );
    expect(run.stdout).not.toContain('"pw"');
  });

  test.concurrent('with requirepass and its password: listening, and no such warning', async () => {
    const { guarded } = await servers();
    const run = await serveUntilListening(path.join(root, 'redis-guarded'), {
      MAILBOX_REDIS_URL: `redis://127.0.0.1:${guarded}`,
      MAILBOX_REDIS_PASSWORD: 'the-redis-password-0123',
    });
    expect(run.code).toBe(0);
    expect(logLines(run).some((line) => line.msg.startsWith('mailbox listening on'))).toBe(true); // the positive signal first
    expect(anyPassword(run)).toEqual([]);
  });
});

// Last, one at a time, after every concurrent test above has ended: their deadlines are short (an EventStoreDB client's
// 500-1,000 ms; a test of four starts and stops in turn), and beside other starting processes, on a loaded machine, they
// were met by the client's timeout instead of the refusal, or went past the test's.
test('unreachable EventStoreDB: one line naming the host and MAILBOX_EVENTSTORE_URL', async () => {
  const port = await deadPort();
  const run = await serve('esdb-down', {
    MAILBOX_EVENTSTORE_URL: `esdb://127.0.0.1:${port}?tls=false&defaultDeadline=500`,
    MAILBOX_STARTUP_RETRY_MS: '300',
  });
  expectOneLine(run, 'MAILBOX_EVENTSTORE_URL', `EventStoreDB at 127.0.0.1:${port} is unreachable`);
});

test.each([
  ['audit', 'verify'],
  ['audit', 'replay'],
])('mailbox %s %s with EventStoreDB unreachable: the envelope names the host and MAILBOX_EVENTSTORE_URL', async (...command) => {
  const port = await deadPort();
  const run = await runCli([...command, '--json'], {
    MAILBOX_EVENTSTORE_URL: `esdb://127.0.0.1:${port}?tls=false&defaultDeadline=500`,
  });
  // It said "The event store (EventStoreDB) is unavailable; retry later (the request was not applied)": no host, no variable;
  // then that text in the parentheses where the socket's error belongs.
  expect(JSON.parse(run.stderr.trim().split('\n').at(-1)!)).toMatchObject({
    code: 'UNAVAILABLE',
    field: 'MAILBOX_EVENTSTORE_URL',
    message: expect.stringMatching(
      new RegExp(
        `^EventStoreDB at 127\\.0\\.0\\.1:${port} is unreachable \\(ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): start it, or fix MAILBOX_EVENTSTORE_URL\\. Nothing was read\\.$`,
      ),
    ),
  });
  expect(run.code).not.toBe(0);
});

// A TLS setting that does not match the node's: tls=true (or no tls parameter, the client's default) to a node run
// without TLS was said as "unreachable (unavailable: 14 UNAVAILABLE: ... SSL routines:ssl3_get_record:wrong version
// number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:" and, on the next line, ". Resolution note: )"; tls=false
// to a node that takes the connection but answers no plain gRPC (one serving TLS) as "Failed to connect (<time>)".
// Neither named the setting. Node's own warning about a TLS server name that is an IP address may precede the line.
const withoutNodeWarnings = (stderr: string): string[] =>
  stderr
    .trimEnd()
    .split('\n')
    .filter((line) => !/^\(node:\d+\) \[DEP0123\]|^\(Use `node --trace-deprecation/.test(line));

describe('EventStoreDB with the wrong TLS setting: one line saying which, serve and the reader commands alike', () => {
  let double: EsdbDouble;
  let silent: net.Server;
  let silentPort: number;
  const sockets = new Set<net.Socket>();
  beforeAll(async () => {
    double = await EsdbDouble.start();
    // Takes the connection and speaks no gRPC (as a TLS node does to plain text).
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.end();
    });
    silentPort = await listening(silent);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await closed(silent);
    await double.close();
  });
  const plainNode = () => `esdb://127.0.0.1:${new URL(double.url.replace(/^esdb:/, 'http:')).port}`;
  const cases = (): Array<[string, string, string]> => [
    ['tls=true to a plain node', `${plainNode()}?tls=true&defaultDeadline=1000`, 'MAILBOX_EVENTSTORE_URL needs tls=false'],
    ['no tls parameter to a plain node', `${plainNode()}?defaultDeadline=1000`, 'MAILBOX_EVENTSTORE_URL needs tls=false'],
    [
      'tls=false to a node that answers no plain gRPC',
      `esdb://127.0.0.1:${silentPort}?tls=false&defaultDeadline=1000`,
      'MAILBOX_EVENTSTORE_URL needs tls=true',
    ],
  ];

  it.each([0, 1, 2])('serve, case %i', async (index) => {
    const [name, url, fix] = cases()[index];
    const run = await serve(`esdb-tls-${index}`, { MAILBOX_EVENTSTORE_URL: url, MAILBOX_STARTUP_RETRY_MS: '300' });
    const lines = withoutNodeWarnings(run.stderr);
    expect({ name, lines: lines.length, code: run.code }).toEqual({ name, lines: 1, code: 2 });
    // A plain node asked for TLS is known at once for what it is (no wait: see 'wrong EventStoreDB URLs' below).
    expect(lines[0]).toMatch(
      index === 2
        ? /^mailbox: EventStoreDB at 127\.0\.0\.1:\d+ is unreachable \(/
        : /^mailbox: EventStoreDB at 127\.0\.0\.1:\d+ speaks gRPC without TLS, and MAILBOX_EVENTSTORE_URL asks for TLS/,
    );
    expect(lines[0]).toContain(index === 2 ? fix : 'add tls=false to MAILBOX_EVENTSTORE_URL');
    expect(lines[0]).not.toMatch(/openssl|ssl3_|Resolution note|\n\s+at /);
    expect(fs.existsSync(run.dataDir)).toBe(false);
  });

  it.each([0, 1, 2])('audit replay, case %i', async (index) => {
    const [name, url, fix] = cases()[index];
    const run = await runCli(['audit', 'replay'], { MAILBOX_EVENTSTORE_URL: url });
    const lines = withoutNodeWarnings(run.stderr);
    expect({ name, lines: lines.length, code: run.code }).toEqual({ name, lines: 1, code: 2 });
    // One line as serve's (`mailbox: ...`); the envelope only with --json.
    expect(lines[0]).toMatch(/^mailbox: .*MAILBOX_EVENTSTORE_URL/);
    expect(lines[0]).toContain(fix);
    expect(lines[0]).not.toMatch(/openssl|ssl3_|Resolution note|\{/);
  });
});

// Two wrong EventStoreDB URLs that never heal: TLS (the default when the URL names none) asked of a node run without
// it, and a port that is no gRPC at all (an HTTP server, a redis-server). The client says only UNAVAILABLE for both:
// each was retried for the whole MAILBOX_STARTUP_RETRY_MS (30 s by default) before its line, and the TLS one printed
// Node's DEP0123 warning (a TLS server name that is an IP address) above it. Now: one line at once, naming the fix.
describe('wrong EventStoreDB URLs: refused at once, in one line naming the fix, without retrying', () => {
  let double: EsdbDouble;
  let web: http.Server;
  let redisPort: number;
  let redis: ChildProcess.ChildProcess;
  beforeAll(async () => {
    double = await EsdbDouble.start();
    web = http.createServer((_request, response) => response.end('not gRPC'));
    await listening(web);
    redisPort = await freePort();
    redis = await spawnRedis(redisPort);
  });
  afterAll(async () => {
    await stopChild(redis);
    await closed(web);
    await double.close();
  });
  const doublePort = () => new URL(double.url.replace(/^esdb:/, 'http:')).port;
  const webPort = () => (web.address() as net.AddressInfo).port;
  const noGrpc = (port: number | string) => [
    `MAILBOX_EVENTSTORE_URL names 127.0.0.1:${port}, which answers but is no EventStoreDB`,
    "the node's gRPC port (2113",
  ];
  const cases = (): Array<[string, string, string[]]> => [
    [
      'the TLS default to a plain node',
      `esdb://127.0.0.1:${doublePort()}`,
      [`EventStoreDB at 127.0.0.1:${doublePort()} speaks gRPC without TLS`, 'add tls=false to MAILBOX_EVENTSTORE_URL'],
    ],
    ['tls=false to an HTTP server', `esdb://127.0.0.1:${webPort()}?tls=false`, noGrpc(webPort())],
    ['the TLS default to an HTTP server', `esdb://127.0.0.1:${webPort()}`, noGrpc(webPort())],
    ['tls=false to a redis-server', `esdb://127.0.0.1:${redisPort}?tls=false`, noGrpc(redisPort)],
  ];

  it.each([0, 1, 2, 3])(
    'serve, case %i',
    async (index) => {
      const [name, url, mentions] = cases()[index];
      // A wait of a minute: a refusal after any retry is seen in the log's retry lines (none), not timed.
      const run = await serve(`esdb-wrong-${index}`, { MAILBOX_EVENTSTORE_URL: url, MAILBOX_STARTUP_RETRY_MS: '60000' }, 90_000);
      const retries = run.stdout.split('\n').filter((line) => /retrying/.test(line));
      expect({ name, retries }).toEqual({ name, retries: [] });
      expectOneLine(run, 'MAILBOX_EVENTSTORE_URL', ...mentions); // no DEP0123 warning above it
      expect(run.stderr).not.toMatch(/unreachable|DEP0123/);
    },
    120_000,
  );
});

describe('one mailbox per data dir (the SQLite views owner lock)', () => {
  /** A `mailbox serve` child on `dataDir`, resolved once it listens (with its URL). */
  function startServe(dataDir: string): Promise<{ child: ChildProcess.ChildProcess; url: string }> {
    const { spawn } = jest.requireActual<typeof ChildProcess>('node:child_process');
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
    const child = spawn(process.execPath, ['bin/mailbox.js', 'serve'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...env, MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' },
    });
    return new Promise((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += String(chunk);
        const listening = /"mailbox listening on (http:\/\/[^ ]+) /.exec(stdout);
        if (listening) resolve({ child, url: listening[1] });
      });
      child.on('close', (code) => reject(new Error(`serve exited (${code}) before listening: ${stdout}`)));
    });
  }
  const exited = (child: ChildProcess.ChildProcess) => new Promise<void>((resolve) => child.once('close', () => resolve()));

  test('a second serve on a served data dir: one line naming the holder and the remedy, exit code 2, and the first still serves; after the first is SIGKILLed, a start is not refused', async () => {
    const dataDir = path.join(root, 'shared');
    const first = await startServe(dataDir);
    try {
      const second = await runCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
      expect(second.code).toBe(2);
      const lines = second.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^mailbox: another mailbox \\(pid ${first.child.pid}, since [^)]+\\) is serving the views file ` +
            `${path.join(dataDir, 'views.sqlite').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} .*stop it first, or give this one another MAILBOX_DATA_DIR`,
        ),
      );
      expect(second.stdout).not.toContain('mailbox listening on');
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    } finally {
      const gone = exited(first.child);
      first.child.kill('SIGKILL'); // no clean release: the operating system drops the lock with the process
      await gone;
    }
    const again = await startServe(dataDir);
    expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
    const stopped = exited(again.child);
    again.child.kill('SIGTERM');
    await stopped;
    const third = await startServe(dataDir); // and after a clean stop
    const done = exited(third.child);
    third.child.kill('SIGTERM');
    await done;
  }, 90_000); // four starts and three stops in turn: past 30 s on a loaded machine
});
