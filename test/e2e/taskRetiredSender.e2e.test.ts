/**
 * Retiring an agent over HTTP cancels the tasks it sent that have not ended (TaskStateChanged to Canceled, reason
 * "sender retired", after AgentRetired, by the admin), whoever holds them and whatever open state they are in: no
 * input, authorization or cancel can ever come from a retired agent, and no one is left to take the outcome. Before,
 * a task it sent stayed open: its holder could still ask it for input (200), and from InputRequired nobody had a move.
 * Its holders are woken as on any cancel, nobody waits on the outcome, the audience's claimable lists drop it, the
 * sender's timeline tells it, and until a retirement's cancels are written its holder may not ask the retired sender.
 */
import type { TaskWakeEvent, WakeEvent } from '../../src/projections/viewChanges';
import { startTestServer, type TestServer } from '../support/httpServer';
import { appendRetirementAsCrashed } from '../support/agentsServer';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;

beforeAll(async () => {
  server = await startTestServer({ taskSweepMs: 0 });
  t = await server.register(['@a', '@b', '@c', '@d', '@s', '@q', '@r']);
  auditor = (await server.register(['@auditor'], 'auditor'))['@auditor'];
});
afterAll(async () => {
  await server.close();
});

type Logged = { type: string; data: Record<string, unknown>; metadata: { actor: string } };
const eventsSince = async (count: number): Promise<Logged[]> =>
  ((await server.mailbox.eventStore.readAll(null, 100_000)) as unknown as Logged[]).slice(count);

const send = async (from: string, body: object) => {
  const { status, body: sent } = await server.call('POST', '/v1/messages', { token: t[from], body });
  expect(status).toBe(201);
  return sent.messageId as string;
};
const claim = async (who: string, taskId: string) => {
  expect(await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t[who] })).toMatchObject({ status: 200 });
};
const transition = (who: string, taskId: string, body: object) =>
  server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t[who], body });
const move = async (who: string, taskId: string, body: object) => {
  expect(await transition(who, taskId, body)).toMatchObject({ status: 200 });
};
const listed = async (who: string, view: string): Promise<string[]> => {
  const page = await server.call('GET', `/v1/tasks?view=${view}`, { token: t[who] });
  expect(page.status).toBe(200);
  return page.body.tasks.map((task: { taskId: string }) => task.taskId);
};
const retire = (identity: string) => server.call('DELETE', `/v1/agents/${identity}`, { token: server.adminToken });
const waiting = async (identity: string) => (await server.mailbox.projections.heartbeat(identity)).tasksWaiting;
const byTask = (x: { taskId?: unknown }, y: { taskId?: unknown }) => String(x.taskId).localeCompare(String(y.taskId));

/** The task wakes @c and @d get, up to a marker @b sends each of them after (the bus keeps log order per subscriber). */
async function watchTaskWakes() {
  const wakes: Array<Pick<TaskWakeEvent, 'recipient' | 'taskId' | 'state' | 'by' | 'event'>> = [];
  const markers = new Map<string, () => void>();
  const stops = await Promise.all(
    ['@c', '@d'].map((identity) =>
      server.mailbox.wakeBus.subscribe(identity, (wake: WakeEvent) => {
        if (wake.type === 'wake/task') {
          const { recipient, taskId, state, by, event } = wake;
          wakes.push({ recipient, taskId, state, by, event });
        } else if (wake.type === 'wake/message' && wake.subject === 'marker') markers.get(wake.recipient)?.();
      }),
    ),
  );
  return {
    async settle() {
      const arrived = ['@c', '@d'].map((p) => new Promise<void>((resolve) => markers.set(p, resolve)));
      await send('@b', { to: ['@c', '@d'], subject: 'marker', body: 'x' });
      await Promise.all(arrived);
      await Promise.all(stops.map((stop) => stop()));
      return wakes;
    },
  };
}

it('retiring @a cancels every task it sent that had not ended, in each open state; its finished task stays as it ended', async () => {
  // The probe's task: a list task to @c and @d, claimed by @c, which then asks @a for input.
  const asking = await send('@a', { to: ['@c', '@d'], subject: 'asking', body: 'x', task: { state: 'submitted' } });
  await claim('@c', asking);
  await move('@c', asking, { to: 'working' });
  await move('@c', asking, { to: 'input-required', note: 'which branch?' });
  const working = await send('@a', { to: ['@c', '@d'], subject: 'working', body: 'x', task: {} });
  await claim('@c', working);
  await move('@c', working, { to: 'working' });
  const unclaimed = await send('@a', { to: ['@c', '@d'], subject: 'unclaimed', body: 'x', task: {} });
  const broadcast = await send('@a', { to: 'AGENT:*', subject: 'broadcast', body: 'x', task: {} });
  const direct = await send('@a', { to: '@d', subject: 'direct', body: 'x', task: {} });
  await move('@d', direct, { to: 'working' });
  const auth = await send('@a', { to: '@d', subject: 'auth', body: 'x', task: {} });
  await move('@d', auth, { to: 'working' });
  await move('@d', auth, { to: 'auth-required', note: 'may I push?' });
  const unknown = await send('@a', { to: '@c', subject: 'unknown', body: 'x', task: { state: 'unknown' } });
  const done = await send('@a', { to: '@c', subject: 'done', body: 'x', task: {} });
  await move('@c', done, { to: 'working' });
  await move('@c', done, { to: 'completed' });
  const others = await send('@s', { to: ['@c', '@d'], subject: 'not @a', body: 'x', task: {} });
  // @c works one (the others wait on @a or nobody); @a owes answers to two and has an outcome to see.
  expect([await waiting('@c'), await waiting('@d'), await waiting('@a')]).toEqual([1, 1, 3]);
  expect(await listed('@d', 'claimable')).toEqual(expect.arrayContaining([unclaimed, broadcast, others]));

  const wakes = await watchTaskWakes();
  const before = await server.eventCount();
  const retired = await retire('@a');
  expect(retired.status).toBe(200);
  const open = [asking, working, unclaimed, broadcast, direct, auth, unknown];
  expect([...retired.body.canceledTasks].sort()).toEqual([...open].sort());
  expect(retired.body).toMatchObject({ identity: '@a', releasedTasks: [] });
  expect(retired.body.warnings).toBeUndefined();

  const written = await eventsSince(before);
  expect(written.map((e) => e.type)).toEqual(['AgentRetired', ...open.map(() => 'TaskStateChanged')]);
  const admin = written[0].metadata.actor;
  expect(admin).not.toBe('@a');
  const cancels = written.slice(1);
  expect(cancels.map((e) => e.metadata.actor)).toEqual(open.map(() => admin));
  const from = { [asking]: 'InputRequired', [working]: 'Working', [unclaimed]: 'Submitted', [broadcast]: 'Submitted' };
  Object.assign(from, { [direct]: 'Working', [auth]: 'AuthRequired', [unknown]: 'Unknown' });
  expect(cancels.map((e) => e.data).sort(byTask)).toEqual(
    open
      .map((taskId) => ({
        taskId,
        from: from[taskId],
        to: 'Canceled',
        reason: 'sender retired',
        note: null,
        changedAt: expect.any(String),
      }))
      .sort(byTask),
  );

  // The read model shows it: canceled with its reason, in no claimable list, waiting on nobody.
  for (const taskId of open) {
    const task = await server.call('GET', `/v1/tasks/${taskId}`, { token: auditor });
    expect(task).toMatchObject({ status: 200, body: { status: { state: 'TASK_STATE_CANCELLED' } } });
    expect(task.body.history.at(-1).parts[0].text).toBe('sender retired');
  }
  const held = await server.call('GET', '/v1/tasks?view=assigned&state=canceled', { token: t['@c'] });
  expect(held.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual(expect.arrayContaining([asking, working]));
  for (const who of ['@c', '@d']) {
    const claimable = await listed(who, 'claimable');
    expect(claimable).toContain(others);
    for (const taskId of [unclaimed, broadcast]) expect(claimable).not.toContain(taskId);
  }
  // Nobody waits on a canceled task: @a keeps only the outcome of the task that was completed before.
  expect([await waiting('@c'), await waiting('@d'), await waiting('@a')]).toEqual([0, 0, 1]);

  // Its holders are woken, by the admin (the cancel of an unclaimed task wakes nobody, as a sender's cancel).
  const woken = (await wakes.settle()).sort(byTask);
  const wake = (recipient: string, taskId: string) => ({
    recipient,
    taskId,
    state: 'Canceled',
    by: admin,
    event: 'TaskStateChanged',
  });
  expect(woken).toEqual(
    [wake('@c', asking), wake('@c', working), wake('@d', direct), wake('@d', auth), wake('@c', unknown)].sort(byTask),
  );

  // Finished: nobody may move it any more, and nothing is written (@c asking the gone sender, as in the probe).
  const count = await server.eventCount();
  const refused = await transition('@c', working, { to: 'input-required', note: 'which branch?' });
  expect(refused).toMatchObject({ status: 409, body: { code: 'INVALID_TRANSITION', currentState: 'Canceled', allowed: [] } });
  expect(await transition('@d', unclaimed, { to: 'working' })).toMatchObject({
    status: 409,
    body: { code: 'INVALID_TRANSITION', currentState: 'Canceled' },
  });
  expect(await server.call('POST', `/v1/tasks/${broadcast}/claim`, { token: t['@q'] })).toMatchObject({
    status: 409,
    body: { code: 'INVALID_TRANSITION', currentState: 'Canceled' },
  });
  expect(await server.eventCount()).toBe(count);

  // What @a finished stays as it ended; a task of another sender is untouched.
  const finished = await server.call('GET', `/v1/tasks/${done}`, { token: t['@c'] });
  expect(finished.body).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
  expect(written.filter((e) => e.data.taskId === done || e.data.taskId === others)).toEqual([]);

  // Retiring @a again: accepted as already done, and nothing more is written. (Counted from here: @c's read of the
  // finished task just above is its recipient's, which marks the message seen.)
  const beforeAgain = await server.eventCount();
  const again = await retire('@a');
  expect(again).toMatchObject({ status: 200, body: { retiredAt: retired.body.retiredAt, canceledTasks: [], releasedTasks: [] } });
  expect(await server.eventCount()).toBe(beforeAgain);
});

it('a crash between the retirement and its cancels: the holder may not ask the retired sender, and retiring again cancels', async () => {
  const taskId = await send('@r', { to: ['@c', '@d'], subject: 'crash', body: 'x', task: {} });
  await claim('@d', taskId);
  await move('@d', taskId, { to: 'working' });
  // The retirement as a process that crashed right after appending it leaves it: AgentRetired, no cancel.
  await appendRetirementAsCrashed(server, '@r');

  const before = await server.eventCount();
  for (const to of ['input-required', 'auth-required']) {
    const refused = await transition('@d', taskId, { to, note: 'which branch?' });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        code: 'INVALID_TRANSITION',
        currentState: 'Working',
        requested: to === 'input-required' ? 'InputRequired' : 'AuthRequired',
        allowed: ['Completed', 'Failed', 'Submitted'],
        sender: '@r',
      },
    });
    expect(refused.body.message).toContain('its sender @r was retired, so no answer can ever come');
  }
  expect(await server.eventCount()).toBe(before);

  const retried = await retire('@r'); // already retired: no second AgentRetired, the cancel left undone is written
  expect(retried).toMatchObject({ status: 200, body: { canceledTasks: [taskId], releasedTasks: [] } });
  expect((await eventsSince(before)).map((e) => [e.type, e.data.taskId, e.data.reason])).toEqual([
    ['TaskStateChanged', taskId, 'sender retired'],
  ]);
  const task = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@d'] });
  expect(task.body).toMatchObject({ status: { state: 'TASK_STATE_CANCELLED' }, mailbox: { assignee: '@d' } });
});
