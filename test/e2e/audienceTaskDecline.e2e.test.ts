/**
 * The claimant of an AGENT:* or list task declined it (Rejected), and the task ended for its whole audience: one member
 * spoke for all, though another might have taken it. That move is now refused with 409 INVALID_TRANSITION, its message
 * naming the release (and, once Working, the fail), `allowed` the moves it may make; nothing is written, and another
 * audience member still claims the task. A direct task's recipient declines as before. Over HTTP and MCP; @s sends,
 * @k claims, @m is another audience member.
 */
import { callTool, mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('audience-task-decline-e2e', ['@s', '@k', '@m']);
const call = (who: string, method: 'GET' | 'POST', path: string, body?: object) =>
  mcp.server.call(method, path, { token: mcp.t[who], ...(body === undefined ? {} : { body }) });

const RELEASE = 'To give it up, release it to the audience (a move to Submitted), so another member may claim it';

test.each([
  ['AGENT:*', 'http'],
  [['@k', '@m'], 'http'],
  ['AGENT:*', 'mcp'],
  [['@k', '@m'], 'mcp'],
] as const)('to %j over %s: the claimant cannot decline for all; another member still claims it', async (to, via) => {
  const taskId = await mcp.sendAs('@s', { to, subject: `decline ${via}`, body: 'b', task: {} });
  expect((await call('@k', 'POST', `/v1/tasks/${taskId}/claim`)).status).toBe(200);
  const decline = async () => {
    if (via === 'http') {
      const answer = await call('@k', 'POST', `/v1/tasks/${taskId}/transition`, { to: 'Rejected', reason: 'not mine' });
      expect(answer.status).toBe(409);
      return answer.body;
    }
    const k = await mcp.clients.http(mcp.t['@k']);
    const answer = await callTool(k, 'update_task', { taskId, to: 'Rejected', reason: 'not mine' });
    expect(answer.isError).toBe(true);
    return answer.body;
  };

  const before = await mcp.server.eventCount();
  const submitted = await decline();
  expect(submitted).toMatchObject({ code: 'INVALID_TRANSITION', currentState: 'Submitted', requested: 'Rejected' });
  expect([...submitted.allowed].sort()).toEqual(['Submitted', 'Working']);
  expect(submitted.message).toContain(`${RELEASE}; to tell its sender @s why`);
  expect(await mcp.server.eventCount()).toBe(before);

  expect((await call('@k', 'POST', `/v1/tasks/${taskId}/transition`, { to: 'Working' })).status).toBe(200);
  const atWork = await mcp.server.eventCount();
  const working = await decline();
  expect(working).toMatchObject({ code: 'INVALID_TRANSITION', currentState: 'Working', requested: 'Rejected' });
  expect([...working.allowed].sort()).toEqual(['AuthRequired', 'Completed', 'Failed', 'InputRequired', 'Submitted']);
  expect(working.message).toContain(`${RELEASE}; or, if the work cannot be done by anyone, fail it (Failed, with a reason)`);
  expect(await mcp.server.eventCount()).toBe(atWork);
  expect((await call('@s', 'GET', `/v1/tasks/${taskId}`)).body).toMatchObject({ status: { state: 'TASK_STATE_WORKING' } });

  // Released as the refusal says, the task is the other member's to claim.
  expect((await call('@k', 'POST', `/v1/tasks/${taskId}/transition`, { to: 'Submitted' })).status).toBe(200);
  expect(await call('@m', 'POST', `/v1/tasks/${taskId}/claim`)).toMatchObject({ status: 200, body: { assignee: '@m' } });
});

test.each(['http', 'mcp'])("over %s a direct task's recipient still declines it", async (via) => {
  const taskId = await mcp.sendAs('@s', { to: '@k', subject: `direct ${via}`, body: 'b', task: {} });
  const declined =
    via === 'http'
      ? (await call('@k', 'POST', `/v1/tasks/${taskId}/transition`, { to: 'Rejected', reason: 'not mine' })).body
      : (await callTool(await mcp.clients.http(mcp.t['@k']), 'update_task', { taskId, to: 'Rejected', reason: 'not mine' })).body;
  expect(declined).toMatchObject({ state: 'Rejected' });
});

test("update_task's `to`, as a model reads it in tools/list, says only a direct task's recipient declines", async () => {
  const { tools } = await (await mcp.clients.http(mcp.t['@k'])).listTools();
  const to = (tools.find((tool) => tool.name === 'update_task')!.inputSchema.properties as Record<string, any>).to;
  // It said "Rejected (decline; reason)": a claimant of an AGENT:* or list task read it as its move, and got the 409 above.
  expect(to.description).toContain("Rejected (only a direct task's recipient declines; reason)");
  expect(to.description).toContain('Submitted (give back a task you claimed)');
});
