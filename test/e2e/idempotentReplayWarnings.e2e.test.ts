/**
 * A retried send (the same Idempotency-Key and content) returns the original result (DESIGN §3), warnings included.
 * Its warnings were worked out again from the registry at the retry: a send to @dave before @dave registered was
 * answered UNREGISTERED_RECIPIENT, its retry after the registration answered without it; a send to @carol while she
 * was active was answered without a warning, its retry after her retirement with RETIRED_RECIPIENT ("will never read
 * it"); a near miss's suggestions changed with the agents. The retry now answers the first send's body, byte for byte,
 * and writes nothing.
 *
 * Its task notes alike: a holder's reply in a task's thread was answered TASK_UNCHANGED ("it is still Working"); once
 * the holder completed the task, the retry of that reply answered without the note. The notes are now read from the
 * task as it stood at the send (its stream folded up to the message's log position). Four more agents: @tb holds tasks
 * sent by @ta, @tc (in a thread @tc named) and @td.
 */
import { startTestServer, type HttpResult, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let now = Date.parse('2030-05-01T10:00:00.000Z');
const tick = () => {
  now += 1000;
};

beforeAll(async () => {
  server = await startTestServer({}, { clock: { now: () => new Date(now) } });
  t = await server.register(['@alice', '@bob', '@carol']);
});
afterAll(() => server.close());

const send = (key: string, body: Record<string, unknown>) =>
  server.call('POST', '/v1/messages', {
    token: t['@alice'],
    body: { subject: 'review', body: 'b', ...body },
    headers: { 'idempotency-key': key },
  });

type Sent = HttpResult;
type Case = [key: string, body: Record<string, unknown>];

/** Each case retried under its key is answered its first body, as a replay, and the retries write nothing. */
async function expectRetriesAnswerFirsts(cases: Case[], firsts: Sent[], resend: (...c: Case) => Promise<Sent>) {
  const before = await server.eventCount();
  for (const [i, [key, body]] of cases.entries()) {
    const again = await resend(key, body);
    expect([key, again.status, again.headers.get('idempotent-replayed')]).toEqual([key, 201, 'true']);
    expect([key, again.body]).toEqual([key, firsts[i].body]);
  }
  expect(await server.eventCount()).toBe(before);
}

test('a retry after the registry changed returns the first answer, warnings included, and writes nothing', async () => {
  const cases: Case[] = [
    ['to-dave', { to: '@dave' }], // not registered yet: UNREGISTERED_RECIPIENT
    ['to-bob-carol', { to: ['@bob', '@carol'] }], // both active: no warning
    ['to-caroll', { to: '@caroll' }], // a near miss: suggestions of the agents active then
  ];
  const firsts: Sent[] = [];
  for (const [key, body] of cases) {
    tick();
    const first = await send(key, body);
    expect([key, first.status]).toEqual([key, 201]);
    firsts.push(first);
  }
  expect(firsts[0].body.warnings).toMatchObject([{ code: 'UNREGISTERED_RECIPIENT' }]);
  expect(firsts[1].body.warnings).toBeUndefined();
  expect(firsts[2].body.warnings).toMatchObject([{ code: 'UNREGISTERED_RECIPIENT', suggestions: ['@carol'] }]);

  tick();
  await server.register(['@dave', '@carole']);
  tick();
  const retired = await server.call('DELETE', '/v1/agents/@carol', { token: server.adminToken });
  expect(retired.status).toBe(200);

  tick();
  await expectRetriesAnswerFirsts(cases, firsts, send);
});

let u: Record<string, string>;
const post = async (who: string, body: Record<string, unknown>, key?: string) => {
  tick();
  const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
  return server.call('POST', '/v1/messages', { token: u[who], body: { body: 'x', ...body }, headers });
};
const taskFrom = async (who: string, body: Record<string, unknown>) => {
  const sent = await post(who, { to: '@tb', task: {}, ...body });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};
const move = async (who: string, taskId: string, to: string) => {
  tick();
  const moved = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: u[who],
    body: { to, ...(to === 'InputRequired' ? { note: 'which branch?' } : {}) },
  });
  expect([taskId, to, moved.status]).toEqual([taskId, to, 200]);
};

test('a retried reply after the task moved returns the first answer, its task notes included, and writes nothing', async () => {
  u = await server.register(['@ta', '@tb', '@tc', '@td']);
  const fromA = await taskFrom('@ta', { subject: 'port it' });
  const fromC = await taskFrom('@tc', { subject: 'test it', threadId: 'port-7' });
  const fromD = await taskFrom('@td', { subject: 'ship it' });
  for (const taskId of [fromA, fromC, fromD]) await move('@tb', taskId, 'Working');
  await move('@tb', fromD, 'InputRequired'); // waits on @td: a message from @tb does not leave it unchanged "on @tb"

  const cases: Case[] = [
    ['done-a', { to: '@ta', subject: 'done', inReplyTo: fromA }], // TASK_UNCHANGED fromA, Working
    ['done-c', { to: '@tc', subject: 'done', threadId: 'port-7' }], // TASK_UNCHANGED fromC, in a named thread
    ['ping-d', { to: '@td', subject: 'well?', inReplyTo: fromD }], // no note: the task waits on @td
  ];
  const firsts: Sent[] = [];
  for (const [key, body] of cases) {
    const first = await post('@tb', body, key);
    expect([key, first.status]).toEqual([key, 201]);
    firsts.push(first);
  }
  expect(firsts[0].body.warnings).toMatchObject([{ code: 'TASK_UNCHANGED', taskId: fromA, state: 'Working' }]);
  expect(firsts[1].body.warnings).toMatchObject([{ code: 'TASK_UNCHANGED', taskId: fromC, state: 'Working' }]);
  expect(firsts[2].body.warnings).toBeUndefined();

  // The tasks move on: @tb completes two, @td answers its question (the task waits on @tb again).
  await move('@tb', fromA, 'Completed');
  await move('@tb', fromC, 'Completed');
  await move('@td', fromD, 'Working');

  tick();
  await expectRetriesAnswerFirsts(cases, firsts, (key, body) => post('@tb', body, key));
});
