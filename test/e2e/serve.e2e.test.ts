/**
 * startServer (what `mailbox serve` runs) on the embedded default: SQLite in a
 * temp data dir, an admin token generated once (0600, printed once), reused on
 * restart, overridden by MAILBOX_ADMIN_TOKEN; messages survive the restart.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { parseConfig } from '../../src/config';
import { startServer } from '../../src/server';
import { silentLogger, tempDir } from '../support/fixtures';

const start = async (dataDir: string, extra: Record<string, unknown> = {}) => {
  const printed: string[] = [];
  const server = await startServer(parseConfig({ dataDir, port: 0, logLevel: 'silent', ...extra }), {
    logger: silentLogger,
    print: (text) => printed.push(text),
  });
  return { server, printed: printed.join('') };
};

const post = (url: string, pathname: string, token: string, body: unknown) =>
  fetch(url + pathname, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('generates the admin token once, stores it 0600, prints it only then, and keeps the log across restarts', async () => {
  const dataDir = tempDir();
  const first = await start(dataDir);
  const file = path.join(dataDir, 'admin.token');
  const token = fs.readFileSync(file, 'utf8').trim();
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(first.printed).toContain(token);
  expect(first.server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

  const registered = await post(first.server.url, '/v1/agents', token, { identity: '@a' });
  expect(registered.status).toBe(201);
  const agentToken = ((await registered.json()) as { token: string }).token;
  expect((await post(first.server.url, '/v1/messages', agentToken, { to: '@a', subject: 'note', body: 'to self' })).status).toBe(
    201,
  );
  await first.server.close();

  const second = await start(dataDir);
  expect(second.printed).toBe('');
  const inbox = await fetch(`${second.server.url}/v1/messages`, { headers: { authorization: `Bearer ${agentToken}` } });
  expect(
    ((await inbox.json()) as { messages: Array<{ subject: string }> }).messages.map((m: { subject: string }) => m.subject),
  ).toEqual(['note']);
  expect((await post(second.server.url, '/v1/agents', token, { identity: '@b' })).status).toBe(201);
  await second.server.close();
});

test('MAILBOX_ADMIN_TOKEN wins: nothing is generated or printed, and the stored token is not accepted', async () => {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'admin.token'), 'stored-token-0123456789abcdefghij\n', { mode: 0o600 });
  const { server, printed } = await start(dataDir, { adminToken: 'env-admin-token-0123456789abcdef' });
  expect(printed).toBe('');
  expect((await post(server.url, '/v1/agents', 'env-admin-token-0123456789abcdef', { identity: '@x' })).status).toBe(201);
  expect((await post(server.url, '/v1/agents', 'stored-token-0123456789abcdefghij', { identity: '@y' })).status).toBe(401);
  await server.close();
});

// With the admin token from the environment nothing made the data dir 0700: it came out 0755 (the umask's), and the
// log (every message body) and the views file readable by every user of the machine.
test("the directories it makes for the SQLite log and views are its owner's only (0700), wherever the admin token comes from", async () => {
  const root = tempDir();
  const dataDir = path.join(root, 'new', 'data');
  const logDir = path.join(root, 'log-elsewhere');
  await (await start(dataDir, { adminToken: 'env-admin-token-0123456789abcdef' })).server.close();
  const elsewhere = {
    adminToken: 'env-admin-token-0123456789abcdef',
    eventStoreUrl: `sqlite:${path.join(logDir, 'mail.sqlite')}`,
  };
  await (await start(path.join(root, 'unused'), elsewhere)).server.close();
  expect(fs.readdirSync(dataDir).sort()).toEqual(expect.arrayContaining(['events.sqlite', 'views.sqlite']));
  for (const dir of [path.join(root, 'new'), dataDir, logDir]) expect([dir, fs.statSync(dir).mode & 0o777]).toEqual([dir, 0o700]);
  expect(fs.existsSync(path.join(logDir, 'mail.sqlite'))).toBe(true);
});

// A data directory that was there already (made by the operator, a mounted volume) is left as it is, and SQLite made
// its files 0644 under the usual umask: in a 0755 directory the log (every message body) and the views were readable
// by every user of the machine. Every file the server makes there is now its owner's only.
test("in a data directory that was there already (0755), every file the server makes is its owner's only (0600)", async () => {
  const root = tempDir();
  const dataDir = path.join(root, 'data');
  const logDir = path.join(root, 'shared');
  for (const dir of [dataDir, logDir]) fs.mkdirSync(dir, { mode: 0o755 });
  const admin = 'env-admin-token-0123456789abcdef';
  const modes = (dir: string) =>
    fs
      .readdirSync(dir)
      .sort()
      .map((name) => [name, (fs.statSync(path.join(dir, name)).mode & 0o777).toString(8)]);
  const umask = process.umask(0o022);
  try {
    const { server } = await start(dataDir, { adminToken: admin });
    let whileServing: string[][];
    try {
      const registered = await post(server.url, '/v1/agents', admin, { identity: '@a' });
      const { token } = (await registered.json()) as { token: string };
      expect((await post(server.url, '/v1/messages', token, { to: '@a', subject: 's', body: 'private' })).status).toBe(201);
      whileServing = modes(dataDir);
    } finally {
      await server.close();
    }
    expect(whileServing.map(([name]) => name)).toEqual(
      expect.arrayContaining(['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm', 'views.sqlite', 'views.sqlite-wal']),
    );
    expect(whileServing).toEqual(whileServing.map(([name]) => [name, '600']));
    const elsewhere = { adminToken: admin, eventStoreUrl: `sqlite:${path.join(logDir, 'mail.sqlite')}` };
    await (await start(path.join(root, 'views'), elsewhere)).server.close();
    const beside = modes(logDir); // the log, and the views the server keeps beside a sqlite: log
    expect(beside.map(([name]) => name)).toEqual(expect.arrayContaining(['mail.sqlite', 'mail.views.sqlite']));
    expect(beside).toEqual(beside.map(([name]) => [name, '600']));
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o755); // the operator's directory is kept as it was
  } finally {
    process.umask(umask);
  }
});

test('the rate limit turned off (MAILBOX_RATE_LIMIT_PER_SECOND=0) is said in one line at start, and only then', async () => {
  const started = async (extra: Record<string, unknown>) => {
    const lines: Array<{ level: number; msg: string; variable?: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const server = await startServer(
      parseConfig({ dataDir: tempDir(), port: 0, adminToken: 'admin-token-0123456789abcdefghij', ...extra }),
      {
        logger,
        print: () => {},
      },
    );
    await server.close();
    return lines.filter((line) => /rate limit/i.test(line.msg));
  };
  expect(await started({ rateLimitPerSecond: 0 })).toEqual([
    expect.objectContaining({
      level: 40,
      variable: 'MAILBOX_RATE_LIMIT_PER_SECOND',
      msg: 'per-agent rate limit off (MAILBOX_RATE_LIMIT_PER_SECOND=0): no agent is ever answered 429 RATE_LIMITED',
    }),
  ]);
  expect(await started({})).toEqual([]);
});

test('a rate limit burst of 0 is refused (it turned the limit off, unsaid), teaching MAILBOX_RATE_LIMIT_PER_SECOND=0', () => {
  expect(() => parseConfig({ rateLimitBurst: 0 })).toThrow(
    "MAILBOX_RATE_LIMIT_BURST='0' is not valid: set MAILBOX_RATE_LIMIT_BURST to an integer of 1 or more (the requests an " +
      'agent may make at once); to turn the rate limit off, set MAILBOX_RATE_LIMIT_PER_SECOND=0 instead.',
  );
});
