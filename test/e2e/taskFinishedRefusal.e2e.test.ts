/**
 * A claim or a move on a finished task says how it ended: its state, who moved it there, when (and the reason given),
 * and that no claim or move is possible. Before, completing a canceled task said only "Task <id> is Canceled; @b
 * (assignee) cannot move it to Completed. From Canceled you may make no transition.": nothing of who canceled it or
 * when, so an agent could not tell its sender's cancel from the deadline's. Parties only: an agent the task does not
 * concern is told nothing of it, as before. On an injected clock: @s sends, @b holds, @c and @d are the audience, @x
 * is no party; @late registers after the broadcasts.
 */
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

const T0 = Date.parse('2030-05-01T12:00:00.000Z');
let at = T0;
const iso = (ms: number) => new Date(ms).toISOString();

let server: TestServer;
let t: Record<string, string>;
const mcp = new McpSdkClients(() => server.url, 'finished-refusal');

beforeAll(async () => {
  server = await startTestServer({ taskSweepMs: 0 }, { clock: { now: () => new Date(at) } });
  t = await server.register(['@s', '@b', '@c', '@d', '@x']);
});
afterAll(async () => {
  await mcp.closeAll();
  await server.close();
});

const post = async (who: string, path: string, body: object, status = 200) => {
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
};

/** A task sent to `to` at the current time; @b claims it (a list or broadcast) and accepts it, a second later each. */
const workedTask = async (to: string | string[], task: object = {}): Promise<string> => {
  const { messageId } = await post('@s', '/v1/messages', { to, subject: 'a task', body: 'x', task }, 201);
  at += 1000;
  if (to !== '@b') await post('@b', `/v1/tasks/${messageId}/claim`, {});
  at += 1000;
  await post('@b', `/v1/tasks/${messageId}/transition`, { to: 'Working' });
  return messageId;
};

/** `who`'s refusal of `call` on the task, and that it wrote nothing. */
const refusal = async (who: string, path: string, body: object, status = 409) => {
  const before = await server.eventCount();
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body.code]).toEqual([status, expect.any(String)]);
  expect(await server.eventCount()).toBe(before);
  return answer.body;
};

test.each<[string, string | string[], string, object, string]>([
  ['completed by its holder', ['@b', '@c', '@d'], '@b', { to: 'Completed' }, 'its holder @b moved it to Completed at'],
  [
    'failed by its holder, with its reason',
    'AGENT:*',
    '@b',
    { to: 'Failed', reason: 'the build is broken' },
    'its holder @b moved it to Failed at',
  ],
  ['canceled by its sender', ['@b', '@c'], '@s', { to: 'Canceled' }, 'its sender @s moved it to Canceled at'],
  ['canceled by its sender (a direct task)', '@b', '@s', { to: 'Canceled' }, 'its sender @s moved it to Canceled at'],
])('a task %s: every party told how it ended, who and when; nothing written', async (_how, to, ender, move, how) => {
  const taskId = await workedTask(to);
  at += 1000;
  const endedAt = iso(at);
  await post(ender, `/v1/tasks/${taskId}/transition`, move);
  at += 60_000;
  const state = (move as { to: string }).to;
  const reason = (move as { reason?: string }).reason;
  const tries: Array<[string, string, object]> = [
    ['@s', 'transition', { to: 'Canceled' }],
    ['@b', 'transition', { to: 'Completed' }],
    ['@b', 'claim', {}],
  ];
  if (to !== '@b') tries.push(['@c', 'claim', {}], ['@c', 'transition', { to: 'Working' }]);
  for (const [who, call, body] of tries) {
    const refused = await refusal(who, `/v1/tasks/${taskId}/${call}`, body);
    expect(refused).toMatchObject({
      code: 'INVALID_TRANSITION',
      currentState: state,
      allowed: [],
      endedBy: ender,
      endedAt,
    });
    expect(refused.message).toContain(`Task ${taskId} is ${state}, which is final: ${how} ${endedAt}`);
    if (reason) expect(refused.message).toContain(`(reason: "${reason}")`);
    expect(refused.message).toContain(`No claim or move is possible from ${state}`);
    expect(refused.message).toContain('nothing was changed');
    expect(refused.message).toContain(who === '@s' ? 'send a new task' : 'get_task');
  }
});

// Found by an earlier session: before the sweep the refusal said the task ended at its deadline, after it at the
// sweep's time (and get_task's status and last line moved with it); docs/tasks.md says the deadline. Both say it now.
test('a task past its deadline: the mailbox ended it at its deadline, before the sweep and after; no identity is named', async () => {
  const deadline = iso(at + 30_000);
  const taskId = await workedTask(['@b', '@c'], { expiresAt: deadline });
  const bob = await mcp.http(t['@b']);
  const endedAtDeadline = async () => {
    for (const who of ['@b', '@s']) {
      const refused = await refusal(who, `/v1/tasks/${taskId}/transition`, { to: who === '@b' ? 'Completed' : 'Canceled' });
      expect(refused).toMatchObject({ currentState: 'Canceled', endedBy: null, endedAt: deadline });
      expect(refused.message).toContain(
        `is Canceled, which is final: the mailbox moved it to Canceled at ${deadline}: its deadline ${deadline} had passed.`,
      );
    }
    const read = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@s'] });
    const overMcp = await bob.callTool({ name: 'get_task', arguments: { taskId } });
    for (const task of [read.body, (overMcp as { structuredContent: any }).structuredContent]) {
      expect(task.status).toMatchObject({ state: 'TASK_STATE_CANCELLED', timestamp: deadline });
      expect(task.history.at(-1).metadata).toMatchObject({ at: deadline, event: 'TaskExpired' });
    }
  };
  at += 40_000;
  await endedAtDeadline(); // not swept yet: the reads show the expiry
  at += 5000;
  expect(await server.mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
  at += 1000;
  await endedAtDeadline(); // swept 45 s after the deadline: still the deadline
});

test("a task its sender's retirement canceled: the mailbox ended it, its sender retired", async () => {
  const { '@gone': gone } = await server.register(['@gone']);
  t['@gone'] = gone;
  const { messageId: taskId } = await post('@gone', '/v1/messages', { to: ['@b', '@c'], subject: 'a', body: 'x', task: {} }, 201);
  await post('@b', `/v1/tasks/${taskId}/claim`, {});
  at += 1000;
  const retiredAt = iso(at);
  expect(await server.call('DELETE', '/v1/agents/@gone', { token: server.adminToken })).toMatchObject({
    status: 200,
    body: { canceledTasks: [taskId] },
  });
  at += 1000;
  const refused = await refusal('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
  expect(refused).toMatchObject({ currentState: 'Canceled', endedBy: null, endedAt: retiredAt });
  expect(refused.message).toContain(`the mailbox moved it to Canceled at ${retiredAt}: its sender @gone was retired.`);
});

test('a task sent in a final state (a record of finished work): sent so by its sender, at its send', async () => {
  const sentAt = iso(at);
  const { messageId: taskId } = await post(
    '@s',
    '/v1/messages',
    { to: '@b', subject: 'done', body: 'x', task: { state: 'Completed' } },
    201,
  );
  at += 1000;
  const refused = await refusal('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
  expect(refused).toMatchObject({ currentState: 'Completed', endedBy: '@s', endedAt: sentAt });
  expect(refused.message).toContain(`it was sent Completed by @s at ${sentAt}, a record of finished work`);
});

test('an agent that is no party is told nothing of how it ended: 404 or NOT_IN_AUDIENCE as before, nothing written', async () => {
  const listTask = await workedTask(['@b', '@c']);
  await post('@b', `/v1/tasks/${listTask}/transition`, { to: 'Completed' });
  const broadcast = await workedTask('AGENT:*');
  await post('@b', `/v1/tasks/${broadcast}/transition`, { to: 'Completed' });
  const { '@late': late } = await server.register(['@late']);
  t['@late'] = late;
  for (const [who, taskId, code] of [
    ['@x', listTask, 'TASK_NOT_FOUND'],
    ['@late', broadcast, 'NOT_IN_AUDIENCE'],
  ]) {
    for (const [call, body] of [
      ['claim', {}],
      ['transition', { to: 'Canceled' }],
    ] as const) {
      const refused = await refusal(who, `/v1/tasks/${taskId}/${call}`, body, code === 'TASK_NOT_FOUND' ? 404 : 403);
      expect(refused.code).toBe(code);
      expect(JSON.stringify(refused)).not.toMatch(/Completed|@b|endedAt|endedBy/);
    }
  }
});

test('over MCP (update_task, claim_task): the same tool error, saying how it ended', async () => {
  const taskId = await workedTask(['@b', '@c', '@d']);
  const canceledAt = iso(at);
  await post('@s', `/v1/tasks/${taskId}/transition`, { to: 'Canceled' });
  for (const [who, tool, args] of [
    ['@b', 'update_task', { taskId, to: 'Completed' }],
    ['@d', 'claim_task', { taskId }],
  ] as const) {
    const client = await mcp.http(t[who]);
    const before = await server.eventCount();
    const answer = (await client.callTool({ name: tool, arguments: args })) as {
      isError?: boolean;
      structuredContent?: { message?: string };
    };
    expect(answer).toMatchObject({
      isError: true,
      structuredContent: { code: 'INVALID_TRANSITION', currentState: 'Canceled', endedBy: '@s', endedAt: canceledAt },
    });
    expect(answer.structuredContent?.message).toContain(`its sender @s moved it to Canceled at ${canceledAt}`);
    expect(await server.eventCount()).toBe(before);
  }
});
