/**
 * An agent registered after an AGENT:* task was sent is not in its audience: GET /v1/tasks/{id} tells it the task does
 * not exist (404) and a claim is 403 NOT_IN_AUDIENCE (docs/tasks.md). Its update was answered 409 INVALID_TRANSITION
 * "Task <id> is Completed; @late (outsider) cannot move it ...": the task's state, told to an agent that the read
 * says has no such task, and no word of why it may not act. It is 403 NOT_IN_AUDIENCE now, as its claim, without the
 * state. Three identities in the audience: @s sends, @b holds, @c looks on (its update still lists what it may do).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c']);
});
afterAll(() => server.close());

const post = async (who: string, path: string, body: object, status = 200) => {
  const answer = await server.call('POST', path, { token: t[who], body });
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
};

test('an update by an agent registered after the broadcast is 403 NOT_IN_AUDIENCE over HTTP and MCP, nothing written', async () => {
  const { messageId: taskId } = await post('@s', '/v1/messages', { to: 'AGENT:*', subject: 'all', body: 'x', task: {} }, 201);
  await post('@b', `/v1/tasks/${taskId}/claim`, {});
  await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
  Object.assign(t, await server.register(['@late']));

  const before = await server.eventCount();
  const read = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@late'] });
  expect([read.status, read.body.code]).toEqual([404, 'TASK_NOT_FOUND']);
  for (const body of [{ to: 'Canceled' }, { to: 'Completed' }, { to: 'Working' }]) {
    const update = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@late'], body });
    expect(update.status).toBe(403);
    expect(update.body).toEqual({
      error: 'Not in the audience',
      code: 'NOT_IN_AUDIENCE',
      message: expect.stringContaining('was not in the audience'),
      taskId,
    });
    expect(update.body.message).not.toContain('Working');
  }
  const claim = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@late'], body: {} });
  expect([claim.status, claim.body.code]).toEqual([403, 'NOT_IN_AUDIENCE']);

  const client = new Client({ name: 'late-update', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@late']}` } },
    }),
  );
  try {
    const update = (await client.callTool({ name: 'update_task', arguments: { taskId, to: 'completed' } })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    expect(update).toMatchObject({ isError: true, structuredContent: { code: 'NOT_IN_AUDIENCE', taskId } });
    expect(update.structuredContent).not.toHaveProperty('currentState');
  } finally {
    await client.close();
  }
  expect(await server.eventCount()).toBe(before);

  // An audience member who does not hold it is still told the state and what it may do (nothing, here).
  const member = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@c'], body: { to: 'Completed' } });
  expect(member).toMatchObject({ status: 409, body: { code: 'INVALID_TRANSITION', currentState: 'Working', allowed: [] } });
  expect(await server.eventCount()).toBe(before);
});
