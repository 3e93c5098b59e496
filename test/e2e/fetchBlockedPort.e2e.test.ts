/**
 * A port that fetch refuses to connect to (the Fetch standard's "bad ports": 6000, 6665-6669, 10080, ...). A mailbox
 * served on one answered curl, but the mailbox CLI, `mailbox mcp`, the console and /docs could not reach it, and the
 * CLI said "Cannot reach the mailbox at http://127.0.0.1:6667 (bad port); is `mailbox serve` running?" of a server
 * that was running. `mailbox serve` now refuses such a port at start, and the CLI says what "bad port" means.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-blocked-port-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const WHY = 'is one that fetch refuses to connect to (a "bad port" of the Fetch standard, blocked by browsers and Node.js alike)';

test.concurrent.each([
  [
    'MAILBOX_PORT=6667',
    [] as string[],
    { MAILBOX_PORT: '6667' },
    `mailbox: MAILBOX_PORT='6667' is not a port to serve on: port 6667 ${WHY}, so the mailbox CLI, \`mailbox mcp\`, ` +
      'the console and /docs could not reach the mailbox there; set MAILBOX_PORT to another port (default 7420; 0 ' +
      'picks a free one).',
  ],
  [
    '--port 10080',
    ['--port', '10080'],
    { MAILBOX_PORT: '0' },
    `mailbox: --port: '10080' is not a port to serve on: port 10080 ${WHY}, so the mailbox CLI, \`mailbox mcp\`, the ` +
      'console and /docs could not reach the mailbox there; give --port another port (default 7420; 0 picks a free one).',
  ],
])('serve on %s: one line saying why, exit code 2, nothing created', async (name, flags, env, line) => {
  const dataDir = path.join(root, name.replace(/\W+/g, '-'));
  const run = await runCli(['serve', ...flags], { MAILBOX_DATA_DIR: dataDir, ...env }, { timeoutMs: 20_000 });
  expect(run.stderr).toBe(`${line}\n`);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(fs.existsSync(dataDir)).toBe(false); // no admin token generated, no log opened
});

test.concurrent('a client command given such a port says so, not "is `mailbox serve` running?"', async () => {
  const run = await runCli(['inbox'], { MAILBOX_URL: 'http://127.0.0.1:6667', MAILBOX_TOKEN: 'mbx_not_sent' });
  expect(run.stderr).toBe(
    `error: Cannot reach the mailbox at http://127.0.0.1:6667 (bad port); port 6667 ${WHY}, so nothing was sent: serve ` +
      'the mailbox on another port (MAILBOX_PORT). Set --url or MAILBOX_URL. (UNAVAILABLE)\n',
  );
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
});

// The heartbeat daemon's metrics port (its /healthz is the image's health check, a fetch) and an agent's webhook (each
// nudge a fetch) on such a port were taken: the health check never answered, and every nudge failed "bad port".
const METRICS =
  "so the image's health check and a browser could not reach the daemon's /healthz and /metrics there; give another " +
  'port (default 7421; 0 picks a free one), or off for no metrics endpoint.';
test.concurrent.each([
  [
    'heartbeat --metrics-port 6667',
    ['heartbeat', '--metrics-port', '6667'],
    {},
    `mailbox: --metrics-port / MAILBOX_HEARTBEAT_METRICS_PORT: '6667' is not a port to serve on: port 6667 ${WHY}, ${METRICS}`,
  ],
  [
    'heartbeat MAILBOX_HEARTBEAT_METRICS_PORT=10080',
    ['heartbeat'],
    { MAILBOX_HEARTBEAT_METRICS_PORT: '10080' },
    `mailbox: --metrics-port / MAILBOX_HEARTBEAT_METRICS_PORT: '10080' is not a port to serve on: port 10080 ${WHY}, ${METRICS}`,
  ],
  [
    'serve --heartbeat MAILBOX_HEARTBEAT_METRICS_PORT=6000',
    ['serve', '--heartbeat', '--port', '0'],
    { MAILBOX_HEARTBEAT_METRICS_PORT: '6000' },
    `mailbox: --metrics-port / MAILBOX_HEARTBEAT_METRICS_PORT: '6000' is not a port to serve on: port 6000 ${WHY}, ${METRICS}`,
  ],
])('%s: one line saying why, exit code 2, nothing created', async (name, args, env, line) => {
  const dataDir = path.join(root, name.replace(/\W+/g, '-'));
  const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir, ...env }, { timeoutMs: 20_000 });
  expect(run.stderr).toBe(`${line}\n`);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(fs.existsSync(dataDir)).toBe(false);
});

test.concurrent.each([
  ['heartbeat', ['heartbeat', '--once']],
  ['serve --heartbeat', ['serve', '--heartbeat', '--port', '0']],
])("%s with an agent's webhook on such a port: one line naming the agent, exit code 2", async (name, args) => {
  const dir = path.join(root, `webhook-${name.replace(/\W+/g, '-')}`);
  fs.mkdirSync(dir);
  const agentsFile = path.join(dir, 'agents.json');
  const webhook = 'http://hooks.example.test:6667/nudge?key=secret';
  fs.writeFileSync(agentsFile, JSON.stringify({ '@b': { optOut: true }, '@c': { webhook } }));
  const dataDir = path.join(dir, 'data');
  const run = await runCli(
    args,
    {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_HEARTBEAT_AGENTS_FILE: agentsFile,
      MAILBOX_HEARTBEAT_WEBHOOK_SECRET: 'a-secret-of-16-chars-or-more',
    },
    { timeoutMs: 20_000 },
  );
  expect(run.stderr).toBe(
    "mailbox: --agents-file / MAILBOX_HEARTBEAT_AGENTS_FILE: @c's webhook (http://hooks.example.test:6667) is not a URL " +
      `to nudge: port 6667 ${WHY}, so every nudge to @c would fail without a connection; give its webhook another port. ` +
      'Nothing was nudged.\n',
  );
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(fs.existsSync(dataDir)).toBe(false);
});
