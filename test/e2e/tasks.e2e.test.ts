/**
 * Tasks over real HTTP and MCP (issue 12): 50 audience members claim one
 * broadcast task at once over HTTP (one winner, 49 TASK_ALREADY_CLAIMED naming
 * it), an agent registered later gets NOT_IN_AUDIENCE, the lifecycle through
 * the MCP tools, GET /v1/tasks paging, GET /v1/tasks/{id} as an A2A Task, and
 * refusals that write nothing. @a sends; the workers are the audience.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const workers = Array.from({ length: 50 }, (_, i) => `@w${String(i).padStart(2, '0')}`);

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c', ...workers]);
});
afterAll(async () => {
  await server.close();
});

const waiting = async (identity: string) => (await server.mailbox.projections.heartbeat(identity)).tasksWaiting;
const outcomesSeen = async (taskId: string) =>
  (await server.mailbox.eventStore.readAll(null, 100_000)).filter(
    (e) => e.type === 'TaskOutcomeSeen' && (e.data as { taskId: string }).taskId === taskId,
  );

const send = async (token: string, body: object) => {
  const { status, body: sent } = await server.call('POST', '/v1/messages', { token, body });
  expect(status).toBe(201);
  return sent.messageId as string;
};

it('50 concurrent claims over HTTP: one 200, 49 x 409 TASK_ALREADY_CLAIMED naming the winner; a later agent 403 NOT_IN_AUDIENCE', async () => {
  const taskId = await send(t['@a'], { to: 'AGENT:*', subject: 'storm', body: 'x', task: { state: 'submitted' } });
  const late = await server.register(['@late']);
  const answers = await Promise.all(
    workers.map((w) => server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t[w], body: { leaseSeconds: 600 } })),
  );
  const won = answers.filter((a) => a.status === 200);
  expect(won).toHaveLength(1);
  const winner = won[0].body.assignee;
  const lost = answers.filter((a) => a.status === 409);
  expect(lost).toHaveLength(49);
  const claims = (await server.mailbox.eventStore.readAll(null, 100_000)).filter((e) => e.type === 'TaskClaimed');
  expect(claims).toHaveLength(1);
  const { claimedAt } = claims[0].data as { claimedAt: string }; // each refusal names the claimant and when
  for (const answer of lost)
    expect(answer.body).toMatchObject({ code: 'TASK_ALREADY_CLAIMED', claimant: winner, claimedAt, taskId });

  const before = await server.eventCount();
  const outsider = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: late['@late'] });
  expect(outsider).toMatchObject({ status: 403, body: { code: 'NOT_IN_AUDIENCE' } });
  const named = await server.call('POST', `/v1/tasks/${taskId}/claim`, {
    token: t[winner],
    body: { taskId: '0a8d3f4e-1111-4c1e-9a55-000000000001' },
  });
  expect(named).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'taskId' } });
  const bogus = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t[winner], body: { to: 'Finished' } });
  expect(bogus).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  expect(bogus.body.message).toMatch(/InputRequired/);
  const skip = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t[winner], body: { to: 'Completed' } });
  expect(skip).toMatchObject({ status: 409, body: { code: 'INVALID_TRANSITION', currentState: 'Submitted' } });
  expect([...skip.body.allowed].sort()).toEqual(['Submitted', 'Working']); // a claimant releases, never declines for all
  expect(await server.eventCount()).toBe(before);
});

it('GET /v1/tasks: views, state filter, cursor pages bound to the listing; GET /v1/tasks/{id}: an A2A Task, 404 for outsiders', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await send(t['@a'], { to: '@b', subject: `direct ${i}`, body: `do ${i}`, task: {} }));
  await server.call('POST', `/v1/tasks/${ids[0]}/transition`, { token: t['@b'], body: { to: 'working' } });
  const first = await server.call('GET', '/v1/tasks?view=assigned&limit=2', { token: t['@b'] });
  expect(first.status).toBe(200);
  expect(first.body.tasks.map((x: { taskId: string }) => x.taskId)).toEqual([ids[2], ids[1]]);
  const next = await server.call('GET', `/v1/tasks?view=assigned&limit=2&cursor=${first.body.nextCursor}`, { token: t['@b'] });
  expect(next.body).toMatchObject({ tasks: [{ taskId: ids[0], state: 'Working' }], nextCursor: null });
  const misuse = await server.call('GET', `/v1/tasks?view=sent&limit=2&cursor=${first.body.nextCursor}`, { token: t['@b'] });
  expect(misuse).toMatchObject({ status: 400, body: { code: 'CURSOR_MISMATCH' } });
  const working = await server.call('GET', '/v1/tasks?state=TASK_STATE_WORKING,input-required', { token: t['@b'] });
  expect(working.body.tasks.map((x: { taskId: string }) => x.taskId)).toEqual([ids[0]]);
  const sent = await server.call('GET', '/v1/tasks?view=sent&limit=1', { token: t['@a'] });
  expect(sent.body.tasks[0]).toMatchObject({ taskId: ids[2], sender: '@a', assignee: '@b', audienceSize: 1 });
  const unknown = await server.call('GET', '/v1/tasks?box=inbox', { token: t['@b'] });
  expect(unknown).toMatchObject({ status: 400, body: { code: 'UNKNOWN_FIELD' } });

  const a2a = await server.call('GET', `/v1/tasks/${ids[0]}`, { token: t['@a'] });
  expect(a2a).toMatchObject({
    status: 200,
    body: {
      id: ids[0],
      status: { state: 'TASK_STATE_WORKING' },
      history: [{ role: 'ROLE_USER', parts: [{ kind: 'text', text: 'do 0' }] }, {}],
      mailbox: { assignee: '@b' },
    },
  });
  expect(await server.call('GET', `/v1/tasks/${ids[0]}`, { token: t['@c'] })).toMatchObject({
    status: 404,
    body: { code: 'TASK_NOT_FOUND' },
  });
  // Nor does a claim or an update tell a stranger more than a made-up id does: it answered 403 'sent directly to @b,
  // who holds it' and 409 with the task's currentState.
  const madeUp = '00000000-0000-4000-8000-000000000000';
  const before = await server.eventCount();
  for (const [path, body] of [
    ['claim', {}],
    ['transition', { to: 'Working' }],
    ['transition', { to: 'Canceled', reason: 'mine now' }],
  ] as const) {
    const stranger = await server.call('POST', `/v1/tasks/${ids[1]}/${path}`, { token: t['@c'], body });
    const unknown = await server.call('POST', `/v1/tasks/${madeUp}/${path}`, { token: t['@c'], body });
    expect(stranger.status).toBe(404);
    expect(JSON.stringify(stranger.body).replaceAll(ids[1], madeUp)).toBe(JSON.stringify(unknown.body));
  }
  expect(await server.eventCount()).toBe(before);
});

it('the MCP tools: claim_task, update_task (ask, answer, complete), list_tasks, get_task; errors as tool errors with the envelope', async () => {
  const taskId = await send(t['@a'], { to: 'AGENT:*', subject: 'via mcp', body: 'x', task: {} });
  const mcp = async (token: string) => {
    const client = new Client({ name: 'tasks-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  };
  const [b, c, a] = await Promise.all([mcp(t['@b']), mcp(t['@c']), mcp(t['@a'])]);
  type Result = { isError?: boolean; structuredContent?: any };
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Result;
  try {
    expect(
      (await call(b, 'list_tasks', { view: 'claimable' })).structuredContent.tasks.map((x: { taskId: string }) => x.taskId),
    ).toContain(taskId);
    expect((await call(b, 'claim_task', { taskId })).structuredContent).toMatchObject({
      assignee: '@b',
      events: ['TaskClaimed'],
    });
    const taken = await call(c, 'claim_task', { taskId });
    expect(taken).toMatchObject({ isError: true, structuredContent: { code: 'TASK_ALREADY_CLAIMED', claimant: '@b' } });
    await call(b, 'update_task', { taskId, to: 'Working' });
    expect((await call(b, 'update_task', { taskId, to: 'input-required', note: 'which env?' })).structuredContent.state).toBe(
      'InputRequired',
    );
    expect((await call(a, 'update_task', { taskId, to: 'working', note: 'staging' })).structuredContent.state).toBe('Working');
    const done = await call(b, 'update_task', {
      taskId,
      to: 'completed',
      artifacts: [{ parts: [{ kind: 'data', data: { ok: true } }] }],
    });
    expect(done.structuredContent).toMatchObject({ state: 'Completed' });
    const task = await call(c, 'get_task', { taskId });
    expect(task.structuredContent).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ parts: [{ kind: 'data', data: { ok: true } }] }],
    });
    // Completed by @b: it waits on @a until @a reads it; @c's read above changed nothing for @a.
    expect(await waiting('@a')).toBe(1);
    expect((await call(a, 'get_task', { taskId })).structuredContent).toMatchObject({ mailbox: { state: 'Completed' } });
    expect(await waiting('@a')).toBe(0);
  } finally {
    await Promise.all([a, b, c].map((client) => client.close()));
  }
});

it('GET /v1/tasks/{id} by the sender of a task that failed without it marks the outcome seen, once; its count falls', async () => {
  const [a0, b0, c0] = [await waiting('@a'), await waiting('@b'), await waiting('@c')];
  const taskId = await send(t['@a'], { to: '@b', subject: 'over http', body: 'x', task: {} });
  const move = (body: object) => server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body });
  expect((await move({ to: 'Working' })).status).toBe(200);
  expect((await move({ to: 'Failed', reason: 'no access' })).status).toBe(200);
  expect([await waiting('@a'), await waiting('@b'), await waiting('@c')]).toEqual([a0 + 1, b0, c0]);
  const listed = await server.call('GET', '/v1/tasks?view=sent&state=Failed', { token: t['@a'] });
  expect(listed.body.tasks).toMatchObject([{ taskId, outcomeUnseen: true }]);

  for (let read = 0; read < 2; read++) {
    const got = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@a'] });
    expect(got).toMatchObject({ status: 200, body: { status: { state: 'TASK_STATE_FAILED' } } });
  }
  expect(await outcomesSeen(taskId)).toMatchObject([{ metadata: { actor: '@a' }, streamName: `mailbox-task-${taskId}` }]);
  expect([await waiting('@a'), await waiting('@b'), await waiting('@c')]).toEqual([a0, b0, c0]);
});

it('a task whose expiresAt or budget.deadline is not after the send is refused over HTTP and MCP, naming it; nothing written', async () => {
  const client = new Client({ name: 'tasks-e2e-deadline', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@a']}` } },
    }),
  );
  const teaches =
    /^task\.(expiresAt|budget\.deadline) '[^']+' is not after the send \((\S+)\): the task would be over before it arrived .* Give an ISO 8601 date and time after the send, with seconds and an offset \(e\.g\. \S+Z\), or leave it out\.$/;
  try {
    for (const [task, field, value] of [
      [{ expiresAt: '2020-01-01T00:00:00Z' }, 'task.expiresAt', '2020-01-01T00:00:00Z'],
      [
        { state: 'working', budget: { deadline: '2026-01-01T00:00:00+02:00' } },
        'task.budget.deadline',
        '2026-01-01T00:00:00+02:00',
      ],
    ] as const) {
      const before = await server.eventCount();
      const overHttp = await server.call('POST', '/v1/messages', {
        token: t['@a'],
        body: { to: '@b', subject: 'late', body: 'x', task },
      });
      expect(overHttp).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field, value } });
      expect(overHttp.body.message).toMatch(teaches);
      expect(Date.parse(overHttp.body.sentAt)).toBeGreaterThan(Date.parse(value));
      const overMcp = (await client.callTool({
        name: 'add_message',
        arguments: { to: 'AGENT:*', subject: 'late', body: 'x', task: JSON.stringify(task) },
      })) as { isError?: boolean; structuredContent?: any };
      expect(overMcp).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_FAILED', field, value } });
      expect(overMcp.structuredContent.message).toMatch(teaches);
      expect(await server.eventCount()).toBe(before);
    }
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const accepted = await server.call('POST', '/v1/messages', {
      token: t['@a'],
      body: { to: '@b', subject: 'in time', body: 'x', task: { expiresAt: later } },
    });
    expect(accepted.status).toBe(201);
  } finally {
    await client.close();
  }
});

it('a task deadline finer than a millisecond is kept rounded up (never earlier than asked); one that rounds past the latest time is refused', async () => {
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@b', subject: 'python', body: 'x', task: { expiresAt: later.replace(/\.\d{3}Z$/, '.000001+00:00') } },
  });
  expect(sent.status).toBe(201);
  const kept = new Date(Date.parse(later.replace(/\.\d{3}Z$/, 'Z')) + 1).toISOString();
  const got = await server.call('GET', `/v1/tasks/${sent.body.messageId}`, { token: t['@b'] });
  expect(got.body.mailbox).toMatchObject({ deadline: kept });

  const before = await server.eventCount();
  const refused = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@b', subject: 'far', body: 'x', task: { budget: { deadline: '9999-12-31T23:59:59.9999Z' } } },
  });
  expect(refused).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  expect(refused.body.message).toContain(
    "must be at most 9999-12-31T23:59:59.999Z: times are kept to the millisecond, rounded up, and '9999-12-31T23:59:59.9999Z' rounds up past it",
  );
  expect(await server.eventCount()).toBe(before);
});

// A claim of a finished direct task answered 200 {events: []}, as if the claim meant something; a finished broadcast
// task was refused. Both are refused now with 409 INVALID_TRANSITION, and nothing is written.
it('claiming a finished direct task is 409 INVALID_TRANSITION, as for a broadcast task, and writes nothing', async () => {
  const direct = await send(t['@a'], { to: '@b', subject: 'done soon', body: 'x', task: {} });
  const broadcast = await send(t['@a'], { to: 'AGENT:*', subject: 'done soon too', body: 'x', task: {} });
  expect((await server.call('POST', `/v1/tasks/${broadcast}/claim`, { token: t['@b'] })).status).toBe(200);
  for (const taskId of [direct, broadcast]) {
    for (const to of ['Working', 'Completed'])
      expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to } })).status).toBe(200);
  }
  const before = await server.eventCount();
  for (const taskId of [direct, broadcast]) {
    const claim = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'] });
    expect(claim).toMatchObject({
      status: 409,
      body: { code: 'INVALID_TRANSITION', taskId, currentState: 'Completed', requested: 'claim', allowed: [] },
    });
    expect(claim.body.message).toContain(`Task ${taskId} is Completed, which is final: its holder @b moved it to Completed at`);
    expect(claim.body.message).toContain('@b (assignee) cannot claim it');
  }
  expect(await server.eventCount()).toBe(before);
});

it("a task released and claimed again shows its claim as its status, not the release's 'claimable again'", async () => {
  // Found by helper ht: claims were no history line, so after "released by @b: back to Submitted, claimable again" and
  // a claim by @c, GET /v1/tasks/{id} still said "claimable again" as the status beside assignee @c.
  const taskId = await send(t['@a'], { to: ['@b', '@c'], subject: 'relay', body: 'x', task: { state: 'submitted' } });
  const claim = (who: string) => server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t[who] });
  expect((await claim('@b')).status).toBe(200);
  const released = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'Submitted' } });
  expect(released.status).toBe(200);
  const claimable = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@a'] });
  expect(claimable.body.status.message.parts).toEqual([
    { kind: 'text', text: 'released by @b: back to Submitted, claimable again' },
  ]);
  expect((await claim('@c')).status).toBe(200);
  const { body } = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@a'] });
  expect(body).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' }, mailbox: { assignee: '@c' } });
  expect(body.status.message).toMatchObject({ parts: [{ kind: 'text', text: 'claimed by @c' }], metadata: { from: '@c' } });
  expect(body.history.map((line: { parts: Array<{ text: string }> }) => line.parts[0].text)).toEqual([
    'x',
    'claimed by @b',
    'released by @b: back to Submitted, claimable again',
    'claimed by @c',
  ]);
});
