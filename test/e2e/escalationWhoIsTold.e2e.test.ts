/**
 * The heartbeat's escalation log lines say whom they nudge (an operator reads them as the record of who was told).
 * A message to a retired agent is unwoken past the SLA and its reply is overdue like any other, but a retired agent
 * is never nudged: the lines said "escalating through their nudge targets" and "nudging who has not answered" for
 * it, when nobody was told. On an injected clock, one daemon, a recording nudge target.
 */
import pino from 'pino';
import type { Mailbox } from '../../src/mailbox';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { ADMIN_TOKEN } from '../support/fixtures';
import { apiCaller } from '../support/apiCalls';
import { ensureBuilt, runCli } from '../support/builtCli';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;

let now = T0;
let mailbox: Mailbox;
let url: string;
let daemon: Heartbeat | null = null;
const lines: Array<Record<string, unknown>> = [];
const heartbeatLogger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });

let server: ClockedApiServer;
beforeAll(async () => {
  ensureBuilt();
  server = await startClockedApiServer(() => new Date(now), { wakeSlaMs: SLA });
  ({ mailbox, url } = server);
});
afterAll(async () => {
  await daemon?.stop();
  await server.close();
});

const call = apiCaller(() => url);

test('an escalation about a retired recipient says nobody is nudged; one about a live and a retired one names each', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@c', '@d']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  const target = new RecordingNudgeTarget('webhook');
  daemon = await startHeartbeat(mailbox, {
    targets: [target],
    logger: heartbeatLogger,
    clock: { now: () => new Date(now) },
    schedule: false,
    settings: { idleMs: 24 * 3600_000, wakeSlaMs: SLA, metricsPort: null },
  });
  const send = async (to: string | string[], subject: string): Promise<string> =>
    (await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: '.', expectsReplyBy: '30s' })).body.messageId;
  const toD = await send('@d', 'for d');
  const toCD = await send(['@c', '@d'], 'for c and d');
  expect((await call('DELETE', '/v1/agents/@d', ADMIN_TOKEN)).status).toBe(200);

  now = T0 + SLA + 1;
  const report = await daemon.tick();
  await daemon.settled();
  expect([...report.unwoken.escalated].sort()).toEqual([toD, toCD].sort());
  expect(report.replies.overdue.map((overdue) => overdue.messageId).sort()).toEqual([toD, toCD].sort());
  // Only @c was told about the two messages (@c's unread nudge aside: never active counts as idle); @d, nothing.
  expect(
    target.nudges
      .filter((nudge) => nudge.reason !== undefined)
      .map((nudge) => [nudge.identity, nudge.reason, nudge.messageId])
      .sort(),
  ).toEqual(
    [
      ['@c', 'reply-overdue', toCD],
      ['@c', 'unwoken', toCD],
    ].sort(),
  );
  expect(target.nudges.filter((nudge) => nudge.identity === '@d')).toEqual([]);

  const alarm = (id: string) => lines.find((line) => line.alarm === 'message_unwoken' && line.messageId === id);
  expect(alarm(toD)).toMatchObject({ recipients: ['@d'], nudged: [], notNudged: ['@d'] });
  expect(alarm(toD)?.msg).toBe(
    'ALARM message woke none of its recipients within the wake SLA; escalating once: nobody is nudged: ' +
      '@d (retired, opted out or not registered), so nobody is told',
  );
  expect(alarm(toCD)).toMatchObject({ recipients: ['@c', '@d'], nudged: ['@c'], notNudged: ['@d'] });
  expect(alarm(toCD)?.msg).toBe(
    'ALARM message woke none of its recipients within the wake SLA; escalating once: nudging @c; ' +
      'not @d (retired, opted out or not registered)',
  );

  const overdue = (id: string) => lines.find((line) => line.waitingOn !== undefined && line.messageId === id);
  expect(overdue(toD)).toMatchObject({ waitingOn: ['@d'], nudged: [], notNudged: ['@d'] });
  expect(overdue(toD)?.msg).toBe(
    'reply overdue (once): nobody is nudged: @d (retired, opted out or not registered), so nobody is told; ' +
      'the sender gets a reply-overdue wake',
  );
  expect(overdue(toCD)?.msg).toBe(
    'reply overdue (once): nudging @c; not @d (retired, opted out or not registered); the sender gets a reply-overdue wake',
  );

  // The log's record of the escalation, as an auditor replays it, claims no nudge either: it read "escalated to @d"
  // for the retired @d, whom nothing was sent to. It names whom the message was due to wake, and that not all are told.
  const replay = await runCli(['audit', 'replay', '--url', url, '--type', 'WakeEscalated', '--no-progress'], {
    MAILBOX_AUDIT_TOKEN: ADMIN_TOKEN,
  });
  expect(replay.code).toBe(0);
  const line = (id: string) => replay.stdout.split('\n').find((text) => text.includes(`message ${id} woke nobody`));
  const notEveryone = '(a retired, opted-out or unregistered one is not nudged)';
  expect(line(toD)).toContain(`woke nobody within ${SLA} ms: escalated; due a wake: @d ${notEveryone}`);
  expect(line(toCD)).toContain(`woke nobody within ${SLA} ms: escalated; due a wake: @c, @d ${notEveryone}`);
  expect(replay.stdout).not.toContain('escalated to');
});
