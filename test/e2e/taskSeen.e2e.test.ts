/**
 * A task's message is seen by a recipient it is returned to through the task routes, as through the message routes
 * (docs/delivery.md: "seen: first returned to it by a list or a get"). An agent that works its tasks by GET /v1/tasks
 * and GET /v1/tasks/{id} (the routes docs/tasks.md gives it) never lists its inbox; before, its ledger said the message
 * was never seen, past the wake SLA the message was in the unwoken alarm (and the heartbeat would nudge the agent
 * about a task it had finished), and its inbox counted it unseen. On an injected clock: @s sends, @b and @c poll.
 */
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { ADMIN_TOKEN } from '../support/fixtures';
import { apiCaller } from '../support/apiCalls';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;
let now = T0;
let server: ClockedApiServer;
const call = apiCaller(() => server.url);

beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now), { wakeSlaMs: SLA, taskSweepMs: 0 });
});
afterAll(() => server.close());

async function settle(): Promise<void> {
  await server.mailbox.flushSeenMarks();
  expect(await server.mailbox.runner.waitFor((await server.mailbox.eventStore.headPosition())!, 5000)).toBe(true);
}

test('tasks listed or read by their recipients are seen: in the ledger, out of the unwoken alarm and the unseen count', async () => {
  const t: Record<string, string> = {};
  for (const identity of ['@s', '@b', '@c', '@d'])
    t[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  const send = async (to: string | string[], subject: string) => {
    const sent = await call('POST', '/v1/messages', t['@s'], { to, subject, body: '.', task: {} });
    expect(sent.status).toBe(201);
    return sent.body.messageId as string;
  };
  const direct = await send('@b', 'yours, @b');
  const listed = await send(['@b', '@c'], 'one of you');
  const forD = await send('@d', 'yours, @d');
  await settle();

  // @b works its direct task from GET /v1/tasks alone; @c finds the list task claimable and reads it by id.
  const assigned = await call('GET', '/v1/tasks?view=assigned', t['@b']);
  expect(assigned.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([direct]);
  expect((await call('POST', `/v1/tasks/${direct}/transition`, t['@b'], { to: 'Working' })).status).toBe(200);
  expect((await call('POST', `/v1/tasks/${direct}/transition`, t['@b'], { to: 'Completed' })).status).toBe(200);
  const claimable = await call('GET', '/v1/tasks?view=claimable', t['@b']);
  expect(claimable.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([listed]);
  expect((await call('GET', `/v1/tasks/${listed}`, t['@c'])).status).toBe(200);
  // The sender's own listing and get see nothing of theirs: they are no recipient.
  expect((await call('GET', '/v1/tasks?view=sent', t['@s'])).body.tasks).toHaveLength(3);
  expect((await call('GET', `/v1/tasks/${forD}`, t['@s'])).status).toBe(200);
  await settle();

  const seen = async (id: string) =>
    (await call('GET', `/v1/messages/${id}/delivery`, t['@s'])).body.recipients.map((r: { recipient: string; seen: unknown }) => [
      r.recipient,
      r.seen !== null,
    ]);
  expect(await seen(direct)).toEqual([['@b', true]]);
  expect(await seen(listed)).toEqual([
    ['@b', true],
    ['@c', true],
  ]);
  expect(await seen(forD)).toEqual([['@d', false]]);
  expect((await call('GET', '/v1/inbox/count', t['@b'])).body.unseenCount).toBe(0);
  expect((await call('GET', '/v1/inbox/count', t['@c'])).body.unseenCount).toBe(0);

  // Past the wake SLA: only @d's task, which nobody returned to @d, woke and reached no one.
  now = T0 + SLA + 1;
  const alarm = await call('GET', '/v1/audit/unwoken?limit=10', ADMIN_TOKEN);
  expect(alarm.body).toMatchObject({ count: 1, messages: [{ messageId: forD }] });
});
