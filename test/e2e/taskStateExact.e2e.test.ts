/**
 * A task state is written exactly, in one of the spellings DESIGN names (PascalCase, A2A v0.3's 'input-required', A2A
 * v1.0's 'TASK_STATE_INPUT_REQUIRED'), as every other value of a set is (a priority 'High' is refused naming 'high').
 * Before: a state was compared in any case and without separators, so update_task to 'COMPLETED' or 'input_required'
 * moved the task while a send with priority 'High' was refused. Now each is refused, over MCP as over HTTP, with the
 * states and the one meant, and nothing is written; the three spellings still move the task, stored PascalCase.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool as tool, mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-state-exact-e2e');
const mcpClient = (identity: string): Promise<Client> => mcp.clients.http(mcp.t[identity]);

const sendTask = (from: string, to: string) => mcp.sendAs(from, { to, subject: 'a task', body: 'x', task: {} });

const move = (identity: string, taskId: string, to: string) =>
  mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, { token: mcp.t[identity], body: { to } });

const STATES = 'Submitted, Working, InputRequired, Completed, Canceled, Failed, Rejected, AuthRequired, Unknown';

test.each([
  ['@b', 'WORKING', 'Working'],
  ['@b', 'Working ', 'Working'],
  ['@c', 'input_required', 'InputRequired'],
  ['@c', 'Input Required', 'InputRequired'],
  ['@b', 'COMPLETED', 'Completed'],
  ['@a', 'Cancelled', 'Canceled'],
])(
  'update_task by %s to %j: refused over HTTP and MCP naming %s, written exactly so; nothing written',
  async (who, to, meant) => {
    const sender = who === '@a' ? '@b' : '@a';
    const holder = who === '@a' ? '@b' : who;
    const taskId = await sendTask(sender, holder);
    const before = await mcp.server.eventCount();
    const overHttp = await move(who, taskId, to);
    expect(overHttp.status).toBe(400);
    expect(overHttp.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'to' });
    expect(overHttp.body.message).toContain(`must be a task state: one of ${STATES}`);
    expect(overHttp.body.message).toContain(`not ${JSON.stringify(to)}: did you mean ${meant}? (written exactly so)`);
    const overMcp = await tool(await mcpClient(who), 'update_task', { taskId, to });
    expect(overMcp.isError).toBe(true);
    expect(overMcp.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'to' });
    expect(overMcp.body.message).toContain(`did you mean ${meant}? (written exactly so)`);
    expect(await mcp.server.eventCount()).toBe(before);
    const task = await mcp.server.call('GET', `/v1/tasks/${taskId}`, { token: mcp.t[sender] });
    expect(task.body.mailbox.state).toBe('Submitted');
  },
);

test('a send whose task state is in another case, and a list_tasks filter so written, are refused alike; nothing written', async () => {
  const before = await mcp.server.eventCount();
  const sent = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: 'a task', body: 'x', task: { state: 'SUBMITTED' } },
  });
  expect(sent.status).toBe(400);
  expect(sent.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task.state' });
  expect(sent.body.message).toContain('not "SUBMITTED": did you mean Submitted? (written exactly so)');
  // As a priority in another case is (unchanged): the same words for both.
  const high = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@b', subject: 'a note', body: 'x', priority: 'High' },
  });
  expect(high.status).toBe(400);
  expect(high.body.message).toContain('did you mean "high"? (written exactly so)');
  const listed = await mcp.server.call('GET', '/v1/tasks?view=sent&state=WORKING', { token: mcp.t['@a'] });
  expect(listed.status).toBe(400);
  expect(listed.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'state' });
  expect(listed.body.message).toContain('did you mean "state": ["Working"]?');
  expect(await mcp.server.eventCount()).toBe(before);
});

test('the three spellings DESIGN names move a task, stored PascalCase, for three agents', async () => {
  const forB = await sendTask('@a', '@b');
  const forC = await sendTask('@a', '@c');
  const forA = await sendTask('@c', '@a');
  expect((await move('@b', forB, 'working')).status).toBe(200);
  expect((await move('@c', forC, 'TASK_STATE_WORKING')).status).toBe(200);
  expect((await move('@a', forA, 'Working')).status).toBe(200);
  const asked = await mcp.server.call('POST', `/v1/tasks/${forB}/transition`, {
    token: mcp.t['@b'],
    body: { to: 'TASK_STATE_INPUT_REQUIRED', note: 'which branch?' },
  });
  expect(asked.status).toBe(200);
  expect((await move('@a', forC, 'TASK_STATE_CANCELED')).status).toBe(200);
  const states = await Promise.all(
    [
      [forB, '@a'],
      [forC, '@a'],
      [forA, '@c'],
    ].map(
      async ([taskId, sender]) =>
        (await mcp.server.call('GET', `/v1/tasks/${taskId}`, { token: mcp.t[sender] })).body.mailbox.state,
    ),
  );
  expect(states).toEqual(['InputRequired', 'Canceled', 'Working']);
});
