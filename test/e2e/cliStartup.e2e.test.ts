/**
 * A command loads what it uses, not every command's libraries: each CLI start (an agent's `mailbox send`, a cron
 * job's `heartbeat --once`, a server's start) loaded the HTTP server, the MCP SDK, ioredis, pino-pretty and the audit
 * tools before it read its arguments, ~0.3 s of CPU of every start. A Redis deployment and MCP still load theirs.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, MAILBOX_BIN, ROOT, type CliRun } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, silentLogger, tempDir } from '../support/fixtures';
import { startRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

const PRELOAD = path.join(ROOT, 'test/support/loadedPackages.js');
let dir: string;
let token: string;
beforeAll(async () => {
  ensureBuilt();
  dir = tempDir('mailbox-cli-startup-');
  const mailbox = await createMailbox({ dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silentLogger });
  token = (await registerAgents(mailbox, ['@a']))['@a'].token;
  await mailbox.close();
});

let runs = 0;
const packagesFile = () => path.join(dir, `loaded-${++runs}`);
const packagesIn = (file: string) => fs.readFileSync(file, 'utf8').split('\n');

/** `mailbox <args>` with the preload: its outcome and the packages it loaded. */
function loadedBy(args: string[], env: Record<string, string>): Promise<{ run: CliRun; packages: string[] }> {
  const file = packagesFile();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', PRELOAD, MAILBOX_BIN, ...args], {
      env: { PATH: process.env.PATH, ...env, LOADED_PACKAGES_FILE: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ run: { code, stdout, stderr }, packages: packagesIn(file) }));
  });
}

const NOT_FOR_EVERY_COMMAND = ['@modelcontextprotocol/sdk', 'ioredis', 'pino-pretty', 'fastify'];

test.each([
  ['a client command (mailbox agent list, no server there)', ['agent', 'list', '--url', 'http://127.0.0.1:9'], 1],
  // No server keeps the views here: the alarm projector_absent, exit code 1.
  ['mailbox heartbeat --once on the embedded default', ['heartbeat', '--once'], 1],
  ['mailbox audit replay --json', ['audit', 'replay', '--json', '--no-progress'], 0],
])('%s loads neither the server, the MCP SDK, ioredis nor pino-pretty', async (_what, args, code) => {
  const { run, packages } = await loadedBy(args, { MAILBOX_DATA_DIR: dir });
  expect(run.code).toBe(code); // it ran: the command's own outcome
  expect(packages).toContain('commander');
  for (const name of NOT_FOR_EVERY_COMMAND) expect(packages).not.toContain(name);
});

// A start refused at a setting loaded the logger (pino) and every message and stored-event schema before it read the
// setting: the settings' reader is all it loads now, the one line and exit code unchanged.
test('mailbox serve refused at a setting (MAILBOX_PORT=abc) reads it without loading the logger', async () => {
  const { run, packages } = await loadedBy(['serve'], { MAILBOX_DATA_DIR: dir, MAILBOX_PORT: 'abc' });
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/^mailbox: .*MAILBOX_PORT='abc'.*0\.\.65535/);
  expect(packages).toContain('zod'); // the settings were read
  expect(packages).not.toContain('pino');
});

// --help, an operator's usage error and a refused heartbeat setting loaded the stores' composition (tsyringe, uuid), the
// logger, the heartbeat's metrics (prom-client) and the audit tools' progress bar before commander said its words.
test.each([
  ['mailbox --help', ['--help'], 0],
  ['mailbox heartbeat --onse (a usage error)', ['heartbeat', '--onse'], 2],
  ['mailbox audit verify --jsn', ['audit', 'verify', '--jsn'], 2],
  ['mailbox projections rebuild now', ['projections', 'rebuild', 'now'], 2],
  ['mailbox backup (no file)', ['backup'], 2],
  ['mailbox heartbeat --once --interval abc (a refused setting)', ['heartbeat', '--once', '--interval', 'abc'], 2],
])('%s loads neither the stores, the logger, the metrics nor the progress bar', async (_what, args, code) => {
  const { run, packages } = await loadedBy(args, { MAILBOX_DATA_DIR: dir });
  expect(run.code).toBe(code);
  expect(run.stdout + run.stderr).not.toBe(''); // it said something: the help, the error or the refusal
  expect(packages).toContain('commander');
  for (const name of ['tsyringe', 'uuid', 'pino', 'prom-client', 'cli-progress']) expect(packages).not.toContain(name);
});

test('mailbox heartbeat --once with a Redis target loads ioredis, and publishes there', async () => {
  const redis = await startRedis();
  try {
    const { run, packages } = await loadedBy(['heartbeat', '--once', '--redis-url', redis.url], { MAILBOX_DATA_DIR: dir });
    expect(run.code).toBe(1); // no server keeps the views here (projector_absent)
    expect(JSON.parse(run.stdout)).toMatchObject({ failed: [] });
    expect(packages).toContain('ioredis');
  } finally {
    await redis.stop();
  }
});

test('mailbox serve is ready without the MCP SDK, ioredis or pino-pretty; the first POST /mcp loads the SDK and answers', async () => {
  const file = packagesFile();
  const child = spawn(process.execPath, ['-r', PRELOAD, MAILBOX_BIN, 'serve'], {
    env: {
      PATH: process.env.PATH,
      MAILBOX_DATA_DIR: dir,
      MAILBOX_PORT: '0',
      MAILBOX_LOG_FORMAT: 'json',
      LOADED_PACKAGES_FILE: file,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /mailbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match) resolve(match[1]);
      });
      child.once('exit', () => reject(new Error(`serve exited: ${out}`)));
    });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    child.kill('SIGUSR2');
    await waitFor(() => fs.existsSync(`${file}.now`), { what: 'the packages loaded by the ready server' });
    const ready = packagesIn(`${file}.now`);
    expect(ready).toContain('fastify');
    for (const name of ['@modelcontextprotocol/sdk', 'ioredis', 'pino-pretty']) expect(ready).not.toContain(name);

    const listed = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(5);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  expect(packagesIn(file)).toContain('@modelcontextprotocol/sdk');
});
