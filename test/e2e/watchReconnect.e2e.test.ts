/**
 * `mailbox watch` across a server that is stopped, stays down a while, and comes back: one line when the stream is lost,
 * one when it is back, and back within a few seconds of the server. Its backoff grew to 30 s between attempts, so a
 * watcher came back up to ~28 s after the server, and it printed "wake stream lost (...); reconnecting in N ms" at every
 * attempt. Real processes: `mailbox serve` (SQLite data dir, stopped with SIGTERM and started again on the same port)
 * and `mailbox watch`, as a user runs them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { ensureBuilt, MAILBOX_BIN, ROOT } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { callUrl } from '../support/httpServer';
import { freePort } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

interface Lines {
  stdout: Array<{ at: number; line: string }>;
  stderr: Array<{ at: number; line: string }>;
}

const children: ChildProcess[] = [];
let dataDir: string;

beforeAll(() => ensureBuilt(), 120_000);
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const withoutMailboxVariables = () =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));

function run(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; lines: Lines; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [MAILBOX_BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: Lines = { stdout: [], stderr: [] };
  for (const stream of ['stdout', 'stderr'] as const) {
    let pending = '';
    child[stream]!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const line of complete) lines[stream].push({ at: Date.now(), line });
    });
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

async function serve(port: number) {
  const server = run(['serve'], {
    ...withoutMailboxVariables(),
    MAILBOX_PORT: String(port),
    MAILBOX_DATA_DIR: dataDir,
    MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILBOX_RATE_LIMIT_PER_SECOND: '0',
    MAILBOX_LOG_LEVEL: 'warn',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200, {
    timeoutMs: 60_000,
    what: 'mailbox serve ready',
  });
  return { ...server, readyAt: Date.now() };
}

/** While the server is down: a listener on its port that drops every connection, counting the watcher's attempts. */
async function droppingListener(port: number) {
  const attempts: number[] = [];
  const listener = net.createServer((socket) => {
    attempts.push(Date.now());
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
  return { attempts, close: () => new Promise<void>((resolve) => listener.close(() => resolve())) };
}

test('a watcher across a server stopped for a while: one line lost, one line back, back within seconds of the server, then its wakes', async () => {
  dataDir = tempDir('mailbox-watch-reconnect-');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let server = await serve(port);
  const register = async (identity: string) =>
    (await callUrl(url, 'POST', '/v1/agents', { token: ADMIN_TOKEN, body: { identity }, timeoutMs: 10_000 })).body
      .token as string;
  const [a, b] = [await register('@a'), await register('@b'), await register('@c')];
  const watch = run(['watch', '--count', '1', '--url', url, '--token', b], withoutMailboxVariables());
  const synced = (n: number) => watch.lines.stdout.filter(({ line }) => line.startsWith('sync:')).length >= n;
  await waitFor(() => synced(1), { timeoutMs: 30_000, what: 'the first sync line' });

  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  const down = await droppingListener(port);
  // Five attempts refused: the old backoff then waited 12.8 to 16 s before the next (8 s after four).
  await waitFor(() => down.attempts.length >= 5, { timeoutMs: 60_000, everyMs: 50, what: 'five reconnect attempts' });
  await down.close();
  server = await serve(port);
  await waitFor(() => synced(2), { timeoutMs: 30_000, what: 'a sync line after the restart' });
  const backAt = watch.lines.stdout.filter(({ line }) => line.startsWith('sync:'))[1].at;
  // At most 5 s between attempts (with jitter), plus time for a loaded machine: it was up to 16 s after five attempts.
  expect(backAt - server.readyAt).toBeLessThan(10_000);

  const sent = await callUrl(url, 'POST', '/v1/messages', {
    token: a,
    body: { to: '@b', subject: 'after the restart', body: 'x' },
    timeoutMs: 10_000,
  });
  expect(sent.status).toBe(201);
  expect(await watch.exited).toBe(0);
  expect(watch.lines.stdout.map(({ line }) => line.split(':')[0])).toEqual(['sync', 'server closed the stream', 'sync', 'wake']);
  expect(watch.lines.stdout[3].line).toContain('after the restart');
  // One line when lost, one when back: not one per attempt.
  expect(watch.lines.stderr.map(({ line }) => line)).toEqual([
    `lost the stream to ${url}/v1/wake: the server ended it: server shutting down; reconnecting`,
    expect.stringMatching(new RegExp(`^back on the stream to ${url}/v1/wake \\(lost for \\d+\\.\\d s\\)$`)),
  ]);
  server.child.kill('SIGTERM');
  await server.exited;
}, 180_000);
