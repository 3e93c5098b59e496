/**
 * An agent registered after an AGENT:* task was sent is not in its audience: GET /v1/tasks/{id} tells it the task does
 * not exist (404) and a claim is 403 NOT_IN_AUDIENCE (docs/tasks.md). Its update was answered 409 INVALID_TRANSITION
 * "Task <id> is Completed; @late (outsider) cannot move it ...": the task's state, told to an agent that the read
 * says has no such task, and no word of why it may not act. It is 403 NOT_IN_AUDIENCE now, as its claim, without the
 * state. Three identities in the audience: @s sends, @b holds, @c looks on (its update still lists what it may do).
 */
import { callTool, mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('late-update', ['@s', '@b', '@c']);
const post = (who: string, path: string, body: object, status?: number) => mcp.post(who, path, body, status);

test('an update by an agent registered after the broadcast is 403 NOT_IN_AUDIENCE over HTTP and MCP, nothing written', async () => {
  const { messageId: taskId } = await post('@s', '/v1/messages', { to: 'AGENT:*', subject: 'all', body: 'x', task: {} }, 201);
  await post('@b', `/v1/tasks/${taskId}/claim`, {});
  await post('@b', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
  Object.assign(mcp.t, await mcp.server.register(['@late']));

  const before = await mcp.server.eventCount();
  const read = await mcp.server.call('GET', `/v1/tasks/${taskId}`, { token: mcp.t['@late'] });
  expect([read.status, read.body.code]).toEqual([404, 'TASK_NOT_FOUND']);
  for (const body of [{ to: 'Canceled' }, { to: 'Completed' }, { to: 'Working' }]) {
    const update = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, { token: mcp.t['@late'], body });
    expect(update.status).toBe(403);
    expect(update.body).toEqual({
      error: 'Not in the audience',
      code: 'NOT_IN_AUDIENCE',
      message: expect.stringContaining('was not in the audience'),
      taskId,
    });
    expect(update.body.message).not.toContain('Working');
  }
  const claim = await mcp.server.call('POST', `/v1/tasks/${taskId}/claim`, { token: mcp.t['@late'], body: {} });
  expect([claim.status, claim.body.code]).toEqual([403, 'NOT_IN_AUDIENCE']);

  const update = await callTool(await mcp.clients.http(mcp.t['@late']), 'update_task', { taskId, to: 'completed' });
  expect(update).toMatchObject({ isError: true, body: { code: 'NOT_IN_AUDIENCE', taskId } });
  expect(update.body).not.toHaveProperty('currentState');
  expect(await mcp.server.eventCount()).toBe(before);

  // An audience member who does not hold it is still told the state and what it may do (nothing, here).
  const member = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: mcp.t['@c'],
    body: { to: 'Completed' },
  });
  expect(member).toMatchObject({ status: 409, body: { code: 'INVALID_TRANSITION', currentState: 'Working', allowed: [] } });
  expect(await mcp.server.eventCount()).toBe(before);
});
