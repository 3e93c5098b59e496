/**
 * Retiring an agent over HTTP returns the broadcast tasks it holds unfinished to their audiences (TaskReleased, after
 * AgentRetired, by the admin): @s broadcasts tasks, @e claims them, the admin retires @e, and @b and @c find them
 * claimable again, @b's claim wins. A finished task and a direct task of @e's stay as they are; a retirement of an
 * agent holding nothing, and a repeated retirement, write nothing more than before.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { appendRetirementAsCrashed } from '../support/agentsServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@e', '@b', '@c', '@n', '@d']);
});
afterAll(async () => {
  await server.close();
});

type Logged = { type: string; data: Record<string, unknown>; metadata: { actor: string } };
const eventsSince = async (count: number): Promise<Logged[]> =>
  ((await server.mailbox.eventStore.readAll(null, 100_000)) as unknown as Logged[]).slice(count);

const send = async (body: object) => {
  const { status, body: sent } = await server.call('POST', '/v1/messages', { token: t['@s'], body });
  expect(status).toBe(201);
  return sent.messageId as string;
};
const claim = (who: string, taskId: string) => server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t[who] });
const move = async (who: string, taskId: string, body: object) => {
  const moved = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t[who], body });
  expect(moved.status).toBe(200);
};
const claimable = async (who: string): Promise<string[]> => {
  const listed = await server.call('GET', '/v1/tasks?view=claimable', { token: t[who] });
  expect(listed.status).toBe(200);
  return listed.body.tasks.map((task: { taskId: string }) => task.taskId);
};
const retire = (identity: string) => server.call('DELETE', `/v1/agents/${identity}`, { token: server.adminToken });

it('retiring @e returns its unfinished broadcast tasks to the audience; its finished and direct tasks stay as they are', async () => {
  const open = await send({ to: 'AGENT:*', subject: 'open', body: 'x', task: { state: 'submitted' } });
  const asking = await send({ to: 'AGENT:*', subject: 'asking', body: 'x', task: { state: 'submitted' } });
  const done = await send({ to: 'AGENT:*', subject: 'done', body: 'x', task: { state: 'submitted' } });
  const direct = await send({ to: '@e', subject: 'direct', body: 'x', task: { state: 'submitted' } });
  for (const taskId of [open, asking, done]) expect(await claim('@e', taskId)).toMatchObject({ status: 200 });
  await move('@e', asking, { to: 'working' });
  await move('@e', asking, { to: 'input-required', note: 'which one?' });
  await move('@e', done, { to: 'working' });
  await move('@e', done, { to: 'completed' });
  await move('@e', direct, { to: 'working' });
  const refused = await claim('@b', open); // before the retirement: @e's
  expect(refused).toMatchObject({ status: 409, body: { code: 'TASK_ALREADY_CLAIMED', claimant: '@e' } });

  const before = await server.eventCount();
  const retired = await retire('@e');
  expect(retired.status).toBe(200);
  expect([...retired.body.releasedTasks].sort()).toEqual([open, asking].sort());
  expect(retired.body.warnings).toBeUndefined();

  const written = await eventsSince(before);
  expect(written.map((e) => e.type)).toEqual(['AgentRetired', 'TaskReleased', 'TaskReleased']);
  expect(written.filter((e) => e.data.taskId === done || e.data.taskId === direct)).toEqual([]);
  const admin = written[0].metadata.actor;
  expect(admin).not.toBe('@e');
  const releases = written.slice(1);
  expect(releases.map((e) => e.metadata.actor)).toEqual([admin, admin]);
  expect(releases.map((e) => e.data).sort((x, y) => String(x.taskId).localeCompare(String(y.taskId)))).toEqual(
    [
      { taskId: open, claimant: '@e', from: 'Submitted', releasedAt: expect.any(String) },
      { taskId: asking, claimant: '@e', from: 'InputRequired', releasedAt: expect.any(String) },
    ].sort((x, y) => x.taskId.localeCompare(y.taskId)),
  );

  for (const taskId of [open, asking]) {
    const task = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@s'] });
    expect(task).toMatchObject({ status: 200, body: { status: { state: 'TASK_STATE_SUBMITTED' }, mailbox: { assignee: null } } });
    expect(task.body.history.at(-1).parts[0].text).toBe('released from @e, who was retired: back to Submitted, claimable again');
  }
  for (const who of ['@b', '@c']) expect(await claimable(who)).toEqual(expect.arrayContaining([open, asking]));

  const won = await claim('@b', open);
  expect(won).toMatchObject({ status: 200, body: { taskId: open, state: 'Submitted', assignee: '@b' } });
  expect(await claimable('@c')).not.toContain(open);
  expect(await claim('@c', asking)).toMatchObject({ status: 200, body: { assignee: '@c' } });

  // What @e finished, and what was sent to it alone, stay as they are (nothing was written on their streams, above).
  const finished = await server.call('GET', `/v1/tasks/${done}`, { token: t['@s'] });
  expect(finished.body).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, mailbox: { assignee: '@e' } });
  const kept = await server.call('GET', `/v1/tasks/${direct}`, { token: t['@s'] });
  expect(kept.body).toMatchObject({ status: { state: 'TASK_STATE_WORKING' }, mailbox: { assignee: '@e' } });

  // Retiring @e again: accepted as already done (the same retiredAt), and nothing more is written.
  const count = await server.eventCount();
  const again = await retire('@e');
  expect(again).toMatchObject({ status: 200, body: { retiredAt: retired.body.retiredAt, releasedTasks: [] } });
  expect(await server.eventCount()).toBe(count);
});

it('retiring an agent that holds no task writes only AgentRetired', async () => {
  await send({ to: '@n', subject: 'plain mail', body: 'no task' });
  const before = await server.eventCount();
  const retired = await retire('@n');
  expect(retired).toMatchObject({ status: 200, body: { identity: '@n', releasedTasks: [] } });
  expect((await eventsSince(before)).map((e) => e.type)).toEqual(['AgentRetired']);
});

it('a crash between the retirement and its releases: a claim by the audience succeeds, and retiring again finishes the releases', async () => {
  const claimedNow = await send({ to: 'AGENT:*', subject: 'crash 1', body: 'x', task: { state: 'submitted' } });
  const leftOver = await send({ to: 'AGENT:*', subject: 'crash 2', body: 'x', task: { state: 'submitted' } });
  for (const taskId of [claimedNow, leftOver]) expect(await claim('@d', taskId)).toMatchObject({ status: 200 });
  await move('@d', claimedNow, { to: 'working' });
  // The retirement as a process that crashed right after appending it leaves it: AgentRetired, no release.
  await appendRetirementAsCrashed(server, '@d');

  const before = await server.eventCount();
  const won = await claim('@c', claimedNow);
  expect(won).toMatchObject({ status: 200, body: { assignee: '@c', events: ['TaskReleased', 'TaskClaimed'] } });
  const written = await eventsSince(before);
  expect(written.map((e) => [e.type, e.data.claimant])).toEqual([
    ['TaskReleased', '@d'],
    ['TaskClaimed', '@c'],
  ]);
  expect(written[0].data).toMatchObject({ taskId: claimedNow, from: 'Working' });

  const retried = await retire('@d'); // already retired: no second AgentRetired, the release left undone is written
  expect(retried).toMatchObject({ status: 200, body: { releasedTasks: [leftOver] } });
  expect((await eventsSince(before + 2)).map((e) => [e.type, e.data.taskId ?? e.data.identity])).toEqual([
    ['TaskReleased', leftOver],
  ]);
  expect(await claimable('@b')).toContain(leftOver);
});
