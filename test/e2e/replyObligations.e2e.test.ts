/**
 * Acceptance (issue 13), reply obligations, on an injected clock: A writes to
 * B and C expecting replies within 10 minutes; B answers in time, C does not.
 * Overdue: exactly one nudge to C (of two heartbeat daemons, one claims it)
 * and one reply-overdue wake to A naming C; C's reply then closes it, and
 * nothing fires after that. A malformed or past expectsReplyBy is refused
 * with the valid forms, and nothing is written.
 */
import pino from 'pino';
import type { Mailbox } from '../../src/mailbox';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { ADMIN_TOKEN, allEvents } from '../support/fixtures';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';
import { apiCaller } from '../support/apiCalls';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const MIN = 60_000;
const silent = pino({ level: 'silent' });

let now = T0;
let mailbox: Mailbox;
let url: string;
let stream: WakeSubscriber | null = null;
const daemons: Heartbeat[] = [];

let server: ClockedApiServer;
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now));
  ({ mailbox, url } = server);
});
afterAll(async () => {
  stream?.close();
  for (const daemon of daemons) await daemon.stop();
  await server.close();
});

const call = apiCaller(() => url);

async function settle(): Promise<void> {
  for (const daemon of daemons) await daemon.settled();
  await mailbox.wakeRecorder.flush();
  expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
}

const owed = async (identity: string) => {
  const { agents } = (await call('GET', '/v1/heartbeat', ADMIN_TOKEN)).body;
  const agent = agents.find((a: { identity: string }) => a.identity === identity);
  return { repliesOwed: agent.repliesOwed, nextReplyDueBy: agent.nextReplyDueBy };
};

test('overdue: one nudge to whoever has not answered and one reply-overdue wake to the sender; a reply closes it; then nothing', async () => {
  const t: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c', '@d'])
    t[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  const targets = [new RecordingNudgeTarget('webhook'), new RecordingNudgeTarget('webhook')];
  for (const target of targets) {
    daemons.push(
      await startHeartbeat(mailbox, {
        targets: [target],
        logger: silent,
        clock: { now: () => new Date(now) },
        schedule: false,
        // Only the reply obligations here: no unread nudges (nobody idle that long), no unwoken alarm.
        settings: { idleMs: 24 * 60 * MIN, wakeSlaMs: 24 * 60 * MIN, metricsPort: null },
      }),
    );
  }
  // C has just been active (a message of its own that wakes nobody): no unread nudge is due to it today.
  await call('POST', '/v1/messages', t['@c'], { to: '@nobody', subject: 'x', body: '.', wakeSuppressed: true });
  stream = await subscribe(url, t['@a']);
  await stream.next((e) => e.event === 'sync');

  const sent = await call('POST', '/v1/messages', t['@a'], {
    to: ['@b', '@c'],
    subject: 'review please',
    body: '.',
    expectsReplyBy: '10m',
  });
  expect(sent.status).toBe(201);
  const id = sent.body.messageId;
  await settle();
  const dueBy = new Date(T0 + 10 * MIN).toISOString();
  expect((await call('GET', `/v1/messages/${id}/delivery`, t['@a'])).body).toMatchObject({
    replyDueBy: dueBy,
    replyOverdueAt: null,
  });
  expect(await owed('@b')).toEqual({ repliesOwed: 1, nextReplyDueBy: dueBy });
  expect(await owed('@c')).toEqual({ repliesOwed: 1, nextReplyDueBy: dueBy });
  expect(await owed('@d')).toEqual({ repliesOwed: 0, nextReplyDueBy: null });

  // B answers in time; before the due time nothing fires.
  now = T0 + 5 * MIN;
  await call('POST', '/v1/messages', t['@b'], { to: '@a', subject: 're', body: 'looks good', inReplyTo: id });
  await settle();
  expect(await owed('@b')).toEqual({ repliesOwed: 0, nextReplyDueBy: null });
  now = T0 + 10 * MIN - 1;
  for (const daemon of daemons) expect((await daemon.tick()).replies).toEqual({ overdue: [] });

  // Due: one of the two daemons finds it overdue, naming C; one nudge to C; one wake to A.
  now = T0 + 10 * MIN;
  const reports = await Promise.all(daemons.map((daemon) => daemon.tick()));
  expect(reports.flatMap((report) => report.replies.overdue)).toEqual([{ messageId: id, waitingOn: ['@c'] }]);
  await settle();
  expect(targets.flatMap((target) => target.nudges)).toEqual([
    expect.objectContaining({ identity: '@c', reason: 'reply-overdue', messageId: id }),
  ]);
  const wake = await stream.next((e) => e.event === 'wake' && e.data.type === 'wake/reply-overdue');
  expect(wake.data).toEqual({
    type: 'wake/reply-overdue',
    messageId: id,
    recipient: '@a',
    waitingOn: ['@c'],
    dueBy,
    position: expect.any(String),
  });
  expect(await owed('@c')).toEqual({ repliesOwed: 1, nextReplyDueBy: dueBy }); // overdue, still owed

  // C answers late: it owes nothing; the ledger shows both replies.
  now = T0 + 20 * MIN;
  await call('POST', '/v1/messages', t['@c'], { to: '@a', subject: 're', body: 'sorry, late', inReplyTo: id });
  await settle();
  expect(await owed('@c')).toEqual({ repliesOwed: 0, nextReplyDueBy: null });
  const ledger = (await call('GET', `/v1/messages/${id}/delivery`, t['@a'])).body;
  expect(ledger.summary.replied).toBe(2);
  expect(ledger.replyOverdueAt).toBe(new Date(T0 + 10 * MIN).toISOString());

  // Nothing fires after that: later ticks find nothing; a sentinel wake to A arrives after any other would have.
  now = T0 + 60 * MIN;
  for (const daemon of daemons) expect((await daemon.tick()).replies).toEqual({ overdue: [] });
  await settle();
  const sentinel = (await call('POST', '/v1/messages', t['@d'], { to: '@a', subject: 'sentinel', body: '.' })).body.messageId;
  await stream.next((e) => e.event === 'wake' && e.data.messageId === sentinel);
  expect(stream.wakes().filter((w) => w.type === 'wake/reply-overdue')).toHaveLength(1);
  expect(targets.flatMap((target) => target.nudges)).toHaveLength(1);
});

test('expectsReplyBy that is neither an ISO time nor a duration, or not after the send, is refused with the forms; nothing written', async () => {
  const token = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@e' })).body.token;
  for (const expectsReplyBy of ['tomorrow', '10 minutes', '2029-01-01T00:00:00Z', 'PT0S']) {
    const before = (await allEvents(mailbox)).length;
    const refused = await call('POST', '/v1/messages', token, { to: '@a', subject: 's', body: '.', expectsReplyBy });
    expect({ expectsReplyBy, status: refused.status, code: refused.body.code }).toEqual({
      expectsReplyBy,
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(refused.body.message).toMatch(/ISO 8601 time with an offset .* or a duration from now: 90s, 30m, 2h, 1d, PT30M/);
    expect((await allEvents(mailbox)).length).toBe(before);
  }
  const accepted = await call('POST', '/v1/messages', token, {
    to: '@a',
    subject: 's',
    body: '.',
    expectsReplyBy: new Date(now + 3_600_000).toISOString(),
  });
  expect(accepted.status).toBe(201);
});

test('expectsReplyBy whose due time falls after 9999-12-31T23:59:59.999Z is refused naming the latest, not a 500; the latest itself is accepted', async () => {
  const token = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@f' })).body.token;
  const latest = Date.parse('9999-12-31T23:59:59.999Z');
  const daysLeft = (latest - now) / 86_400_000;
  // Beyond what a Date holds at all (these were 500 INTERNAL: RangeError from toISOString), and one day past the latest.
  for (const expectsReplyBy of ['100000000d', 'PT99999999999999H', '999999999999999999999999s', `${Math.ceil(daysLeft)}d`]) {
    const before = (await allEvents(mailbox)).length;
    const refused = await call('POST', '/v1/messages', token, { to: '@a', subject: 's', body: '.', expectsReplyBy });
    expect({ expectsReplyBy, status: refused.status, body: refused.body }).toEqual({
      expectsReplyBy,
      status: 400,
      body: {
        error: 'Validation failed',
        code: 'VALIDATION_FAILED',
        message: expect.stringMatching(
          /^expectsReplyBy '.+' is too far ahead: it falls after 9999-12-31T23:59:59.999Z, the latest due time; give an ISO 8601 time/,
        ),
        field: 'expectsReplyBy',
        value: expectsReplyBy,
        latest: '9999-12-31T23:59:59.999Z',
      },
    });
    expect((await allEvents(mailbox)).length).toBe(before);
  }
  for (const expectsReplyBy of ['9999-12-31T23:59:59.999Z', `${Math.floor(daysLeft)}d`]) {
    const accepted = await call('POST', '/v1/messages', token, { to: '@a', subject: 's', body: '.', expectsReplyBy });
    expect({ expectsReplyBy, status: accepted.status }).toEqual({ expectsReplyBy, status: 201 });
  }
});

test('expectsReplyBy finer than a millisecond is rounded up to the next one, never earlier than asked: stored and shown so', async () => {
  const token = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@g' })).body.token;
  const at = (ms: number) => new Date(now + ms).toISOString();
  for (const [expectsReplyBy, dueBy] of [
    // Python's isoformat: six fraction digits and a +00:00 offset (Date.parse kept .123, a due time 0.456 ms early).
    [at(3_600_000).replace('.000Z', '.123456+00:00'), at(3_600_124)],
    [at(3_600_000).replace('.000Z', '.000001Z'), at(3_600_001)],
    // Half a millisecond after the send is after it (it was refused as "not after the send"): due a millisecond after.
    [at(0).replace('.000Z', '.0005Z'), at(1)],
    // Exactly a whole millisecond, written finer: kept as it is.
    [at(3_600_000).replace('.000Z', '.250000Z'), at(3_600_250)],
  ]) {
    const sent = await call('POST', '/v1/messages', token, { to: '@a', subject: 's', body: '.', expectsReplyBy });
    expect({ expectsReplyBy, status: sent.status }).toEqual({ expectsReplyBy, status: 201 });
    const id = sent.body.messageId;
    await settle();
    const requested = (await allEvents(mailbox)).filter((e) => e.type === 'ReplyRequested' && e.data.messageId === id);
    expect(requested.map((e) => e.data)).toEqual([{ messageId: id, dueBy }]);
    expect((await call('GET', `/v1/messages/${id}/delivery`, token)).body).toMatchObject({ replyDueBy: dueBy });
  }
});
