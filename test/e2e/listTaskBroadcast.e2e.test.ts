/**
 * A task sent to a list of identities (`to: ["@b", "@c"]`) is no broadcast: DESIGN section 2 says the broadcast is the
 * literal AGENT:*, nothing else. GET /v1/tasks said `isBroadcast: true` for it while its story (GET
 * /v1/audit/messages/{id}, `mailbox audit message`) and its wakes said false. Every surface now says the same; the
 * list's task stays open to its identities as a broadcast's is to its audience (claimable, first claim wins, returned
 * to them when its holder is retired).
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c', '@d']);
});
afterAll(() => server.close());

const send = async (to: string | string[]) => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to, subject: 'task', body: 'x', task: { state: 'submitted' } },
  });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};
const listedTask = async (who: string, view: string, taskId: string) => {
  const listed = await server.call('GET', `/v1/tasks?view=${view}`, { token: t[who] });
  expect(listed.status).toBe(200);
  return listed.body.tasks.find((task: { taskId: string }) => task.taskId === taskId);
};
const story = async (messageId: string) => {
  const told = await server.call('GET', `/v1/audit/messages/${messageId}`, { token: server.adminToken });
  expect(told.status).toBe(200);
  return told.body;
};

test.each<[string, string | string[], boolean]>([
  ['a list', ['@b', '@c'], false],
  ['AGENT:*', 'AGENT:*', true],
])('a task sent to %s: GET /v1/tasks and the audit story agree on isBroadcast', async (_what, to, broadcast) => {
  const taskId = await send(to);
  expect(await listedTask('@s', 'sent', taskId)).toMatchObject({ to, isBroadcast: broadcast, assignee: null });
  expect((await story(taskId)).sent).toMatchObject({ to, isBroadcast: broadcast });
  for (const who of ['@b', '@c']) expect(await listedTask(who, 'claimable', taskId)).toMatchObject({ isBroadcast: broadcast });
});

test('a list task is claimed by one of its identities (first claim wins); to anyone else it does not exist', async () => {
  const taskId = await send(['@b', '@c']);
  expect(await listedTask('@d', 'claimable', taskId)).toBeUndefined();
  const before = await server.eventCount();
  const outsider = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@d'] });
  // No oracle of a private task (who it was sent to, its state): the answer of an id that names nothing, as GET gives.
  expect([outsider.status, outsider.body.code]).toEqual([404, 'TASK_NOT_FOUND']);
  const unknown = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@d'] });
  expect([unknown.status, unknown.body.code]).toEqual([404, 'TASK_NOT_FOUND']);
  expect(await server.eventCount()).toBe(before);
  expect(await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'] })).toMatchObject({
    status: 200,
    body: { assignee: '@b' },
  });
  const second = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@c'] });
  expect([second.status, second.body.code]).toEqual([409, 'TASK_ALREADY_CLAIMED']);
  expect(await listedTask('@b', 'assigned', taskId)).toMatchObject({ isBroadcast: false, assignee: '@b' });
});

test("retiring a list task's holder returns it to the listed identities, as for a broadcast task", async () => {
  const { '@h': holderToken } = await server.register(['@h']);
  t['@h'] = holderToken;
  const taskId = await send(['@h', '@c']);
  expect(await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@h'] })).toMatchObject({ status: 200 });
  const retired = await server.call('DELETE', '/v1/agents/@h', { token: server.adminToken });
  expect(retired).toMatchObject({ status: 200, body: { releasedTasks: [taskId] } });
  expect(await listedTask('@c', 'claimable', taskId)).toMatchObject({ assignee: null, state: 'Submitted', isBroadcast: false });
});
