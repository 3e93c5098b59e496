/**
 * The unwoken alarm leaves out what recipients already have, on an injected clock: agents that poll (no wake stream,
 * no nudge) see and read their mail, and a recipient that saw or read a message needs no wake. @a writes to @b, @c
 * and @d: @b reads it, @c lists its inbox (seen), @d does nothing; to @b and @c, who both have it; and to @d alone,
 * who marks it read without listing. Past the wake SLA only the first is unwoken (in /metrics, the audit route, the
 * log replay), and the heartbeat escalates it to @d alone: no nudge to @b or @c about mail they read or saw.
 * Before, all three were unwoken and the alarm nudged every recipient of each.
 */
import pino from 'pino';
import type { Mailbox } from '../../src/mailbox';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { runUnwoken } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { ADMIN_TOKEN } from '../support/fixtures';
import { apiCaller, metricValue } from '../support/apiCalls';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;
const silent = pino({ level: 'silent' });

let now = T0;
let mailbox: Mailbox;
let url: string;
let daemon: Heartbeat | null = null;

let server: ClockedApiServer;
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now), { wakeSlaMs: SLA });
  ({ mailbox, url } = server);
});
afterAll(async () => {
  await daemon?.stop();
  await server.close();
});

const call = apiCaller(() => url);

const unwokenMetric = (): Promise<number> => metricValue(url, 'mailbox_unwoken_messages');

async function settle(): Promise<void> {
  await daemon?.settled();
  await mailbox.flushSeenMarks();
  await mailbox.wakeRecorder.flush();
  expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
}

test('a message every recipient saw or read is not unwoken; the escalation nudges only a recipient that has neither', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c', '@d']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  const auditor = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@aud', role: 'auditor' })).body.token;
  const target = new RecordingNudgeTarget('webhook');
  daemon = await startHeartbeat(mailbox, {
    targets: [target],
    logger: silent,
    clock: { now: () => new Date(now) },
    schedule: false,
    // Nobody is idle long enough for an unread nudge: every nudge here is the alarm's.
    settings: { idleMs: 24 * 3600_000, wakeSlaMs: SLA, metricsPort: null },
  });
  // @b, @c and @d have just been active (a message of theirs that wakes nobody): no unread nudge is due to them today.
  for (const identity of ['@b', '@c', '@d']) {
    await call('POST', '/v1/messages', tokens[identity], { to: '@nobody', subject: 'x', body: '.', wakeSuppressed: true });
  }
  const send = async (to: string | string[], subject: string) => {
    const sent = await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: '.' });
    expect(sent.status).toBe(201);
    return sent.body.messageId as string;
  };
  const toAll = await send(['@b', '@c', '@d'], 'for all three');
  const toBC = await send(['@b', '@c'], 'for b and c');
  const toD = await send('@d', 'for d');
  await settle();

  // The agents poll: @b reads both of its messages, @c lists its inbox (seen, not read), @d marks its own one read.
  for (const id of [toAll, toBC]) expect((await call('POST', `/v1/messages/${id}/read`, tokens['@b'])).status).toBe(200);
  const listed = await call('GET', '/v1/messages', tokens['@c']);
  expect(listed.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual(expect.arrayContaining([toAll, toBC]));
  expect((await call('POST', `/v1/messages/${toD}/read`, tokens['@d'])).status).toBe(200);
  await settle();
  const ledgerOf = async (id: string) => (await call('GET', `/v1/messages/${id}/delivery`, tokens['@a'])).body;
  const stages = (ledger: { recipients: Array<{ recipient: string; woken: unknown; seen: unknown; read: unknown }> }) =>
    ledger.recipients.map((r) => [r.recipient, r.woken !== null, r.seen !== null, r.read !== null]);
  expect(stages(await ledgerOf(toAll))).toEqual([
    ['@b', false, false, true],
    ['@c', false, true, false],
    ['@d', false, false, false],
  ]);
  expect(stages(await ledgerOf(toD))).toEqual([['@d', false, false, true]]);

  // Past the SLA: only the message @d has not had is unwoken, in every place the alarm is told.
  now = T0 + SLA + 1;
  expect(await unwokenMetric()).toBe(1);
  const alarm = await call('GET', '/v1/audit/unwoken?limit=10', auditor);
  expect(alarm.body).toMatchObject({ count: 1, messages: [{ messageId: toAll, recipientCount: 3 }] });
  const out: string[] = [];
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true }, env: {} } as never;
  expect(await runUnwoken(eventStoreSource(mailbox.eventStore), new Date(now), SLA, { json: true, progress: false }, io)).toBe(1);
  expect(
    out
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).messageId),
  ).toEqual([toAll]);

  // The escalation is for @d alone: @b read it, @c saw it.
  const report = await daemon.tick();
  expect(report.unwoken).toEqual({ unwoken: 1, escalated: [toAll] });
  await settle();
  expect(target.nudges).toEqual([expect.objectContaining({ identity: '@d', reason: 'unwoken', messageId: toAll })]);
  const claims = (await mailbox.eventStore.readAll(null, 100_000)).filter((e) => e.type === 'WakeEscalated');
  expect(claims.map((e) => e.data)).toEqual([expect.objectContaining({ messageId: toAll, recipients: ['@d'] })]);
  expect(await unwokenMetric()).toBe(0); // the delivered nudge woke @d

  // Later ticks: nothing more, about any of the three.
  now = T0 + 10 * SLA;
  expect((await daemon.tick()).unwoken).toEqual({ unwoken: 0, escalated: [] });
  await settle();
  expect(target.nudges).toHaveLength(1);
  for (const id of [toBC, toD]) expect((await ledgerOf(id)).escalatedAt).toBeNull();
});
