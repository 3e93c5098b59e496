/**
 * Acceptance (issue 13), the unwoken alarm, on an injected clock: A writes to
 * B (an open wake stream: woken) and to C (none: not woken). Within the wake
 * SLA nothing is raised; past it the message to C is counted in /metrics and
 * by `audit unwoken`, and exactly one of two heartbeat daemons escalates it,
 * once, through C's nudge target; the delivered nudge wakes C (via webhook),
 * and nothing fires after that. B's message is never escalated.
 */
import pino from 'pino';
import type { Mailbox } from '../../src/mailbox';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { runUnwoken } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { ADMIN_TOKEN } from '../support/fixtures';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';
import { apiCaller, metricValue } from '../support/apiCalls';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;
const silent = pino({ level: 'silent' });

let now = T0;
let mailbox: Mailbox;
let url: string;
let stream: WakeSubscriber | null = null;
const daemons: Heartbeat[] = [];

let server: ClockedApiServer;
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now), { wakeSlaMs: SLA });
  ({ mailbox, url } = server);
});
afterAll(async () => {
  stream?.close();
  for (const daemon of daemons) await daemon.stop();
  await server.close();
});

const call = apiCaller(() => url);

const unwokenMetric = (): Promise<number> => metricValue(url, 'mailbox_unwoken_messages');

async function settle(): Promise<void> {
  for (const daemon of daemons) await daemon.settled();
  await mailbox.wakeRecorder.flush();
  expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
}

test('woken with a stream; unwoken without: counted, listed and escalated once by one of two daemons, then nothing', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c', '@d']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  const targets = [new RecordingNudgeTarget('webhook'), new RecordingNudgeTarget('webhook')];
  for (const target of targets) {
    daemons.push(
      await startHeartbeat(mailbox, {
        targets: [target],
        logger: silent,
        clock: { now: () => new Date(now) },
        schedule: false,
        // Nobody is idle long enough for an unread nudge: every nudge here is the alarm's.
        settings: { idleMs: 24 * 3600_000, wakeSlaMs: SLA, metricsPort: null },
      }),
    );
  }
  // B and C have just been active (a message of theirs that wakes nobody): no unread nudge is due to them today.
  for (const identity of ['@b', '@c']) {
    await call('POST', '/v1/messages', tokens[identity], { to: '@nobody', subject: 'x', body: '.', wakeSuppressed: true });
  }
  stream = await subscribe(url, tokens['@b']);
  await stream.next((e) => e.event === 'sync');
  const toB = (await call('POST', '/v1/messages', tokens['@a'], { to: '@b', subject: 'for b', body: '.' })).body.messageId;
  const toC = (await call('POST', '/v1/messages', tokens['@a'], { to: '@c', subject: 'for c', body: '.' })).body.messageId;
  await stream.next((e) => e.event === 'wake' && e.data.messageId === toB);
  await settle();
  const ledgerOf = async (id: string) => (await call('GET', `/v1/messages/${id}/delivery`, tokens['@a'])).body;
  expect((await ledgerOf(toB)).recipients[0].woken).toEqual({ at: new Date(T0).toISOString(), via: 'stream' });

  // Within the SLA: nothing raised, nothing escalated.
  now = T0 + SLA - 1;
  const early = await Promise.all(daemons.map((daemon) => daemon.tick()));
  expect(early.map((report) => report.unwoken)).toEqual([
    { unwoken: 0, escalated: [] },
    { unwoken: 0, escalated: [] },
  ]);
  expect(await unwokenMetric()).toBe(0);

  // Past it: C's message (not B's) is counted and listed; one daemon escalates it, the other finds it claimed.
  now = T0 + SLA + 1;
  expect(await unwokenMetric()).toBe(1);
  const out: string[] = [];
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true }, env: {} } as never;
  expect(await runUnwoken(eventStoreSource(mailbox.eventStore), new Date(now), SLA, { json: true, progress: false }, io)).toBe(1);
  expect(
    out
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).messageId),
  ).toEqual([toC]);
  const reports = await Promise.all(daemons.map((daemon) => daemon.tick()));
  expect(reports.flatMap((report) => report.unwoken.escalated)).toEqual([toC]);
  await settle();
  const nudges = targets.flatMap((target) => target.nudges);
  expect(nudges).toEqual([expect.objectContaining({ identity: '@c', reason: 'unwoken', messageId: toC })]);
  const escalations = await Promise.all(daemons.map(async (daemon) => (await daemon.metrics.escalations.get()).values[0].value));
  expect(escalations.sort()).toEqual([0, 1]);

  // The delivered nudge woke C; the ledger says how, and the alarm is over.
  const cLedger = await ledgerOf(toC);
  expect(cLedger.recipients[0].woken).toEqual({ at: new Date(now).toISOString(), via: 'webhook' });
  expect(cLedger.escalatedAt).toBe(new Date(now).toISOString());
  expect(await unwokenMetric()).toBe(0);

  // Later ticks of either daemon: nothing more.
  now = T0 + 10 * SLA;
  for (const daemon of daemons) expect((await daemon.tick()).unwoken).toEqual({ unwoken: 0, escalated: [] });
  await settle();
  expect(targets.flatMap((target) => target.nudges)).toHaveLength(1);
  expect((await ledgerOf(toB)).escalatedAt).toBeNull();
});
