/**
 * A task past its deadline is over, whether or not the sweeper has recorded it yet: every read shows it Canceled
 * (expired), so a claim or a move then is refused as on any finished task, over MCP and HTTP alike, and writes nothing.
 * Found by walking a swarm's flows as agents (helper ht2): @c claimed a broadcast task a second after its deadline and
 * got it (TaskClaimed, "assignee": "@c"), while get_task said TASK_STATE_CANCELLED "expired at its deadline"; its
 * holder completed one, its sender canceled one, each written after the deadline.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { McpSdkClients } from '../support/mcpSdkClients';

const T0 = Date.parse('2030-05-01T12:00:00.000Z');
let now = T0;
let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'past-deadline');

beforeAll(async () => {
  // The sweeper off: what a read shows as of now is all there is until a sweep (or one that lags behind).
  server = await startTestServer({ taskSweepMs: 0 }, { clock: { now: () => new Date(now) } });
  t = await server.register(['@s', '@b', '@c']);
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

const at = (ms: number) => new Date(now + ms).toISOString();
const post = async (who: string, path: string, body: object, status: number) => {
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
};
const sendTask = async (to: string | string[], task: object): Promise<string> =>
  (await post('@s', '/v1/messages', { to, subject: 'by the deadline', body: 'x', task }, 201)).messageId;

/** `call` is refused with INVALID_TRANSITION, saying the task expired at `deadline`; nothing is written. */
async function refusedAsExpired(call: () => Promise<any>, requested: string, deadline: string) {
  const before = await server.eventCount();
  const refusal = await call();
  expect(refusal).toMatchObject({
    code: 'INVALID_TRANSITION',
    currentState: 'Canceled',
    requested,
    allowed: [],
    endedBy: null,
    endedAt: deadline,
  });
  expect(refusal.message).toContain(`its deadline ${deadline} had passed`);
  expect(refusal.message).toContain('nothing was changed');
  expect(await server.eventCount()).toBe(before);
}

test('over MCP: a claim of an AGENT:* task past its deadline is refused, and a read agrees', async () => {
  const c = await clients.http(t['@c']);
  const deadline = at(10_000);
  const taskId = await sendTask('AGENT:*', { budget: { deadline } });
  now += 11_000;
  const claim = async () => {
    const result: any = await c.callTool({ name: 'claim_task', arguments: { taskId } });
    expect(result.isError).toBe(true);
    return result.structuredContent ?? JSON.parse(result.content[0].text);
  };
  await refusedAsExpired(claim, 'claim', deadline);
  const read: any = await c.callTool({ name: 'get_task', arguments: { taskId } });
  expect(read.structuredContent).toMatchObject({ status: { state: 'TASK_STATE_CANCELLED' }, mailbox: { assignee: null } });
});

test("over HTTP: the holder's move, the sender's cancel and a list task's claim past the deadline are refused", async () => {
  const deadline = at(10_000);
  const held = await sendTask('AGENT:*', { expiresAt: deadline });
  await post('@b', `/v1/tasks/${held}/claim`, { leaseSeconds: 3600 }, 200);
  await post('@b', `/v1/tasks/${held}/transition`, { to: 'Working' }, 200);
  const listed = await sendTask(['@b', '@c'], { expiresAt: deadline });
  const direct = await sendTask('@c', { expiresAt: deadline });
  now += 10_000; // at the deadline itself: over (the sweeper ends a task at it)
  const refused = (who: string, path: string, body: object) => () => post(who, path, body, 409);
  await refusedAsExpired(refused('@b', `/v1/tasks/${held}/transition`, { to: 'Completed' }), 'Completed', deadline);
  await refusedAsExpired(refused('@s', `/v1/tasks/${held}/transition`, { to: 'Canceled' }), 'Canceled', deadline);
  await refusedAsExpired(refused('@c', `/v1/tasks/${listed}/claim`, {}), 'claim', deadline);
  await refusedAsExpired(refused('@c', `/v1/tasks/${direct}/transition`, { to: 'Working' }), 'Working', deadline);
  // The sweep records the expiry: the task ends as the reads said, its holder unchanged.
  expect(await server.mailbox.sweeper.sweepOnce()).toMatchObject({ failed: 0 });
  for (const taskId of [listed, direct]) {
    const { body } = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@s'] });
    expect(body.history.map((line: any) => line.metadata.event)).toEqual(['MessageSent', 'TaskExpired']);
  }
  const task = await server.call('GET', `/v1/tasks/${held}`, { token: t['@s'] });
  expect(task.body.mailbox).toMatchObject({ state: 'Canceled', assignee: '@b' });
  expect(task.body.history.map((line: any) => line.metadata.event)).toEqual([
    'MessageSent',
    'TaskClaimed',
    'TaskStateChanged',
    'TaskExpired',
  ]);
});

test("the sender's reply in the thread of a task that asks it, past the deadline, is only a message: no move, no warning", async () => {
  const deadline = at(10_000);
  const taskId = await sendTask('@b', { expiresAt: deadline });
  await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' }, 200);
  await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'InputRequired', note: 'which branch?' }, 200);
  now += 10_000;
  const before = await server.eventCount();
  const reply = await post('@s', '/v1/messages', { to: '@b', subject: 'main', body: 'main', inReplyTo: taskId }, 201);
  // It moved the expired task back to Working (a TaskStateChanged after the deadline, read as Canceled all along).
  expect(reply.warnings).toBeUndefined();
  const events = (await server.call('GET', '/v1/audit/events?after=0&limit=1000', { token: server.adminToken })).body.events;
  expect(events.slice(before).map((event: any) => event.type)).not.toContain('TaskStateChanged');
  const { body } = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@b'] });
  expect(body.status.state).toBe('TASK_STATE_CANCELLED');
});
