/**
 * `mailbox heartbeat` (the daemon) asked to stop with SIGTERM or SIGINT, its views and lease on Redis or Sentinel:
 * it finishes what is in flight, closes its connections and exits 0, also when Redis went down under it. Its open
 * Redis connections (the views, the lease, the wake bus, the nudge publisher) must not keep it up: the process exiting
 * is the signal, a daemon still up at 30 s is killed (exit code null) and that is the failure.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ensureBuilt, startCli, type StartedCli } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redisTopologies';
import { waitFor } from '../support/waitFor';

let sentinel: TestRedisSentinel;
const dirs: string[] = [];
const redises: TestRedis[] = [];
const daemons: StartedCli[] = [];
const servingMailboxes: Mailbox[] = [];
beforeAll(async () => {
  ensureBuilt();
  sentinel = await startRedisSentinel();
}, 60_000);
afterEach(() => {
  for (const daemon of daemons.splice(0)) daemon.child.kill('SIGKILL'); // one a failed test left running
});
afterAll(async () => {
  for (const mailbox of servingMailboxes) await mailbox.close();
  await sentinel.stop();
  for (const redis of redises) await redis.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A heartbeat daemon on a SQLite log with its views on `redisUrl` (@a wrote to @b, idle at once), once it has started;
 * `more`: further settings. With `serving`, the mailbox that wrote the log stays open, keeping the views (the daemon
 * nudges only while a projector does), and is closed after the test.
 */
async function daemonOn(redisUrl: string, more: Record<string, string> = {}, serving = false): Promise<StartedCli> {
  const dir = tempDir('mailbox-heartbeat-stops-');
  dirs.push(dir);
  const redisNamespace = `hbstop-${randomUUID().slice(0, 8)}`;
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent', redisUrl, redisNamespace },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'for b', body: 'x' });
  if (serving) servingMailboxes.push(mailbox);
  else await mailbox.close();
  const env = {
    MAILBOX_DATA_DIR: dir,
    MAILBOX_REDIS_URL: redisUrl,
    MAILBOX_REDIS_NAMESPACE: redisNamespace,
    MAILBOX_HEARTBEAT_METRICS_PORT: 'off',
    ...more,
  };
  const daemon = startCli(['heartbeat', '--interval', '1h', '--idle', '0'], env);
  daemons.push(daemon);
  await waitFor(() => daemon.stdout().includes('"heartbeat daemon started"'), { timeoutMs: 20_000, what: 'the start line' });
  return daemon;
}

/** Signals the daemon and waits for its exit (killed at 30 s: exit code null); its log's messages. */
async function stopped(daemon: StartedCli, signal: NodeJS.Signals): Promise<{ code: number | null; messages: string[] }> {
  daemon.child.kill(signal);
  return exitOf(daemon);
}

/** Waits for the daemon's exit (killed at 30 s: exit code null); its log's messages. */
async function exitOf(daemon: StartedCli): Promise<{ code: number | null; messages: string[] }> {
  const timer = setTimeout(() => daemon.child.kill('SIGKILL'), 30_000);
  const run = await daemon.exited.finally(() => clearTimeout(timer));
  const lines = run.stdout.split('\n').filter((line) => line.startsWith('{'));
  return { code: run.code, messages: lines.map((line) => JSON.parse(line).msg as string) };
}

describe.each([['Redis'], ['Sentinel']])('on %s', (topology) => {
  const url = async () => {
    if (topology === 'Sentinel') return sentinel.url;
    const redis = await startRedis();
    redises.push(redis);
    return redis.url;
  };

  test.each([['SIGTERM'], ['SIGINT']] as const)(
    '%s: says it stops, exits 0',
    async (signal) => {
      const run = await stopped(await daemonOn(await url()), signal);
      expect(run.code).toBe(0);
      expect(run.messages).toContain('heartbeat: stopping (the tick and the nudges in flight finish first)');
      expect(run.messages[run.messages.length - 1]).toBe('heartbeat daemon stopped');
    },
    90_000,
  );
});

test('SIGTERM while a nudge is in flight (a webhook that has not answered): says how many it waits for, then exits 0', async () => {
  const redis = await startRedis();
  redises.push(redis);
  let answer: (() => void) | null = null;
  const webhook = http.createServer((_request, response) => {
    answer = () => response.end('ok');
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  try {
    const agentsFile = path.join(tempDir('mailbox-heartbeat-stops-agents-'), 'agents.json');
    dirs.push(path.dirname(agentsFile));
    const { port } = webhook.address() as AddressInfo;
    fs.writeFileSync(agentsFile, JSON.stringify({ '@b': { webhook: `http://127.0.0.1:${port}/b` } }));
    const daemon = await daemonOn(
      redis.url,
      {
        MAILBOX_HEARTBEAT_AGENTS_FILE: agentsFile,
        MAILBOX_HEARTBEAT_WEBHOOK_SECRET: 'a-secret-of-16-chars-or-more',
        MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT: '60s',
      },
      true,
    );
    await waitFor(() => answer !== null, { timeoutMs: 20_000, what: 'the nudge of @b at its webhook' });
    daemon.child.kill('SIGTERM');
    await waitFor(() => /heartbeat: stopping/.test(daemon.stdout()), { timeoutMs: 20_000, what: 'the stopping line' });
    answer!(); // the nudge is delivered: the daemon may exit
    const run = await exitOf(daemon);
    expect(run.code).toBe(0);
    expect(run.messages).toContain(
      'heartbeat: stopping once the tick and 1 nudge(s) in flight or queued are delivered or have failed (each through ' +
        'its retries); a second signal exits at once, without them (an escalation among them is not tried again)',
    );
    expect(run.messages).toContain('nudge delivered');
    expect(run.messages[run.messages.length - 1]).toBe('heartbeat daemon stopped');
  } finally {
    webhook.closeAllConnections();
    webhook.close();
  }
}, 90_000);

test('SIGTERM once its Redis went down: it still exits 0, not held by the connections retrying', async () => {
  const redis = await startRedis();
  redises.push(redis);
  const daemon = await daemonOn(redis.url);
  await redis.kill!();
  // The positive signal that it saw Redis go: a warning (the tick's store does not answer, or the lease's, or it
  // stepped down); none is said before.
  await waitFor(() => daemon.stdout().includes('"level":40'), { timeoutMs: 20_000, what: 'a warning that Redis is gone' });
  const run = await stopped(daemon, 'SIGTERM');
  expect(run.code).toBe(0);
  expect(run.messages[run.messages.length - 1]).toBe('heartbeat daemon stopped');
}, 90_000);
