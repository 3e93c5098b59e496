/**
 * `mailbox heartbeat --once` as run from a shell beside a running daemon: it opens no port (the
 * daemon's metrics port is taken here), prints exactly its JSON report on stdout, and logs on stderr.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, runCli } from '../support/builtCli';
import { logWithEscalationsOnly } from '../support/escalationsOnlyLog';
import { ADMIN_TOKEN, registerAgents, tempDir, threeAgentsDataDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { restoredLogBesideRedisViews } from '../support/restoredLog';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redisTopologies';

// Each test runs --once as a cron job does, two to four times, each a CLI process beside a mailbox opened here: 5-11 s
// on an idle machine, past the default 30 s at load 10 (CI's first minutes, the checks beside the suite).
jest.setTimeout(90_000);

let dataDir: string;
beforeAll(() => {
  ensureBuilt();
  dataDir = tempDir('mailbox-heartbeat-once-');
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** A data dir whose log (and views) @a, @b and @c are registered in, with one unread message each for @b and @c. */
async function logWithMailForBAndC(prefix: string): Promise<string> {
  const dir = tempDir(prefix);
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'for b', body: 'x' });
  await a.send({ to: '@c', subject: 'for c', body: 'x' });
  await mailbox.close();
  return dir;
}

/**
 * `mailbox heartbeat --once` as a cron job runs it: beside a running server (here a mailbox open in this process, whose
 * projector keeps the views and applies what the run writes to the log: the wakes its nudges made, escalation claims).
 * Without one no projector keeps the views: the alarm projector_absent, no escalation looked at, exit code 1.
 */
async function runBesideServer(...args: Parameters<typeof runCli>): ReturnType<typeof runCli> {
  const mailbox = await createMailbox(
    { dataDir: args[1]!.MAILBOX_DATA_DIR, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  try {
    return await runCli(...args);
  } finally {
    await mailbox.close();
  }
}

/**
 * A later run of --once does not nudge again an unread set an earlier run's nudge reached (the log recorded it):
 * one more message each for @b and @c (from @a) gives both a new set, after the server caught up.
 */
async function newMailForBAndC(dir: string): Promise<void> {
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const a = mailbox.asActor({ identity: '@a', role: 'agent' });
  await a.send({ to: '@b', subject: 'more for b', body: 'y' });
  await a.send({ to: '@c', subject: 'more for c', body: 'y' });
  await mailbox.close();
}

test('no port, the report alone on stdout, the logs on stderr', async () => {
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'hello', body: 'x' });
  await mailbox.close();

  const daemonPort = net.createServer(); // stands for a running daemon's metrics port
  await new Promise<void>((resolve) => daemonPort.listen(0, '127.0.0.1', () => resolve()));
  const port = (daemonPort.address() as net.AddressInfo).port;
  try {
    const run = await runBesideServer(['heartbeat', '--once', '--wake-grace', '0'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_HEARTBEAT_METRICS_PORT: String(port),
    });
    expect(run.code).toBe(0);
    const stdout = run.stdout.trim().split('\n');
    expect(stdout).toHaveLength(1);
    // No Redis, webhook or hook: the nudge went to the log only, and the report does not call it nudged.
    expect(JSON.parse(stdout[0])).toMatchObject({ agents: 3, withUnread: 1, nudged: [], loggedOnly: ['@b'] });
    const logs = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; metrics?: unknown });
    // One tick, no schedule and no metrics port: the log says so, and never "daemon started" with an interval.
    expect(logs.find((entry) => entry.msg === 'heartbeat: ticks on demand only (no schedule)')).toMatchObject({ metrics: null });
    expect(logs.some((entry) => entry.msg === 'heartbeat daemon started' || 'intervalMs' in entry)).toBe(false);
  } finally {
    await new Promise((resolve) => daemonPort.close(resolve));
  }
});

test('a Redis-only variable set without Redis is warned once on stderr, naming where it takes effect', async () => {
  const dir = await logWithMailForBAndC('mailbox-heartbeat-once-redis-only-');
  try {
    const run = await runBesideServer(['heartbeat', '--once', '--wake-grace', '0'], {
      MAILBOX_DATA_DIR: dir,
      MAILBOX_REDIS_PASSWORD: 'not-shown-anywhere',
    });
    expect(run.code).toBe(0);
    const warnings = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((entry) => entry.level === 40);
    expect(warnings.map((entry) => entry.msg)).toEqual([
      'MAILBOX_REDIS_PASSWORD is set but no Redis is configured, so it is ignored: it takes effect only with ' +
        'MAILBOX_REDIS_URL (or MAILBOX_REDIS_SENTINELS with MAILBOX_REDIS_SENTINEL_NAME, or MAILBOX_REDIS_CLUSTER).',
      // Without Redis, a webhook or a hook, no nudge reaches anybody: said once, at its start.
      'heartbeat: no nudge target is set (--redis-url or MAILBOX_REDIS_URL, a "webhook" in --agents-file, or --hook): ' +
        'each nudge will only be written to this log, and no agent told',
    ]);
    expect(run.stderr + run.stdout).not.toContain('not-shown-anywhere');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the report says which nudges reached a target and which were only logged, in the JSON and the log line', async () => {
  const dir = await logWithMailForBAndC('mailbox-heartbeat-once-targets-');
  // A webhook receiver that takes every nudge, for @c alone (the last run below).
  const received: string[] = [];
  const receiver = http.createServer((request, response) => {
    request.on('data', () => {}).on('end', () => response.end());
    received.push(String(request.headers['x-mailbox-nudge-id']));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const agentsFile = `${dir}/agents.json`;
  fs.writeFileSync(
    agentsFile,
    JSON.stringify({ '@c': { webhook: `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/` } }),
  );
  try {
    const logged = await runBesideServer(['heartbeat', '--once', '--wake-grace', '0'], { MAILBOX_DATA_DIR: dir });
    expect(logged.code).toBe(0);
    expect(JSON.parse(logged.stdout)).toMatchObject({ nudged: [], loggedOnly: ['@b', '@c'] });
    const lines = logged.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; identity?: string });
    const said = lines.filter((line) => line.msg.startsWith('nudge'));
    expect(said.map((line) => [line.identity, line.msg])).toEqual(
      ['@b', '@c'].map((identity) => [
        identity,
        'nudge written to the log only (no delivery target configured): the agent was not told',
      ]),
    );

    // A hook serves everyone: each nudge goes to it, listed as nudged, none logged only.
    const hooked = await runBesideServer(['heartbeat', '--once', '--wake-grace', '0', '--hook', '["/bin/true"]'], {
      MAILBOX_DATA_DIR: dir,
    });
    expect(hooked.code).toBe(0);
    expect(JSON.parse(hooked.stdout)).toMatchObject({ nudged: ['@b', '@c'], loggedOnly: [] });

    // The next run (a cron job's) finds both nudges in the log: the same unread sets are not nudged again. (The
    // logged-only nudges of the first run reached nobody: the log has none of them, so the hook's run told both.)
    const again = await runBesideServer(['heartbeat', '--once', '--wake-grace', '0', '--hook', '["/bin/true"]'], {
      MAILBOX_DATA_DIR: dir,
    });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ nudged: [], loggedOnly: [], verdicts: { same_set: 2 } });

    // A webhook for @c alone: @c nudged (through its webhook), @b logged only (new mail for both, no cooldown).
    await newMailForBAndC(dir);
    const mixed = await runBesideServer(
      ['heartbeat', '--once', '--wake-grace', '0', '--cooldown', '0', '--agents-file', agentsFile],
      {
        MAILBOX_DATA_DIR: dir,
        MAILBOX_HEARTBEAT_WEBHOOK_SECRET: 'a-secret-of-sixteen-chars',
      },
    );
    expect(mixed.code).toBe(0);
    expect(JSON.parse(mixed.stdout)).toMatchObject({ nudged: ['@c'], loggedOnly: ['@b'] });
    expect(received).toHaveLength(1);
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a nudge about tasks alone is recorded too: the next --once does not nudge the same waiting tasks again, a new task is', async () => {
  // @b and @c each hold a task from @a and have read its message: nothing unread, a task waiting on each.
  const dir = tempDir('mailbox-heartbeat-once-tasks-');
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  for (const [to, client] of [['@b', b] as const, ['@c', c] as const]) {
    const { messageId } = await a.send({ to, subject: `for ${to}`, body: 'x', task: {} });
    await client.markRead({ messageId });
  }
  await mailbox.close();
  // A webhook receiver for @b and @c that takes every nudge.
  const received: Array<{ identity: string; unread: number; tasksWaiting: number }> = [];
  const receiver = http.createServer((request, response) => {
    let body = '';
    request
      .on('data', (chunk: Buffer) => (body += chunk.toString()))
      .on('end', () => {
        const { identity, unread, tasksWaiting } = JSON.parse(body) as (typeof received)[number];
        received.push({ identity, unread, tasksWaiting });
        response.end();
      });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const webhook = { webhook: `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/` };
  const agentsFile = `${dir}/agents.json`;
  fs.writeFileSync(agentsFile, JSON.stringify({ '@b': webhook, '@c': webhook }));
  // --idle 0: @b and @c just read their mail; --cooldown 0: only the set decides.
  const once = () =>
    runBesideServer(['heartbeat', '--once', '--wake-grace', '0', '--idle', '0', '--cooldown', '0', '--agents-file', agentsFile], {
      MAILBOX_DATA_DIR: dir,
      MAILBOX_HEARTBEAT_WEBHOOK_SECRET: 'a-secret-of-sixteen-chars',
    });
  try {
    const first = await once();
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ nudged: ['@b', '@c'], loggedOnly: [], verdicts: { nudge: 2, no_mail: 1 } });

    // A new task for @c (read too): @c's waiting tasks changed, @b's did not.
    const server = await createMailbox(
      { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    const sent = await server.asActor({ identity: '@a', role: 'agent' }).send({ to: '@c', subject: 'more', body: 'y', task: {} });
    await server.asActor({ identity: '@c', role: 'agent' }).markRead({ messageId: sent.messageId });
    await server.close();

    // The second run (a cron job's) finds @b's nudge in the log: its tasks unchanged, same_set (it was nudged again).
    const second = await once();
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ nudged: ['@c'], verdicts: { nudge: 1, same_set: 1, no_mail: 1 } });
    const byIdentity = (x: { identity: string }, y: { identity: string }) => x.identity.localeCompare(y.identity);
    expect([received.slice(0, 2).sort(byIdentity), received.slice(2)]).toEqual([
      [
        { identity: '@b', unread: 0, tasksWaiting: 1 },
        { identity: '@c', unread: 0, tasksWaiting: 1 },
      ],
      [{ identity: '@c', unread: 0, tasksWaiting: 2 }],
    ]);
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a nudge whose delivery failed is reported as failed, never nudged, and --once exits 3 (a cron job notices)', async () => {
  const dir = await logWithMailForBAndC('mailbox-heartbeat-once-failed-');
  // A webhook receiver that accepts the connection and never answers (each attempt times out), for @c.
  const silent = net.createServer((socket) => void socket.resume()); // reads the request, answers nothing
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  const agentsFile = `${dir}/agents.json`;
  fs.writeFileSync(
    agentsFile,
    JSON.stringify({ '@c': { webhook: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/c` } }),
  );
  const failingHook = `${dir}/hook.sh`;
  fs.writeFileSync(failingHook, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
  const env = {
    MAILBOX_DATA_DIR: dir,
    MAILBOX_HEARTBEAT_WEBHOOK_SECRET: 'a-secret-of-sixteen-chars',
    MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS: '1',
    MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT: '300ms',
  };
  const once = async (hook: string) => {
    const flags = ['--once', '--idle', '0', '--wake-grace', '0', '--cooldown', '0', '--agents-file', agentsFile, '--hook', hook];
    return runBesideServer(['heartbeat', ...flags], env);
  };
  try {
    // Every target fails: nobody was told. Nobody is "nudged"; each failure is listed with its target and error.
    const none = await once(failingHook);
    expect(none.code).toBe(3);
    const report = JSON.parse(none.stdout);
    expect(report).toMatchObject({ nudged: [], loggedOnly: [] });
    expect(report.failed).toEqual([
      { identity: '@b', target: 'hook', error: expect.stringContaining('3') },
      { identity: '@c', target: 'webhook', error: expect.stringContaining('/c') },
      { identity: '@c', target: 'hook', error: expect.stringContaining('3') },
    ]);

    // The hook works, @c's webhook does not: both were told (nudged), the webhook's failure is still said, exit 3.
    const partly = await once('["/bin/true"]');
    expect(partly.code).toBe(3);
    expect(JSON.parse(partly.stdout)).toMatchObject({
      nudged: ['@b', '@c'],
      failed: [{ identity: '@c', target: 'webhook', error: expect.any(String) }],
    });

    // Nothing failed: an empty list and exit 0 (new mail for both: the sets the last run told them of are not told again).
    fs.writeFileSync(agentsFile, '{}');
    await newMailForBAndC(dir);
    const fine = await once('["/bin/true"]');
    expect(fine.code).toBe(0);
    expect(JSON.parse(fine.stdout)).toMatchObject({ nudged: ['@b', '@c'], loggedOnly: [], failed: [] });
  } finally {
    await new Promise((resolve) => silent.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const UNHEARD = 'nudge published; nobody heard it (no listener): the agent was not told';
/** The per-target nudge log lines on stderr: [identity, target, outcome, message], by identity. */
const nudgeLines = (stderr: string) =>
  stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; identity?: string; target?: string; outcome?: string })
    .filter((line) => line.target !== undefined && line.msg.startsWith('nudge'))
    .map((line) => [line.identity, line.target, line.outcome, line.msg])
    .sort((x, y) => String(x[0]).localeCompare(String(y[0])));

test('a nudge published on Redis that nobody hears is reported as unheard, never nudged (exit code 0)', async () => {
  const dir = await logWithMailForBAndC('mailbox-heartbeat-once-unheard-');
  const redis = await startRedis();
  const subscriber = new Redis(redis.url);
  const once = async () => {
    return runBesideServer(['heartbeat', '--once', '--idle', '0', '--wake-grace', '0', '--redis-url', redis.url], {
      MAILBOX_DATA_DIR: dir,
    });
  };
  try {
    // Nobody subscribes: both nudges were published to no listener. Nobody is "nudged"; both are "unheard".
    const nobody = await once();
    expect(nobody.code).toBe(0);
    expect(JSON.parse(nobody.stdout)).toMatchObject({ nudged: [], unheard: ['@b', '@c'], loggedOnly: [], failed: [] });
    // The log line says what happened: published, heard by nobody (it said "nudge delivered").
    expect(nudgeLines(nobody.stderr)).toEqual([
      ['@b', 'redis', 'unheard', UNHEARD],
      ['@c', 'redis', 'unheard', UNHEARD],
    ]);

    // @b listens on its channel: @b was told (nudged), @c still heard by nobody.
    await subscriber.subscribe('mailbox:heartbeat:@b');
    const one = await once();
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ nudged: ['@b'], unheard: ['@c'], loggedOnly: [], failed: [] });
    expect(nudgeLines(one.stderr)).toEqual([
      ['@b', 'redis', 'delivered', 'nudge delivered'],
      ['@c', 'redis', 'unheard', UNHEARD],
    ]);
  } finally {
    subscriber.disconnect();
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** One run of --once beside a server, every nudge through `hook`, messages past `slaMs` unwoken. */
const onceWithHook = (dir: string, hook: string, slaMs: string) =>
  runBesideServer(['heartbeat', '--once', '--idle', '1h', '--wake-grace', '0', '--hook', hook], {
    MAILBOX_DATA_DIR: dir,
    MAILBOX_WAKE_SLA_MS: slaMs,
  });

/** The messages whose escalation the log in `dir` claimed (WakeEscalated), in log order. */
async function wakeEscalatedIn(dir: string): Promise<string[]> {
  const store = SqliteEventStore.open(`${dir}/events.sqlite`, undefined, { readOnly: true });
  try {
    const events = await store.readAll(null, 1_000_000);
    return events
      .filter((event) => event.type === 'WakeEscalated')
      .map((event) => (event.data as { messageId: string }).messageId);
  } finally {
    await store.close();
  }
}

test("an escalation's nudge is reported as the unread set's are: logged only without a target, nudged through a hook", async () => {
  const { dir, toB, toC } = await logWithEscalationsOnly('mailbox-heartbeat-once-escalation-targets-');
  const once = async (args: string[], env: Record<string, string> = {}) => {
    return runBesideServer(['heartbeat', '--once', '--idle', '1h', '--wake-grace', '0', ...args], {
      MAILBOX_DATA_DIR: dir,
      ...env,
    });
  };
  try {
    // No target serves anyone: @b's reply-overdue nudge is written to the log only, and said so (it was listed nowhere);
    // not also "unheard" (published on Redis, nobody subscribed): nothing was published anywhere.
    const overdue = await once([]);
    expect(overdue.code).toBe(0);
    expect(JSON.parse(overdue.stdout)).toMatchObject({
      replies: { overdue: [{ messageId: toB, waitingOn: ['@b'] }] },
      nudged: [],
      loggedOnly: ['@b'],
      unheard: [],
      failed: [],
    });
    // A hook serves everyone: both unwoken messages are escalated and each recipient is told through it.
    const unwoken = await once(['--hook', '["/bin/true"]'], { MAILBOX_WAKE_SLA_MS: '500' });
    expect(unwoken.code).toBe(0);
    const report = JSON.parse(unwoken.stdout);
    expect(report.unwoken.escalated.sort()).toEqual([toB, toC].sort());
    expect(report).toMatchObject({ nudged: ['@b', '@c'], loggedOnly: [], failed: [] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('with no nudge target --once claims no escalation: held, listed with the messages and said; a run with a hook escalates them', async () => {
  const { dir, toB, toC } = await logWithEscalationsOnly('mailbox-heartbeat-once-escalation-no-target-');
  const once = (args: string[]) =>
    runBesideServer(['heartbeat', '--once', '--idle', '1h', '--wake-grace', '0', ...args], {
      MAILBOX_DATA_DIR: dir,
      MAILBOX_WAKE_SLA_MS: '500',
    });
  try {
    // Nobody can be nudged: it claimed both (WakeEscalated) with the nudges written to its log only, and a later run
    // with a hook escalated neither. (The overdue reply is claimed: its sender is woken by the claim itself.)
    const none = await once([]);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({
      unwoken: { unwoken: 2, escalated: [], held: { reason: 'no_nudge_target', messageIds: [toB, toC] } },
      replies: { overdue: [{ messageId: toB, waitingOn: ['@b'] }] },
      loggedOnly: ['@b'],
    });
    const held = none.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; alarm?: string; messageId?: string })
      .filter((line) => line.alarm === 'message_unwoken');
    expect(held.map((line) => [line.level, line.messageId, line.msg])).toEqual(
      [
        [toB, '@b'],
        [toC, '@c'],
      ].map(([id, who]) => [
        50,
        id,
        `ALARM message woke none of its recipients within the wake SLA; not escalated: no nudge target serves ${who} (no ` +
          'Redis, webhook or hook is configured for them), so nobody could be told; it awaits escalation, unclaimed, by a ' +
          'heartbeat with a target',
      ]),
    );
    expect(await wakeEscalatedIn(dir)).toEqual([]);

    // A hook serves everyone: both are escalated now, once each.
    const hooked = await once(['--hook', '["/bin/true"]']);
    expect(hooked.code).toBe(0);
    const report = JSON.parse(hooked.stdout);
    expect(report.unwoken).toEqual({ unwoken: 2, escalated: [toB, toC] });
    expect(report).toMatchObject({ nudged: ['@b', '@c'], failed: [] });
    expect((await wakeEscalatedIn(dir)).sort()).toEqual([toB, toC].sort());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("an escalation's failed nudge names the message it was about (each failure of one agent was the same entry)", async () => {
  const { dir, toB, toC } = await logWithEscalationsOnly('mailbox-heartbeat-once-escalation-failed-');
  const failingHook = `${dir}/hook.sh`;
  fs.writeFileSync(failingHook, '#!/bin/sh\nexit 4\n', { mode: 0o755 });
  try {
    // One run: @b's reply is overdue and both messages woke nobody within 500 ms; every nudge goes to a failing hook.
    const run = await onceWithHook(dir, failingHook, '500');
    expect(run.code).toBe(3);
    const report = JSON.parse(run.stdout);
    expect(report.unwoken.escalated.sort()).toEqual([toB, toC].sort());
    expect(report.nudged).toEqual([]);
    const byMessage = (x: { messageId: string; reason: string }, y: { messageId: string; reason: string }) =>
      `${x.messageId}${x.reason}`.localeCompare(`${y.messageId}${y.reason}`);
    const error = expect.stringContaining('exited with 4');
    expect([...report.failed].sort(byMessage)).toEqual(
      [
        { identity: '@b', reason: 'reply-overdue', messageId: toB, target: 'hook', error },
        { identity: '@b', reason: 'unwoken', messageId: toB, target: 'hook', error },
        { identity: '@c', reason: 'unwoken', messageId: toC, target: 'hook', error },
      ].sort(byMessage),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('many unwoken messages to @a, @b, @c: --once runs the hook once per recipient with all its ids, and lists them all', async () => {
  const dir = tempDir('mailbox-heartbeat-once-escalations-gathered-');
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const agents = await registerAgents(mailbox, ['@s', '@a', '@b', '@c']);
  const expected: Record<string, string[]> = { '@a': [], '@b': [], '@c': [] };
  const all: string[] = [];
  for (const to of [...Array(5).fill(['@a', '@b', '@c']), ...Array(3).fill(['@a'])] as string[][]) {
    const { messageId } = await agents['@s'].send({ to, subject: 'x', body: 'x' });
    all.push(messageId);
    for (const identity of to) expected[identity].push(messageId);
  }
  // All three acted since (a send that wakes nobody): no unread-set nudge is due, every nudge is the alarm's.
  for (const identity of ['@a', '@b', '@c']) {
    await agents[identity].send({ to: '@s', subject: 'busy', body: '.', wakeSuppressed: true });
  }
  await mailbox.close();
  // A file per run (the runs are concurrent): its process id names it.
  const hook = `${dir}/hook.sh`;
  fs.writeFileSync(hook, `#!/bin/sh\ncat > ${dir}/run.$$.json\n`, { mode: 0o755 });
  try {
    const run = await onceWithHook(dir, hook, '1');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect([...report.unwoken.escalated].sort()).toEqual([...all].sort());
    expect(report).toMatchObject({ nudged: ['@a', '@b', '@c'], failed: [] });
    // Three hook runs (before: 5 x 3 + 3 = 18), each carrying every message escalated to its recipient.
    const nudges = fs
      .readdirSync(dir)
      .filter((name) => /^run\.\d+\.json$/.test(name))
      .map(
        (name) =>
          JSON.parse(fs.readFileSync(`${dir}/${name}`, 'utf8')) as {
            identity: string;
            messageIds: string[];
            messageCount: number;
          },
      );
    expect(
      nudges.map(({ identity, messageIds, messageCount }) => [identity, [...messageIds].sort(), messageCount]).sort(),
    ).toEqual(Object.entries(expected).map(([identity, ids]) => [identity, [...ids].sort(), ids.length]));
    expect((await wakeEscalatedIn(dir)).sort()).toEqual([...all].sort());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("an escalation's nudge published on Redis that nobody hears is reported as unheard (it was listed nowhere)", async () => {
  const { dir, toB, toC } = await logWithEscalationsOnly('mailbox-heartbeat-once-escalation-unheard-');
  const redis = await startRedis();
  const once = async (env: Record<string, string> = {}) => {
    return runBesideServer(['heartbeat', '--once', '--idle', '1h', '--wake-grace', '0', '--redis-url', redis.url], {
      MAILBOX_DATA_DIR: dir,
      ...env,
    });
  };
  try {
    // The reply to @a is overdue: @b is nudged about it (reason reply-overdue) on its channel, where nobody listens.
    const overdue = await once();
    expect(overdue.code).toBe(0);
    expect(JSON.parse(overdue.stdout)).toMatchObject({
      replies: { overdue: [{ messageId: toB, waitingOn: ['@b'] }] },
      nudged: [],
      loggedOnly: [],
      unheard: ['@b'],
      failed: [],
    });

    // Both messages woke nobody within a 500 ms wake SLA: escalated, each recipient nudged (reason unwoken), unheard.
    const unwoken = await once({ MAILBOX_WAKE_SLA_MS: '500' });
    expect(unwoken.code).toBe(0);
    const report = JSON.parse(unwoken.stdout);
    expect(report.unwoken.escalated.sort()).toEqual([toB, toC].sort());
    expect(report).toMatchObject({ nudged: [], loggedOnly: [], unheard: ['@b', '@c'], failed: [] });
  } finally {
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('durations take days, as expectsReplyBy does (1d was refused); beyond the timer limit still refused', async () => {
  const days = await runBesideServer(['heartbeat', '--once', '--idle', '1d', '--interval', '1d'], { MAILBOX_DATA_DIR: dataDir });
  expect({ code: days.code, stderr: days.stderr.includes('VALIDATION_FAILED') }).toEqual({ code: 0, stderr: false });
  expect(JSON.parse(days.stdout)).toHaveProperty('nudged');

  const beyond = await runCli(['heartbeat', '--once', '--interval', '25d'], { MAILBOX_DATA_DIR: dataDir });
  expect(beyond.code).toBe(2);
  expect(beyond.stderr).toMatch(/^mailbox: --interval: '25d' is too long: give a duration of at most 2147483647 ms[^\n]*\n$/);

  const malformed = await runCli(['heartbeat', '--once', '--idle', '1 week'], { MAILBOX_DATA_DIR: dataDir });
  expect(malformed.code).toBe(2);
  expect(malformed.stderr).toBe(
    "mailbox: --idle: '1 week' is not a duration: give one such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds\n",
  );
});

/** A data dir whose views lag its log by two sends (the projector died before them), and the mailbox still open. */
async function viewsTwoBehind(dir: string) {
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent', awaitProjectionMs: 0 },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await mailbox.runner.stop(); // the projector dies: what follows reaches the log, never the views
  await a.send({ to: '@b', subject: 'stuck', body: 'x' });
  await a.send({ to: '@c', subject: 'stuck too', body: 'y' });
  return mailbox;
}

const stderrLines = (stderr: string) =>
  stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; alarm?: string; level: number; lagNotWatched?: string });

test('views behind the log whose checkpoint does not move for --stall-after: stalled, the alarm, exit code 1 (it was 0)', async () => {
  const dir = tempDir('mailbox-heartbeat-once-stalled-');
  const mailbox = await viewsTwoBehind(dir);
  // A server up whose projector is stuck (a poison event, say): it renews its live mark on the views, the checkpoint
  // stands still. Renewed here each second, as such a server does.
  const logIdentity = await mailbox.eventStore.logIdentity();
  await mailbox.projections.markLiveWriter(logIdentity);
  const renewing = setInterval(() => void mailbox.projections.markLiveWriter(logIdentity).catch(() => undefined), 1_000);
  try {
    const run = await runCli(['heartbeat', '--once', '--stall-after', '1s', '--wake-grace', '0'], { MAILBOX_DATA_DIR: dir });
    // One sample saw the lag and called it `stalled: false`: --once exited 0 on any pipeline, never 1 as documented.
    expect([run.code, JSON.parse(run.stdout).pipeline]).toEqual([
      1,
      { head: '5', checkpoint: '3', lag: '2', stalled: true, stuckForMs: expect.any(Number), projectorLive: true },
    ]);
    expect(JSON.parse(run.stdout).pipeline.stuckForMs).toBeGreaterThanOrEqual(1000);
    const logs = stderrLines(run.stderr);
    // It says why it waits, then raises the alarm as the daemon does.
    expect(logs.find((line) => line.msg.startsWith('the views are behind the log (lag 2 events)'))).toBeDefined();
    expect(logs.filter((line) => line.alarm === 'projection_stalled')).toEqual([
      expect.objectContaining({ level: 50, msg: expect.stringContaining('ALARM projection stalled') }),
    ]);
  } finally {
    clearInterval(renewing);
    await mailbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('views behind the log and no server keeping them: --once exits 1 at once, saying it did not watch (it waited --stall-after)', async () => {
  const dir = tempDir('mailbox-heartbeat-once-lag-no-projector-');
  await (await viewsTwoBehind(dir)).close(); // and the server is stopped
  try {
    const started = Date.now();
    // The default --stall-after (60 s): a cron job's run watched a checkpoint nobody would move for a whole minute.
    const run = await runCli(['heartbeat', '--once', '--wake-grace', '0'], { MAILBOX_DATA_DIR: dir }, { timeoutMs: 90_000 });
    const elapsedMs = Date.now() - started;
    expect(run.code).toBe(1);
    expect(elapsedMs).toBeLessThan(30_000); // generous: the run starts, looks twice 1.5 s apart and exits
    expect(JSON.parse(run.stdout).pipeline).toEqual({
      head: '5',
      checkpoint: '3',
      lag: '2',
      stalled: false,
      stuckForMs: expect.any(Number), // the time it looked, not --stall-after
      projectorLive: false,
      lagNotWatched: { reason: 'projector_absent' },
    });
    const logs = stderrLines(run.stderr);
    expect(logs.filter((line) => line.alarm !== undefined || line.lagNotWatched !== undefined)).toEqual([
      expect.objectContaining({
        level: 50,
        alarm: 'projector_absent',
        msg: expect.stringMatching(/^ALARM no projector keeps the views/),
      }),
      expect.objectContaining({
        level: 40,
        lagNotWatched: 'projector_absent',
        msg: expect.stringContaining(
          'the views are behind the log (lag 2 events) and no projector keeps them: their checkpoint was not watched ' +
            'for --stall-after, since nobody would move it',
        ),
      }),
    ]);
    expect(logs.some((line) => line.msg.includes('watching their checkpoint'))).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

test('a log restored from an older backup (the views ahead of its head): --once reports nothing from those views, says both positions and the remedy, exit 2', async () => {
  const dir = await threeAgentsDataDir('mailbox-heartbeat-restored-');
  fs.copyFileSync(`${dir}/events.sqlite`, `${dir}/backup.sqlite`);
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const head = await mailbox.eventStore.headPosition();
  const logIdentity = await mailbox.eventStore.logIdentity();
  await registerAgents(mailbox, ['@d', '@e']);
  const views = (await mailbox.projections.checkpoint())!;
  await mailbox.close();
  fs.copyFileSync(`${dir}/backup.sqlite`, `${dir}/events.sqlite`); // the log restored from the backup; the views stay

  const run = await runCli(['heartbeat', '--once'], { MAILBOX_DATA_DIR: dir });
  // It printed a tick report read from the views (agents: 5, two of them registered in no event of this log), exit 0.
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
  // One line, ending with the remedy (it was the JSON envelope, as no other refusal at start is without --json); the
  // remedy the message names is not repeated after it.
  const line = run.stderr.trimEnd().split('\n').pop()!;
  expect(line).toMatch(
    /^mailbox: The views in the SQLite views file .* ahead of this event log's head .* `mailbox projections rebuild --take-over`, or start with MAILBOX_PROJECTIONS_ON_FOREIGN=take-over\.$/,
  );
  expect(line.split('mailbox projections rebuild')).toHaveLength(2);
  // No later run mends it: said as 'Operator action needed' with the remedy in operatorAction (it was 'Service unavailable').
  const json = await runCli(['heartbeat', '--once', '--json'], { MAILBOX_DATA_DIR: dir });
  expect({ code: json.code, stdout: json.stdout }).toEqual({ code: 2, stdout: '' });
  expect(JSON.parse(json.stderr.trimEnd().split('\n').pop()!)).toMatchObject({
    error: 'Operator action needed',
    code: 'UNAVAILABLE',
    operatorAction: 'mailbox projections rebuild --take-over (rebuilds the views from this log)',
    message: expect.stringContaining(
      `The views in the SQLite views file ${dir}/views.sqlite stand at log position ${views}, ahead of this event ` +
        `log's head (${head}; log ${logIdentity}): the log was replaced or lost events; refusing to serve or overwrite them.`,
    ),
    checkpoint: `${views}`,
    head: `${head}`,
  });
  expect(run.stderr).toContain('mailbox projections rebuild --take-over');
});

/**
 * The same refusal with the views on Redis (a SQLite log restored from a backup taken before @d and @e registered,
 * their views kept on Redis): the refused --once exits as on SQLite. It printed the refusal and then stayed up on its
 * open Redis connections (exit code 2 set, never reached) until killed, on Redis and on Sentinel alike.
 */
describe('a refused --once with the views on Redis closes its connections and exits', () => {
  let redis: TestRedis;
  let sentinel: TestRedisSentinel;
  const dirs: string[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    sentinel = await startRedisSentinel();
  }, 60_000);
  afterAll(async () => {
    await redis.stop();
    await sentinel.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function restoredLogBesideViewsOn(redisUrl: string): Promise<Record<string, string>> {
    const dir = tempDir('mailbox-heartbeat-once-refused-');
    dirs.push(dir);
    return restoredLogBesideRedisViews(dir, redisUrl, `hbonce-${randomUUID().slice(0, 8)}`);
  }

  test.each([['Redis'], ['Sentinel']])(
    'on %s: the refusal in one line, exit code 2 (it was never reached)',
    async (topology) => {
      const env = await restoredLogBesideViewsOn(topology === 'Redis' ? redis.url : sentinel.url);
      // The process exiting is the signal; a run still up at 30 s is killed (exit code null): that is the failure.
      const run = await runCli(['heartbeat', '--once'], env, { timeoutMs: 30_000 });
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines.filter((line) => !line.startsWith('{"level"'))).toEqual([lines[lines.length - 1]]);
      expect(lines[lines.length - 1]).toMatch(
        /^mailbox: The views in .* stand at log position 5, ahead of this event log's head \(3; .*`mailbox projections rebuild --take-over`/,
      );
    },
    90_000,
  );
});
