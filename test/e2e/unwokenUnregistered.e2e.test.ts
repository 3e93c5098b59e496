/**
 * The unwoken alarm counts only mail some registered agent could have been woken for, on an injected clock. Sends are
 * permissive (DESIGN section 2): mail to an identity nobody registered is accepted, but no agent holds its token, so
 * nothing can ever subscribe to its wakes. Before, such a message was unwoken forever past the wake SLA: a false alarm
 * (in /metrics, GET /v1/audit/unwoken, `audit unwoken` and the heartbeat) that no operator could clear.
 *
 * @a writes to @b (an open wake stream: woken), to @ghost (never registered), to @c and @ghost2 (@c registered, not
 * woken: a real alarm), to @d (retired before the send) and to @late (registered after the send). Past the SLA only the
 * message to @c and @ghost2 is counted, listed and escalated; the others' delivery ledgers say why no wake was due.
 *
 * Only the recipients due a wake at the send have to see or read a message for it to leave the alarm: @c reading the
 * mail to @c and @ghost2 (polling, no wake stream) clears it, though @ghost2 never will; and @ghost2, registered only
 * after mail to @e and itself, reading it does not stand in for @e, who has not seen it.
 */
import pino from 'pino';
import type { Mailbox } from '../../src/mailbox';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { runMessage, runUnwoken } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { ADMIN_TOKEN } from '../support/fixtures';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';
import { apiCaller, metricValue } from '../support/apiCalls';
import { formatDelivery } from '../../src/cli/commands/deliveryFormat';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;
const silent = pino({ level: 'silent' });

let now = T0;
let mailbox: Mailbox;
let url: string;
let stream: WakeSubscriber | null = null;
let daemon: Heartbeat | null = null;

let server: ClockedApiServer;
beforeEach(async () => {
  now = T0;
  server = await startClockedApiServer(() => new Date(now), { wakeSlaMs: SLA });
  ({ mailbox, url } = server);
});
afterEach(async () => {
  stream?.close();
  stream = null;
  await daemon?.stop();
  daemon = null;
  await server.close();
});

const call = apiCaller(() => url);

async function settle(): Promise<void> {
  await daemon?.settled();
  await mailbox.flushSeenMarks();
  await mailbox.wakeRecorder.flush();
  expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
}

/** `mailbox audit message <id>`'s text (the log replayed), as an auditor reads it. */
async function auditMessage(messageId: string): Promise<string> {
  const out: string[] = [];
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true }, env: {} } as never;
  await runMessage(eventStoreSource(mailbox.eventStore), messageId, { json: false, progress: false }, io);
  return out.join('');
}

async function auditUnwoken(): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {} } as never;
  const code = await runUnwoken(eventStoreSource(mailbox.eventStore), new Date(now), SLA, { json: false, progress: false }, io);
  return { code, out: out.join(''), err: err.join('') };
}

test('mail to an identity no registered agent holds is not unwoken; a registered recipient not woken still is', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c', '@d']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  daemon = await startHeartbeat(mailbox, {
    targets: [new RecordingNudgeTarget('webhook')],
    logger: silent,
    clock: { now: () => new Date(now) },
    schedule: false,
    settings: { idleMs: 24 * 3600_000, wakeSlaMs: SLA, metricsPort: null },
  });
  expect((await call('DELETE', '/v1/agents/@d', ADMIN_TOKEN)).status).toBe(200);
  stream = await subscribe(url, tokens['@b']);
  await stream.next((e) => e.event === 'sync');
  const send = async (to: string | string[], subject: string) => {
    const sent = await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: '.' });
    expect(sent.status).toBe(201);
    return sent.body.messageId as string;
  };
  const toGhost = await send('@ghost', 'for nobody registered');
  const toB = await send('@b', 'for b');
  const toCAndGhost = await send(['@c', '@ghost2'], 'for c and a ghost');
  const toRetired = await send('@d', 'for the retired d');
  const toLate = await send('@late', 'for late, registered after');
  await stream.next((e) => e.event === 'wake' && e.data.messageId === toB);
  expect((await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@late' })).status).toBe(201);
  await settle();

  now = T0 + SLA + 1;
  expect(await metricValue(url, 'mailbox_unwoken_messages')).toBe(1);
  const alarm = await call('GET', '/v1/audit/unwoken', ADMIN_TOKEN);
  expect(alarm.body).toMatchObject({ count: 1, messages: [{ messageId: toCAndGhost, recipientCount: 2 }] });
  const audit = await auditUnwoken();
  expect(audit.code).toBe(1);
  expect(audit.out.trim().split('\n')).toEqual([
    `${toCAndGhost}  sent ${new Date(T0).toISOString()} by @a to 2 recipient(s): woke nobody; not escalated yet`,
    expect.stringMatching(
      /^1 message\(s\) in the unwoken alarm: .*or to no registered agent, expects none: neither is counted\)\.$/,
    ),
  ]);
  const report = await daemon.tick();
  expect(report.unwoken).toEqual({ unwoken: 1, escalated: [toCAndGhost] });
  await settle();

  // Each ledger says whether a wake was due, and why not.
  const ledgerOf = async (id: string) => (await call('GET', `/v1/messages/${id}/delivery`, tokens['@a'])).body;
  for (const id of [toGhost, toRetired, toLate]) {
    const ledger = await ledgerOf(id);
    expect(ledger).toMatchObject({ wakeExpected: false, noWakeReason: 'noRegisteredRecipient' });
    // `mailbox delivery <id>` prints it on the summary line.
    expect(formatDelivery(ledger).split('\n')[1]).toMatch(
      /^summary {2}1 recipient: in view 1, .* \(no wake was due: no recipient was a registered agent when it was sent\)$/,
    );
    // `mailbox audit message <id>` (the log replayed) says it in the same words.
    expect(await auditMessage(id)).toMatch(
      /\ndelivery: 1 recipient\(s\); in view 1, .* \(no wake was due: no recipient was a registered agent when it was sent\)\n/,
    );
  }
  for (const id of [toB, toCAndGhost]) {
    const ledger = await ledgerOf(id);
    expect(ledger.wakeExpected).toBe(true);
    expect(ledger).not.toHaveProperty('noWakeReason');
  }
});

test('a message leaves the alarm once every recipient due a wake read or saw it; one registered later stands in for nobody', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@c', '@e']) {
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  }
  const send = async (to: string[], subject: string) => {
    const sent = await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: '.' });
    expect(sent.status).toBe(201);
    return sent.body.messageId as string;
  };
  const unwoken = async () => {
    const alarm = await call('GET', '/v1/audit/unwoken', ADMIN_TOKEN);
    expect(alarm.status).toBe(200);
    return {
      metric: await metricValue(url, 'mailbox_unwoken_messages'),
      listed: (alarm.body.messages as Array<{ messageId: string }>).map((m) => m.messageId),
      count: alarm.body.count as number,
      audit: (await auditUnwoken()).out.trim().split('\n'),
    };
  };

  // @c polls (no wake stream) and reads the mail to it and @ghost2, who is no agent.
  const toCAndGhost = await send(['@c', '@ghost2'], 'for c and a ghost');
  expect((await call('POST', `/v1/messages/${toCAndGhost}/read`, tokens['@c'])).status).toBe(200);
  await settle();
  now = T0 + SLA + 1;
  expect(await unwoken()).toEqual({
    metric: 0,
    listed: [],
    count: 0,
    audit: [expect.stringMatching(/^0 message\(s\) in the unwoken alarm: /)],
  });

  // Mail to @e and @ghost2; @ghost2 registers after it and reads it; @e has not seen it.
  const sentAt = now;
  const toEAndGhost = await send(['@e', '@ghost2'], 'for e and a ghost');
  tokens['@ghost2'] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@ghost2' })).body.token;
  for (const id of [toEAndGhost, toCAndGhost])
    expect((await call('POST', `/v1/messages/${id}/read`, tokens['@ghost2'])).status).toBe(200);
  await settle();
  const ledger = (await call('GET', `/v1/messages/${toEAndGhost}/delivery`, tokens['@a'])).body;
  expect(ledger.recipients.map((r: { recipient: string; read: unknown }) => [r.recipient, r.read !== null])).toEqual([
    ['@e', false],
    ['@ghost2', true],
  ]);
  now = sentAt + SLA + 1;
  expect(await unwoken()).toEqual({
    metric: 1,
    listed: [toEAndGhost],
    count: 1,
    audit: [
      `${toEAndGhost}  sent ${new Date(sentAt).toISOString()} by @a to 2 recipient(s): woke nobody; not escalated yet`,
      expect.stringMatching(/^1 message\(s\) in the unwoken alarm: /),
    ],
  });

  // @e lists its inbox (seen): the one recipient due a wake has it, so it leaves the alarm.
  const listed = await call('GET', '/v1/messages', tokens['@e']);
  expect(listed.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([toEAndGhost]);
  await settle();
  expect(await unwoken()).toMatchObject({ metric: 0, listed: [], count: 0 });
});
