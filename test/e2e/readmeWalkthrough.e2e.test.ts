/**
 * The README walkthrough, run as written: its `sh` blocks ("With curl", "With the CLI") are
 * extracted and run by bash (`set -eo pipefail`) against a fresh `mailbox serve`, so the README
 * cannot drift from the product. A second run of the curl block fails loudly (409 AGENT_EXISTS
 * named, non-zero exit) instead of carrying on with ALICE=undefined.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, MAILBOX_BIN, ROOT, type CliRun } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

/** The ```sh blocks of the README between two headings. */
function readmeBlocks(from: string, to: string): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(from), readme.indexOf(to));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
}

let root: string;
let server: ChildProcess;
let url: string;
const dataDir = () => path.join(root, 'data');

beforeAll(async () => {
  ensureBuilt();
  root = tempDir('mailbox-readme-');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  server = spawn(process.execPath, [MAILBOX_BIN, 'serve'], {
    cwd: root,
    env: { ...env, MAILBOX_DATA_DIR: dataDir(), MAILBOX_PORT: '0' },
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const listening = /mailbox listening on (http:\/\/[^\s"]+)/.exec(out);
      if (listening) resolve(listening[1]);
    });
    server.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
});
afterAll(async () => {
  if (server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(root, { recursive: true, force: true });
});

const bash = (script: string): Promise<CliRun> =>
  new Promise((resolve) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
    const child = spawn('bash', ['-c', `set -eo pipefail\n${script}`], {
      cwd: ROOT,
      env: { ...env, MAILBOX_URL: url, MAILBOX_DATA_DIR: dataDir() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

test('the curl walkthrough runs as written: register, wake stream, send, wrong shape refused, read, count', async () => {
  const [curl] = readmeBlocks('### With curl', '### With the CLI');
  const run = await bash(curl);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const lines = run.stdout.split('\n');
  // Each response is a line of its own (no response runs into the stream's output).
  const json = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
  expect(json.find((body) => body.status === 'sent')).toMatchObject({ recipients: ['@bob'] });
  expect(json.find((body) => body.code === 'INVALID_RECIPIENT_SHAPE')).toMatchObject({ to: 'AGENT:gpt' });
  expect(json.find((body) => body.body === 'Please look at the diff.')).toMatchObject({ subject: 'review #12' });
  expect(json.find((body) => body.status === 'read')).toMatchObject({ readAt: expect.any(String) });
  expect(json[json.length - 1]).toMatchObject({ unread: 0 });
  expect(lines).toContain('event: sync');
  expect(lines).toContain('event: wake');

  // A second run: the agents exist; the helper says so and the script stops (no ALICE=undefined, no 401s after).
  const again = await bash(curl);
  expect(again.code).not.toBe(0);
  expect(again.stderr).toMatch(/^no token: Agent @alice is already registered/);
  expect(again.stdout + again.stderr).not.toContain('undefined');
}, 90_000);

test('the CLI walkthrough runs as written: agents, watch, send, broadcast, inbox, read by captured id, new token', async () => {
  const [cli] = readmeBlocks('### With the CLI', '### From an MCP client');
  const run = await bash(cli);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/@carol\s+agent\s+registered[\s\S]*@dave/);
  expect(run.stdout).toMatch(/sync: 0 unread/);
  expect(run.stdout).toMatch(/Sent [0-9a-f-]{36} to @dave/);
  expect(run.stdout).toMatch(/Sent [0-9a-f-]{36} to AGENT:\*/);
  expect(run.stdout).toContain('Freeze merges at 13:45.');
  expect(run.stdout).toMatch(/New token for @dave at \S+; the old one no longer works/);

  // A second run: the agents exist. The helper read the empty stdout of the refused `agent add --json` (its envelope is
  // on stderr) and died in a SyntaxError stack trace; it says there is no token and the script stops.
  const again = await bash(cli);
  expect(again.code).not.toBe(0);
  expect(again.stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(/^\{"error":"Agent exists","code":"AGENT_EXISTS","message":"Agent @carol is already registered/),
    'no token: the error is above',
  ]);
}, 90_000); // a dozen CLI processes one after another: past 30 s on a loaded machine
