/**
 * A retried send (the same Idempotency-Key and content) returns the original result (DESIGN §3), its task notes too.
 * A holder's reply in a task's thread was answered TASK_UNCHANGED ("it is still Working"); once the holder completed
 * the task, the retry of that reply answered without the note, a body unlike the first. The notes are now read from
 * the task as it stood at the send (its stream folded up to the message's log position), so the retry answers the
 * first body, and writes nothing. Four agents: @b holds tasks sent by @a, @c (in a thread @c named) and @d.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let now = Date.parse('2030-05-01T10:00:00.000Z');
const tick = () => {
  now += 1000;
};

beforeAll(async () => {
  server = await startTestServer({}, { clock: { now: () => new Date(now) } });
  t = await server.register(['@a', '@b', '@c', '@d']);
});
afterAll(() => server.close());

const post = async (who: string, body: Record<string, unknown>, key?: string) => {
  tick();
  const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
  return server.call('POST', '/v1/messages', { token: t[who], body: { body: 'x', ...body }, headers });
};
const taskFrom = async (who: string, body: Record<string, unknown>) => {
  const sent = await post(who, { to: '@b', task: {}, ...body });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};
const move = async (who: string, taskId: string, to: string) => {
  tick();
  const moved = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: t[who],
    body: { to, ...(to === 'InputRequired' ? { note: 'which branch?' } : {}) },
  });
  expect([taskId, to, moved.status]).toEqual([taskId, to, 200]);
};

test('a retried reply after the task moved returns the first answer, its task notes included, and writes nothing', async () => {
  const fromA = await taskFrom('@a', { subject: 'port it' });
  const fromC = await taskFrom('@c', { subject: 'test it', threadId: 'port-7' });
  const fromD = await taskFrom('@d', { subject: 'ship it' });
  for (const taskId of [fromA, fromC, fromD]) await move('@b', taskId, 'Working');
  await move('@b', fromD, 'InputRequired'); // waits on @d: a message from @b does not leave it unchanged "on @b"

  const cases: Array<[string, Record<string, unknown>]> = [
    ['done-a', { to: '@a', subject: 'done', inReplyTo: fromA }], // TASK_UNCHANGED fromA, Working
    ['done-c', { to: '@c', subject: 'done', threadId: 'port-7' }], // TASK_UNCHANGED fromC, in a named thread
    ['ping-d', { to: '@d', subject: 'well?', inReplyTo: fromD }], // no note: the task waits on @d
  ];
  const firsts = [];
  for (const [key, body] of cases) {
    const first = await post('@b', body, key);
    expect([key, first.status]).toEqual([key, 201]);
    firsts.push(first);
  }
  expect(firsts[0].body.warnings).toMatchObject([{ code: 'TASK_UNCHANGED', taskId: fromA, state: 'Working' }]);
  expect(firsts[1].body.warnings).toMatchObject([{ code: 'TASK_UNCHANGED', taskId: fromC, state: 'Working' }]);
  expect(firsts[2].body.warnings).toBeUndefined();

  // The tasks move on: @b completes two, @d answers its question (the task waits on @b again).
  await move('@b', fromA, 'Completed');
  await move('@b', fromC, 'Completed');
  await move('@d', fromD, 'Working');

  tick();
  const before = await server.eventCount();
  for (const [i, [key, body]] of cases.entries()) {
    const again = await post('@b', body, key);
    expect([key, again.status, again.headers.get('idempotent-replayed')]).toEqual([key, 201, 'true']);
    expect([key, again.body]).toEqual([key, firsts[i].body]);
  }
  expect(await server.eventCount()).toBe(before);
});
