/**
 * A heartbeat beside views that no projector keeps (the server stopped: `mailbox heartbeat` runs none of its own), on
 * an injected clock, three agents, the SQLite views file: the server's projector is this mailbox's runner, stopped and
 * started again. Nobody can read mail then and the views' counts stand where the server left them: the daemon sent
 * "you have N unread" nudges all the same, tick after tick. Now it holds them (verdict projector_absent, the report's
 * `held`, one warn line per absence), and the first tick once a server keeps the views nudges. The escalations held
 * meanwhile are on /metrics (mailbox_heartbeat_escalations_held{reason}), 0 again once they are looked at.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { waitFor } from '../support/waitFor';
import { ADMIN_TOKEN, allEvents, registerAgents, tempDir } from '../support/fixtures';

const MIN = 60_000;
const T0 = Date.parse('2030-01-01T12:00:00.000Z');

/** A heartbeat as `mailbox heartbeat` runs beside a server: the views are kept elsewhere (one look for the live mark). */
function heartbeatBesideServer(
  of: Mailbox,
  target: RecordingNudgeTarget,
  clock: { now: () => Date },
  lines: object[],
  settings: Record<string, number> = {},
): Promise<Heartbeat> {
  return startHeartbeat(
    {
      eventStore: of.eventStore,
      projections: of.projections,
      wakeBus: of.wakeBus,
      projectorElsewhere: true,
      projectorRelookMs: 0,
    },
    {
      targets: [target],
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
      clock,
      schedule: false,
      settings: { idleMs: MIN, cooldownMs: MIN, wakeGraceMs: 0, wakeSlaMs: MIN, metricsPort: 0, ...settings },
    },
  );
}

let mailbox: Mailbox | undefined;
let heartbeat: Heartbeat | undefined;
afterEach(async () => {
  await heartbeat?.stop();
  await mailbox?.close();
});

test('no projector keeps the views: no unread nudge goes out (it did), said once, held on /metrics; a server back, all go', async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    { dataDir: tempDir('mailbox-heartbeat-projector-absent-'), adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }), clock },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const { messageId: toB } = await a.send({ to: '@b', subject: 'answer me', body: 'x', expectsReplyBy: '1m' });
  const { messageId: toC } = await a.send({ to: '@c', subject: 'for c', body: 'y' });

  const lines: Array<{ level: number; msg: string; held?: string }> = [];
  const target = new RecordingNudgeTarget('webhook');
  heartbeat = await heartbeatBesideServer(mailbox, target, clock, lines);
  const metrics = async () => (await fetch(`${heartbeat!.metricsUrl}/metrics`)).text();
  const gauge = (text: string, series: string) => new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1];
  const heldLines = () => lines.filter((line) => line.held === 'projector_absent');
  const eventsBefore = (await allEvents(mailbox)).length;

  await mailbox.runner.stop(); // the server stops: its live mark on the views goes
  now = T0 + 2 * MIN; // @b and @c idle with unread mail, both messages unwoken past the SLA, @b's reply overdue
  const down = await heartbeat.settledReport(await heartbeat.tick());
  // It nudged @b and @c ("nudged": ["@b", "@c"]) about mail they could not read.
  expect(down).toMatchObject({
    withUnread: 2,
    verdicts: { no_mail: 1, projector_absent: 2 },
    nudged: [],
    loggedOnly: [],
    held: { reason: 'projector_absent', identities: ['@b', '@c'] },
    pipeline: { projectorLive: false },
    unwoken: { unwoken: 2, escalated: [], held: { reason: 'projector_absent' } },
    replies: { overdue: [], held: { reason: 'projector_absent' } },
  });
  expect(target.nudges).toEqual([]);
  expect((await allEvents(mailbox)).length).toBe(eventsBefore); // no nudge, wake nor claim written
  const downMetrics = await metrics();
  // Two unwoken messages and one reply due, none looked at.
  expect(gauge(downMetrics, 'mailbox_heartbeat_escalations_held{reason="projector_absent"}')).toBe('3');
  expect(gauge(downMetrics, 'mailbox_heartbeat_escalations_held{reason="no_nudge_target"}')).toBe('0');
  expect(gauge(downMetrics, 'mailbox_heartbeat_decisions_total{verdict="projector_absent"}')).toBe('2');
  expect(gauge(downMetrics, 'mailbox_heartbeat_decisions_total{verdict="nudge"}')).toBeUndefined();

  now += MIN; // still down: held again, not said again
  const still = await heartbeat.settledReport(await heartbeat.tick());
  expect(still.held).toEqual({ reason: 'projector_absent', identities: ['@b', '@c'] });
  expect(target.nudges).toEqual([]);
  expect(heldLines()).toEqual([
    expect.objectContaining({
      level: 40,
      msg: expect.stringContaining(
        'no agent is nudged about its unread mail and no message is escalated (unwoken, reply overdue) while no ' +
          'projector keeps the views',
      ),
    }),
  ]);

  await mailbox.runner.start(); // a server keeps the views again
  now += MIN;
  const up = await heartbeat.settledReport(await heartbeat.tick());
  expect(up).toMatchObject({ verdicts: { no_mail: 1, nudge: 2 }, nudged: ['@b', '@c'], pipeline: { projectorLive: true } });
  expect(up.held).toBeUndefined();
  expect(up.unwoken).toEqual({ unwoken: 2, escalated: [toB, toC] });
  expect(up.replies).toEqual({ overdue: [{ messageId: toB, waitingOn: ['@b'] }] });
  expect(target.nudges.filter((nudge) => nudge.reason === undefined).map((nudge) => nudge.identity)).toEqual(['@b', '@c']);
  const upMetrics = await metrics();
  expect(gauge(upMetrics, 'mailbox_heartbeat_escalations_held{reason="projector_absent"}')).toBe('0');
  expect(gauge(upMetrics, 'mailbox_heartbeat_escalations_held{reason="no_nudge_target"}')).toBe('0');
  expect(heldLines()).toHaveLength(1);
});

test('views lagging with no projector: one alarm, projector_absent with the lag (a stall alarm paged beside it); a server back clears it', async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    // No wait for views no projector applies: the sends answer at once (with VIEWS_LAGGING).
    { dataDir: tempDir('mailbox-heartbeat-absent-lag-'), adminToken: ADMIN_TOKEN, logLevel: 'silent', awaitProjectionMs: 0 },
    { logger: pino({ level: 'silent' }), clock },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const lines: Array<{ level: number; msg: string; alarm?: string }> = [];
  heartbeat = await heartbeatBesideServer(mailbox, new RecordingNudgeTarget('webhook'), clock, lines, {
    stallAfterMs: MIN,
  });
  const healthz = async () => {
    const response = await fetch(`${heartbeat!.metricsUrl}/healthz`);
    return { status: response.status, body: (await response.json()) as { alarms: Array<{ alarm: string }> } };
  };
  // The pipeline's alarms (the two messages, unwoken past the SLA, are escalated once a server is back).
  const alarmLines = () =>
    lines
      .filter((line) => line.alarm === 'projector_absent' || line.alarm === 'projection_stalled')
      .map(({ level, alarm, msg }) => ({ level, alarm, msg }));

  await mailbox.runner.stop(); // the server stops
  await a.send({ to: '@b', subject: 'one', body: 'x' });
  await a.send({ to: '@c', subject: 'two', body: 'y' });
  await heartbeat.settledReport(await heartbeat.tick());
  now = T0 + 2 * MIN; // the checkpoint has stood behind the head for longer than --stall-after
  const down = await heartbeat.settledReport(await heartbeat.tick());
  expect(down.pipeline).toMatchObject({ lag: '2', stalled: true, projectorLive: false });
  expect(alarmLines()).toEqual([
    { level: 50, alarm: 'projector_absent', msg: expect.stringContaining('ALARM no projector keeps the views') },
  ]);
  const unhealthy = await healthz();
  expect(unhealthy.status).toBe(503);
  expect(unhealthy.body.alarms).toEqual([
    { alarm: 'projector_absent', checkpoint: down.pipeline.checkpoint, head: down.pipeline.head, lag: '2' },
  ]);

  await mailbox.runner.start(); // a server keeps the views again and applies the two sends
  const head = await mailbox.eventStore.headPosition();
  await waitFor(async () => (await mailbox!.projections.checkpoint()) === head, {
    timeoutMs: 30_000,
    what: 'the views caught up',
  });
  now += MIN;
  const up = await heartbeat.settledReport(await heartbeat.tick());
  expect(up.pipeline).toMatchObject({ lag: '0', stalled: false, projectorLive: true });
  // Cleared once; no stall alarm cleared that was never raised.
  expect(alarmLines()).toEqual([
    { level: 50, alarm: 'projector_absent', msg: expect.stringContaining('ALARM no projector keeps the views') },
    { level: 30, alarm: 'projector_absent', msg: 'alarm cleared: a projector keeps the views again' },
  ]);
  expect(await healthz()).toMatchObject({ status: 200, body: { alarms: [] } });
});

test('a server that runs but cannot write its views (another process holds the file): the alarm says so, not only "start the server"', async () => {
  const dir = tempDir('mailbox-heartbeat-views-held-');
  mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent', awaitProjectionMs: 0 },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const lines: Array<{ level: number; msg: string; alarm?: string }> = [];
  heartbeat = await heartbeatBesideServer(mailbox, new RecordingNudgeTarget('webhook'), { now: () => new Date() }, lines);
  expect((await heartbeat.tick()).pipeline.projectorLive).toBe(true);
  const holder = new Database(path.join(dir, 'views.sqlite'));
  try {
    holder.exec('BEGIN IMMEDIATE'); // another process's write transaction: the server can write nothing to the file
    await a.send({ to: '@b', subject: 'while held', body: 'x' }); // accepted: the log takes it
    await waitFor(async () => (await heartbeat!.tick()).pipeline.projectorLive === false, {
      timeoutMs: 30_000,
      what: 'the live mark lapsed',
    });
  } finally {
    holder.close();
  }
  const alarm = lines.find((line) => line.alarm === 'projector_absent');
  expect(alarm).toMatchObject({ level: 50, msg: expect.stringMatching(/^ALARM no projector keeps the views/) });
  expect(alarm!.msg).toContain('or one runs but cannot write the views (another process holds the views file');
  expect(alarm!.msg).not.toContain('agents cannot send or read'); // @a just sent
}, 60_000);
