/**
 * The disk under the event log fills up: a send is answered 503 UNAVAILABLE saying that nothing was written, never
 * 500 INTERNAL with an error-level stack per request (as before: SQLITE_FULL went out untranslated); /readyz says
 * writes are failing (status degraded) while reads go on; and the send wrote nothing, for either recipient.
 * The full disk is a file size limit on the server's process (`ulimit -f`, with SIGXFSZ ignored so that a write
 * past it fails instead of killing the process), which no unprivileged test could get from a real filesystem.
 * Large bodies make the log reach it long before the views file does; small ones, the views file. And a start on a
 * disk that is already full says so in one line (it printed a stack trace).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cliOnSources } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { freePort } from '../support/redisServer';

const FILE_LIMIT_KIB = 3072;
const BODY = 'b'.repeat(60_000);

let child: ChildProcess;
let url: string;
let output = '';
const children: ChildProcess[] = [];

async function call(method: string, pathname: string, token?: string, body?: unknown) {
  const response = await fetch(`${url}${pathname}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as Record<string, any> };
}

/** `mailbox serve` as a shell command line (compiled output mapped to the sources, as the other e2e tests run it). */
const serveCommand = () => [process.execPath, ...cliOnSources('serve')].map((arg) => `'${arg}'`).join(' ');

/** `mailbox serve` whose files may not grow past FILE_LIMIT_KIB: the first to reach it meets a full disk. */
async function startLimitedServer(awaitProjectionMs: number): Promise<void> {
  output = '';
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn('/bin/sh', ['-c', `trap '' XFSZ; ulimit -f ${FILE_LIMIT_KIB}; exec ${serveCommand()}`], {
    env: {
      PATH: process.env.PATH,
      MAILBOX_PORT: String(port),
      MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
      MAILBOX_LOG_LEVEL: 'warn',
      MAILBOX_DATA_DIR: tempDir(),
      MAILBOX_AWAIT_PROJECTION_MS: String(awaitProjectionMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  while (
    (await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function registerThree(): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) {
    const registered = await call('POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(registered.status).toBe(201);
    tokens[identity] = registered.body.token as string;
  }
  return tokens;
}

afterAll(async () => {
  for (const running of children) {
    if (running.exitCode !== null) continue;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  }
});

test('a full disk under the log: 503 UNAVAILABLE that says nothing was written, no event, readiness degraded, reads still served', async () => {
  await startLimitedServer(5000);
  const tokens = await registerThree();
  const sent: Array<{ to: string; subject: string }> = [];
  let refused: { status: number; body: Record<string, any> } | null = null;
  let headBefore: string | null = null;
  for (let i = 0; i < 200 && refused === null; i++) {
    headBefore = (await call('GET', '/readyz')).body.eventStore.head as string;
    const to = i % 2 === 0 ? '@b' : '@c';
    const subject = `large ${i}`;
    const answer = await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: BODY });
    if (answer.status === 201) sent.push({ to, subject });
    else refused = { ...answer, body: { ...answer.body, subject, to } };
  }
  expect(sent.length).toBeGreaterThan(5); // the limit was reached by the log growing, not at start
  expect(refused).not.toBeNull();
  expect(refused!.status).toBe(503);
  expect(refused!.body).toMatchObject({ code: 'UNAVAILABLE' });
  expect(refused!.body.message).toContain('The event log could not be written');
  expect(refused!.body.message).toContain('Nothing was written');
  expect(JSON.stringify(refused!.body)).not.toMatch(/SQLITE|disk I\/O error|database or disk is full/); // no driver wording

  // Nothing of it was written: the log's head did not move, and neither recipient has it.
  const readiness = await call('GET', '/readyz');
  expect(readiness.body.eventStore.head).toBe(headBefore);
  expect(readiness.status).toBe(200);
  expect(readiness.body.status).toBe('degraded');
  expect(readiness.body.eventStore.writes.failing).toContain('The event log could not be written');
  for (const identity of ['@b', '@c']) {
    const inbox = await call('GET', '/v1/messages?limit=200', tokens[identity]);
    expect(inbox.status).toBe(200); // reads are served
    const subjects = (inbox.body.messages as Array<{ subject: string }>).map((m) => m.subject);
    expect(subjects).not.toContain(refused!.body.subject);
    expect(subjects.sort()).toEqual(
      sent
        .filter((s) => s.to === identity)
        .map((s) => s.subject)
        .sort(),
    );
  }
  // Said at warn with its cause, not as an unexpected failure with a stack.
  expect(output).not.toContain('request failed unexpectedly');
  expect(output).toContain('The event log could not be written');
}, 120_000);

test('a full disk under the views: the send is durable and says its views lag, and readiness names the full disk', async () => {
  await startLimitedServer(300);
  const tokens = await registerThree();
  // Small messages: the views file (about nine pages an event) reaches the limit long before the log.
  let lagging: Record<string, any> | null = null;
  for (let i = 0; i < 5_000 && lagging === null; i++) {
    const answer = await call('POST', '/v1/messages', tokens['@a'], {
      to: i % 2 === 0 ? '@b' : '@c',
      subject: `small ${i}`,
      body: 'x',
    });
    expect(answer.status).toBe(201); // the log took it
    if (answer.body.warnings?.some((w: { code: string }) => w.code === 'VIEWS_LAGGING')) lagging = answer.body;
  }
  expect(lagging).not.toBeNull();
  const readiness = await call('GET', '/readyz');
  expect(readiness.body.status).toBe('degraded');
  // What SQLite said, not what a ROLLBACK after it said ('cannot rollback - no transaction is active', as before).
  // (A write past a file size limit fails with EFBIG, which SQLite reports as an I/O error; ENOSPC as a full disk.)
  expect(readiness.body.projections.lastError).toMatch(/^(disk I\/O error|database or disk is full)$/);
}, 120_000);

test('a start on a full disk: one line naming MAILBOX_DATA_DIR and the full disk, exit code 2, no stack trace', async () => {
  const dataDir = tempDir();
  const started = spawn('/bin/sh', ['-c', `trap '' XFSZ; ulimit -f 16; exec ${serveCommand()}`], {
    env: { PATH: process.env.PATH, MAILBOX_PORT: '0', MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(started);
  let stderr = '';
  started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => started.once('exit', resolve));
  expect(code).toBe(2);
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^mailbox: MAILBOX_DATA_DIR='.*': the disk (is full|failed a read or write)/);
  expect(lines[0]).toContain('set MAILBOX_DATA_DIR to a writable place with room');
  expect(stderr).not.toMatch(/\n\s+at /);
}, 60_000);
