/**
 * `mailbox heartbeat` beside `mailbox serve` on the embedded default (the SQLite views file the server keeps): when the
 * server stops, nothing is appended and the views do not lag, so the stall alarm never fired and the daemon's /healthz
 * said healthy for as long as the server was down (agents could neither send nor read). The daemon now looks each tick
 * for the server's live mark on the views: none is the alarm `projector_absent` (/healthz 503, /metrics, one error
 * line), cleared when a server keeps the views again.
 */
import fs from 'node:fs';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ensureBuilt, runCli, startCli, type StartedCli } from '../support/builtCli';
import { logWithEscalationsOnly } from '../support/escalationsOnlyLog';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { freePort } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let dir: string;
const children: StartedCli[] = [];
beforeAll(() => {
  ensureBuilt();
  dir = tempDir('mailbox-heartbeat-server-stopped-');
});
afterAll(() => {
  for (const child of children) child.child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

async function serve(dataDir = dir): Promise<StartedCli> {
  const server = startCli(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN });
  children.push(server);
  await waitFor(() => server.stdout().includes('mailbox listening on'), { timeoutMs: 30_000, what: 'the server listening' });
  return server;
}

async function stop(child: StartedCli): Promise<void> {
  child.child.kill('SIGTERM');
  await child.exited;
}

test('a stopped server is an alarm on the daemon (it said healthy), cleared once a server keeps the views again', async () => {
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  await a.send({ to: '@b', subject: 'for b', body: 'x' });
  await mailbox.close();

  let server = await serve();
  const port = await freePort();
  const daemon = startCli(['heartbeat', '--interval', '200ms', '--metrics-port', String(port)], { MAILBOX_DATA_DIR: dir });
  children.push(daemon);
  const health = async () => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
    if (response === null) return null;
    const body = (await response.json()) as {
      healthy: boolean;
      alarms: Array<{ alarm: string }>;
      lastTick: { pipeline: { projectorLive?: boolean; lag: string } } | null;
    };
    return { status: response.status, ...body };
  };
  const metric = async () =>
    /^mailbox_heartbeat_projector_live (\d)$/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1];

  await waitFor(async () => (await health())?.lastTick?.pipeline.projectorLive === true, {
    timeoutMs: 30_000,
    what: 'a tick that saw the server keep the views',
  });
  expect(await health()).toMatchObject({ status: 200, healthy: true, alarms: [] });
  expect(await metric()).toBe('1');

  await stop(server);
  await waitFor(async () => (await health())?.status === 503, { timeoutMs: 30_000, what: 'the daemon saying unhealthy' });
  const down = await health();
  // Nothing was appended: no lag, no stall; the alarm says what is missing.
  expect(down).toMatchObject({ healthy: false, alarms: [{ alarm: 'projector_absent' }] });
  expect(down?.lastTick?.pipeline).toMatchObject({ lag: '0', projectorLive: false });
  expect(await metric()).toBe('0');
  const alarmLines = () =>
    daemon
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"alarm":"projector_absent"'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
  expect(alarmLines()).toEqual([
    expect.objectContaining({ level: 50, msg: expect.stringMatching(/^ALARM no projector keeps the views/) }),
  ]);
  // No escalation is looked at meanwhile: said once for the absence, not at every tick (three more ticks seen first).
  const ticks = async () =>
    Number(/^mailbox_heartbeat_ticks_total (\d+)$/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1]);
  const ticked = await ticks();
  await waitFor(async () => (await ticks()) >= ticked + 3, { timeoutMs: 30_000, what: 'three more ticks' });
  const heldLines = () =>
    daemon
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"held":"projector_absent"'));
  expect(heldLines().map((line) => (JSON.parse(line) as { level: number }).level)).toEqual([40]);

  server = await serve();
  await waitFor(async () => (await health())?.status === 200, { timeoutMs: 30_000, what: 'the daemon healthy again' });
  expect(await health()).toMatchObject({ healthy: true, alarms: [] });
  expect(alarmLines()).toEqual([
    expect.objectContaining({ level: 50 }),
    expect.objectContaining({ level: 30, msg: 'alarm cleared: a projector keeps the views again' }),
  ]);
  await stop(daemon);
  await stop(server);
});

/** The one-time escalation claims in the data dir's log (WakeEscalated, ReplyOverdue), by type and message. */
async function claimsIn(dataDir: string): Promise<string[]> {
  const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'), undefined, { readOnly: true });
  try {
    const events = await store.readAll(null, 1_000_000);
    return events
      .filter((event) => event.type === 'WakeEscalated' || event.type === 'ReplyOverdue')
      .map((event) => `${event.type} ${(event.data as { messageId: string }).messageId}`)
      .sort();
  } finally {
    await store.close();
  }
}

test('--once beside a stopped server exits 1 (it was 0) and escalates nothing from the views nobody keeps; a server back, it does', async () => {
  // @a asked @b for a reply due in 1 s (now past) and wrote to @c; neither message woke anyone; all three acted since.
  const { dir: escalationsDir, toB, toC } = await logWithEscalationsOnly('mailbox-heartbeat-once-server-stopped-');
  try {
    await stop(await serve(escalationsDir)); // the server ran, and stopped
    const once = () =>
      runCli(['heartbeat', '--once', '--idle', '1h', '--wake-grace', '0', '--hook', '["/bin/true"]'], {
        MAILBOX_DATA_DIR: escalationsDir,
        MAILBOX_WAKE_SLA_MS: '500',
      });
    const down = await once();
    // It exited 0 (a cron health check said all well) and escalated both messages and the overdue reply, each claimed
    // for good from views nobody kept.
    expect(down.code).toBe(1);
    const report = JSON.parse(down.stdout);
    expect(report.pipeline).toMatchObject({ lag: '0', stalled: false, projectorLive: false });
    expect(report.unwoken).toEqual({ unwoken: 2, escalated: [], held: { reason: 'projector_absent' } });
    expect(report.replies).toEqual({ overdue: [], held: { reason: 'projector_absent' } });
    const logs = down.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; alarm?: string; held?: string });
    expect(logs.filter((line) => line.alarm !== undefined || line.held !== undefined)).toEqual([
      expect.objectContaining({
        level: 50,
        alarm: 'projector_absent',
        msg: expect.stringMatching(/^ALARM no projector keeps the views/),
      }),
      expect.objectContaining({
        level: 40,
        held: 'projector_absent',
        msg: expect.stringContaining('no message is escalated (unwoken, reply overdue) while no projector keeps the views'),
      }),
    ]);
    expect(await claimsIn(escalationsDir)).toEqual([]);

    // A server keeps the views again: the next run escalates each once, exit 0.
    const server = await serve(escalationsDir);
    try {
      const up = await once();
      expect(up.code).toBe(0);
      const escalated = JSON.parse(up.stdout);
      expect(escalated.pipeline).toMatchObject({ projectorLive: true });
      expect([...escalated.unwoken.escalated].sort()).toEqual([toB, toC].sort());
      expect(escalated.replies).toEqual({ overdue: [{ messageId: toB, waitingOn: ['@b'] }] });
      expect(await claimsIn(escalationsDir)).toEqual(
        [`ReplyOverdue ${toB}`, `WakeEscalated ${toB}`, `WakeEscalated ${toC}`].sort(),
      );
    } finally {
      await stop(server);
    }
  } finally {
    fs.rmSync(escalationsDir, { recursive: true, force: true });
  }
});

test('--once beside a stopped server nudges nobody about unread mail (it did, from views nobody keeps); a server back, it does', async () => {
  const unreadDir = tempDir('mailbox-heartbeat-once-unread-server-stopped-');
  try {
    // @b and @c each have a message from @a, unread.
    const mailbox = await createMailbox(
      { dataDir: unreadDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'for b', body: 'x' });
    await a.send({ to: '@c', subject: 'for c', body: 'y' });
    await mailbox.close();
    await stop(await serve(unreadDir)); // the server ran, and stopped

    const told = path.join(unreadDir, 'told.txt');
    const hook = path.join(unreadDir, 'hook.sh');
    fs.writeFileSync(hook, `#!/bin/sh\necho "$MAILBOX_NUDGE_IDENTITY" >> ${told}\n`, { mode: 0o755 });
    const once = () =>
      runCli(['heartbeat', '--once', '--idle', '0', '--wake-grace', '0', '--hook', hook], { MAILBOX_DATA_DIR: unreadDir });
    const down = await once(); // it waits for its deliveries before it exits: none was made
    expect(down.code).toBe(1);
    const report = JSON.parse(down.stdout);
    // It nudged both ("nudged": ["@b", "@c"]) about mail neither could read while no server ran.
    expect(report).toMatchObject({
      withUnread: 2,
      verdicts: { no_mail: 1, projector_absent: 2 },
      nudged: [],
      loggedOnly: [],
      held: { reason: 'projector_absent', identities: ['@b', '@c'] },
      pipeline: { projectorLive: false },
    });
    expect(fs.existsSync(told)).toBe(false);
    const held = down.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; held?: string })
      .filter((line) => line.held === 'projector_absent');
    expect(held).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('no agent is nudged about its unread mail') }),
    ]);

    // A server keeps the views again: the next run nudges both, exit 0.
    const server = await serve(unreadDir);
    try {
      const up = await once();
      expect(up.code).toBe(0);
      expect(JSON.parse(up.stdout)).toMatchObject({ verdicts: { no_mail: 1, nudge: 2 }, nudged: ['@b', '@c'] });
      expect(JSON.parse(up.stdout).held).toBeUndefined();
      expect(fs.readFileSync(told, 'utf8').trim().split('\n').sort()).toEqual(['@b', '@c']);
    } finally {
      await stop(server);
    }
  } finally {
    fs.rmSync(unreadDir, { recursive: true, force: true });
  }
});
