/**
 * An unwoken message's escalation is claimed once for good in the log (WakeEscalated). A heartbeat with no nudge target
 * (no Redis, webhook nor hook: the embedded default) claimed it anyway and wrote the nudge to its log only: nobody was
 * told, and a daemon started later with a target never escalated it (the claim was used up). Now the escalation is held
 * back unclaimed, said once per message (at error, the alarm message_unwoken) and in the tick report, and a heartbeat
 * with a target escalates it. On an injected clock, three agents, the running daemon's tick (`--once` runs the same).
 */
import pino from 'pino';
import type { Mailbox } from '../../src/mailbox';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { ADMIN_TOKEN, allEvents } from '../support/fixtures';
import { apiCaller } from '../support/apiCalls';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;

let now = T0;
let mailbox: Mailbox;
let url: string;
const daemons: Heartbeat[] = [];
const lines: Array<Record<string, unknown>> = [];
const heartbeatLogger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });

let server: ClockedApiServer;
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now), { wakeSlaMs: SLA });
  ({ mailbox, url } = server);
});
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
  await server.close();
});

const call = apiCaller(() => url);

const daemonWith = async (targets: RecordingNudgeTarget[], metricsPort: number | null = null): Promise<Heartbeat> => {
  const daemon = await startHeartbeat(mailbox, {
    targets,
    logger: heartbeatLogger,
    clock: { now: () => new Date(now) },
    schedule: false,
    settings: { idleMs: 24 * 3600_000, wakeSlaMs: SLA, metricsPort },
  });
  daemons.push(daemon);
  return daemon;
};

/** The daemon's /metrics line for the escalations it held back for `reason` at its last tick. */
const heldOnMetrics = async (daemon: Heartbeat, reason: string) =>
  new RegExp(`^mailbox_heartbeat_escalations_held\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(
    await (await fetch(`${daemon.metricsUrl}/metrics`)).text(),
  )?.[1];

const claims = async () => (await allEvents(mailbox)).filter((event) => event.type === 'WakeEscalated');

test('with no nudge target an unwoken message is not claimed: said once, listed as held; a daemon with a target escalates it', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  const send = async (to: string, subject: string): Promise<string> =>
    (await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: '.' })).body.messageId;
  const toB = await send('@b', 'for b');
  const toC = await send('@c', 'for c');

  const untargeted = await daemonWith([], 0);
  // Said once at its start, where an operator who forgot the Redis URL or the agents file looks.
  const noTarget = lines.filter((line) => String(line.msg).startsWith('heartbeat: no nudge target is set'));
  expect(noTarget.map((line) => [line.level, line.msg])).toEqual([
    [
      40,
      'heartbeat: no nudge target is set (--redis-url or MAILBOX_REDIS_URL, a "webhook" in --agents-file, or --hook): ' +
        'each nudge will only be written to this log, and no agent told',
    ],
  ]);
  now = T0 + SLA + 1;
  const first = await untargeted.settledReport(await untargeted.tick());
  // It escalated both (`escalated: [toB, toC]`), each a WakeEscalated for good, the nudges written to its log only.
  expect(first.unwoken).toEqual({ unwoken: 2, escalated: [], held: { reason: 'no_nudge_target', messageIds: [toB, toC] } });
  now += 1_000;
  const second = await untargeted.settledReport(await untargeted.tick());
  expect(second.unwoken).toEqual(first.unwoken);
  expect(await claims()).toEqual([]);
  // Held on /metrics too (they were only in the log lines and the report).
  expect(await heldOnMetrics(untargeted, 'no_nudge_target')).toBe('2');
  expect(await heldOnMetrics(untargeted, 'projector_absent')).toBe('0');
  // One line per message (not one per tick), naming whom no target serves.
  const held = lines.filter((line) => line.alarm === 'message_unwoken');
  expect(held.map((line) => [line.messageId, line.recipients, line.held, line.level])).toEqual([
    [toB, ['@b'], 'no_nudge_target', 50],
    [toC, ['@c'], 'no_nudge_target', 50],
  ]);
  expect(held[0].msg).toBe(
    'ALARM message woke none of its recipients within the wake SLA; not escalated: no nudge target serves @b (no Redis, ' +
      'webhook or hook is configured for them), so nobody could be told; it awaits escalation, unclaimed, by a ' +
      'heartbeat with a target',
  );
  expect(lines.some((line) => String(line.msg).includes('escalating once'))).toBe(false);

  // A heartbeat with a target (a webhook, say) finds both unclaimed: escalated once each, each recipient told.
  const target = new RecordingNudgeTarget('webhook');
  const targeted = await daemonWith([target]);
  // A daemon with a target says nothing of the kind: still the one line, the untargeted daemon's.
  expect(lines.filter((line) => String(line.msg).startsWith('heartbeat: no nudge target is set'))).toHaveLength(1);
  now += 1_000;
  const third = await targeted.settledReport(await targeted.tick());
  expect(third.unwoken).toEqual({ unwoken: 2, escalated: [toB, toC] });
  expect(target.nudges.filter((nudge) => nudge.reason === 'unwoken').map((nudge) => [nudge.identity, nudge.messageId])).toEqual([
    ['@b', toB],
    ['@c', toC],
  ]);
  expect((await claims()).map((event) => (event.data as { messageId: string }).messageId)).toEqual([toB, toC]);

  // Escalated, they are no longer held: the untargeted daemon's next tick (once the views hold the claims) says 0.
  expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 30_000)).toBe(true);
  now += 1_000;
  expect((await untargeted.tick()).unwoken).toEqual({ unwoken: 0, escalated: [] }); // the webhook's nudges woke both
  expect(await heldOnMetrics(untargeted, 'no_nudge_target')).toBe('0');
});

test('held messages do not keep newer ones from escalating: a tick reads past more than a page of held ones', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@p', '@q', '@r']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  const send = async (to: string, subject: string): Promise<string> =>
    (await call('POST', '/v1/messages', tokens['@p'], { to, subject, body: '.' })).body.messageId;
  // 101 messages to @r, whom no target serves, then one to @q, whom the webhook serves: oldest first, the held ones
  // filled the first page of 100, and @q's message was never looked at, tick after tick.
  const toR: string[] = [];
  for (let i = 0; i < 101; i++) toR.push(await send('@r', `for r ${i}`));
  const toQ = await send('@q', 'for q');

  const target = new RecordingNudgeTarget('webhook', ['@q']); // a webhook configured for @q only
  const daemon = await daemonWith([target]);
  now += SLA + 1;
  const report = await daemon.settledReport(await daemon.tick());
  expect(report.unwoken).toEqual({ unwoken: 102, escalated: [toQ], held: { reason: 'no_nudge_target', messageIds: toR } });
  expect(target.nudges.filter((nudge) => nudge.reason === 'unwoken').map((nudge) => [nudge.identity, nudge.messageId])).toEqual([
    ['@q', toQ],
  ]);
  const claimed = (await claims()).map((event) => (event.data as { messageId: string }).messageId);
  expect(claimed).toContain(toQ);
  expect(claimed.filter((id) => toR.includes(id))).toEqual([]);
});
