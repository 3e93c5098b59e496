/**
 * A finished broadcast or list task cannot be claimed, whoever held it: 409 INVALID_TRANSITION with its state and no
 * allowed move (docs/tasks.md: "a finished one ... cannot be claimed: 409 INVALID_TRANSITION, as for a broadcast
 * task"). An audience member claiming a task that another agent held when it ended (completed, failed, canceled by
 * its sender) was answered 409 TASK_ALREADY_CLAIMED, "It stays theirs until they release or finish it": a wait for a
 * release that can never come, about a task that was over. Three identities: @s sends, @b holds, @c and @d claim late.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c', '@d']);
});
afterAll(() => server.close());

const post = async (who: string, path: string, body: object, status = 200) => {
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
};

/** A task sent to `to`, claimed by @b and ended by `end` (who, move). */
const endedTask = async (to: string | string[], end: [string, object]) => {
  const { messageId: taskId } = await post('@s', '/v1/messages', { to, subject: 'one of you', body: 'x', task: {} }, 201);
  await post('@b', `/v1/tasks/${taskId}/claim`, {});
  await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
  await post(end[0], `/v1/tasks/${taskId}/transition`, end[1]);
  return taskId as string;
};

test.each<[string, string | string[], [string, object], string]>([
  ['an AGENT:* task completed by its holder', 'AGENT:*', ['@b', { to: 'Completed' }], 'Completed'],
  ['an AGENT:* task failed by its holder', 'AGENT:*', ['@b', { to: 'Failed', reason: 'the build is broken' }], 'Failed'],
  ['an AGENT:* task canceled by its sender', 'AGENT:*', ['@s', { to: 'Canceled' }], 'Canceled'],
  ['a list task completed by its holder', ['@b', '@c', '@d'], ['@b', { to: 'Completed' }], 'Completed'],
])('%s: a claim by another audience member is INVALID_TRANSITION, nothing written', async (_what, to, end, ended) => {
  const taskId = await endedTask(to, end);
  const before = await server.eventCount();
  for (const who of ['@c', '@d']) {
    const claim = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t[who], body: {} });
    expect(claim.status).toBe(409);
    expect(claim.body).toMatchObject({
      error: 'Invalid transition',
      code: 'INVALID_TRANSITION',
      taskId,
      currentState: ended,
      requested: 'claim',
      allowed: [],
    });
    expect(claim.body.message).toContain(`is ${ended}`);
    expect(claim.body.message).not.toMatch(/release|claimed by/);
  }
  // The holder's own claim was refused so already: every audience member hears the same.
  const own = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'], body: {} });
  expect([own.status, own.body.code, own.body.currentState]).toEqual([409, 'INVALID_TRANSITION', ended]);
  expect(await server.eventCount()).toBe(before);
});

test('over MCP, claim_task on a finished broadcast task another agent held is the same tool error', async () => {
  const taskId = await endedTask('AGENT:*', ['@b', { to: 'Completed' }]);
  const client = new Client({ name: 'finished-claim', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@c']}` } },
    }),
  );
  try {
    const before = await server.eventCount();
    const claim = (await client.callTool({ name: 'claim_task', arguments: { taskId, leaseSeconds: 60 } })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    expect(claim).toMatchObject({
      isError: true,
      structuredContent: { code: 'INVALID_TRANSITION', currentState: 'Completed', requested: 'claim', allowed: [] },
    });
    expect(await server.eventCount()).toBe(before);
  } finally {
    await client.close();
  }
});

test('a task still held (not finished) is refused as before: TASK_ALREADY_CLAIMED naming its holder', async () => {
  const { messageId: taskId } = await post('@s', '/v1/messages', { to: 'AGENT:*', subject: 'held', body: 'x', task: {} }, 201);
  await post('@b', `/v1/tasks/${taskId}/claim`, {});
  const before = await server.eventCount();
  const claim = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@c'], body: {} });
  expect(claim).toMatchObject({ status: 409, body: { code: 'TASK_ALREADY_CLAIMED', claimant: '@b' } });
  expect(await server.eventCount()).toBe(before);
});
