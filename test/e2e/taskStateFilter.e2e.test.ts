/**
 * list_tasks' `state` filter refused a word that is no state (`{"state": "open"}`, found as a model) as
 * `'state.0' must be a task state ... did you mean Submitted?`: a field the caller never wrote, and one state where
 * "open" means every state not finished; a number was told only "must be a list". Over MCP and HTTP alike, the refusal
 * now names `state`, says the forms it takes and the states, and suggests the filter meant, which then answers.
 * A listing writes nothing; nor does its refusal.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-state-filter', ['@a', '@b', '@c']);
const STATES = 'Submitted, Working, InputRequired, Completed, Canceled, Failed, Rejected, AuthRequired, Unknown';
const NOT_FINISHED = ['Submitted', 'Working', 'InputRequired', 'AuthRequired', 'Unknown'];

test('MCP list_tasks {state: "open"} names state, lists the states and suggests the unfinished ones, which answer', async () => {
  const taskId = await mcp.sendAs('@a', { to: '@b', subject: 'port it', body: 'x', task: {} });
  const bob = await mcp.clients.http(mcp.t['@b']);
  const before = await mcp.server.eventCount();
  for (const state of ['open', ['open'], 'Working,open']) {
    const refused = (await bob.callTool({ name: 'list_tasks', arguments: { state } })) as ToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'state' });
    const { message } = refused.structuredContent as { message: string };
    expect(message).toContain("'state' takes one task state or a list of them");
    expect(message).toContain(STATES);
    expect(message).toContain(
      `"open" is none of them: for the tasks not finished, pass "state": ${JSON.stringify(NOT_FINISHED)}`,
    );
    expect(message).not.toMatch(/state\.0|did you mean Submitted/);
  }
  const done = (await bob.callTool({ name: 'list_tasks', arguments: { state: 'Working,done' } })) as ToolResult;
  expect(done.structuredContent.message).toContain('"done" is none of them: did you mean "state": ["Working","Completed"]?');
  const seven = (await bob.callTool({ name: 'list_tasks', arguments: { state: 7 } })) as ToolResult;
  expect(seven.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'state' });
  expect(seven.structuredContent.message).toMatch(/'state' takes one task state or a list of them .*, not the number 7$/);
  expect(await mcp.server.eventCount()).toBe(before);

  // The suggested filter answers: the task, sent Submitted, is among the unfinished.
  const listed = (await bob.callTool({ name: 'list_tasks', arguments: { state: NOT_FINISHED } })) as ToolResult;
  expect(listed.isError).toBeFalsy();
  expect(listed.structuredContent.tasks).toMatchObject([{ taskId, state: 'Submitted' }]);
});

test('HTTP GET /v1/tasks?state=open is refused alike, naming state; ?state=all says to omit it', async () => {
  const before = await mcp.server.eventCount();
  const open = await mcp.server.call('GET', '/v1/tasks?state=open', { token: mcp.t['@c'] });
  expect([open.status, open.body.code, open.body.field]).toEqual([400, 'VALIDATION_FAILED', 'state']);
  expect(open.body.message).toContain(`pass "state": ${JSON.stringify(NOT_FINISHED)}`);
  expect(open.body.issues).toEqual([{ field: 'state', message: expect.stringContaining(STATES) }]);
  const all = await mcp.server.call('GET', '/v1/tasks?view=sent&state=all', { token: mcp.t['@c'] });
  expect([all.status, all.body.field]).toEqual([400, 'state']);
  expect(all.body.message).toContain('"all" is none of them: omit \'state\' to list tasks in every state');
  const closed = await mcp.server.call('GET', '/v1/tasks?view=sent&state=closed', { token: mcp.t['@c'] });
  expect(closed.body.message).toContain('for the finished tasks, pass "state": ["Completed","Canceled","Failed","Rejected"]');
  expect(await mcp.server.eventCount()).toBe(before);
  // Every state in any spelling is still taken.
  const fine = await mcp.server.call('GET', '/v1/tasks?view=sent&state=input-required,TASK_STATE_WORKING', {
    token: mcp.t['@c'],
  });
  expect([fine.status, fine.body.tasks]).toEqual([200, []]);
});

// An empty list names no state: it would match no task. Refused as "must hold at least 1 item (it has 0)", which said
// neither what state takes nor that leaving it out lists every state; and the library's type took `state: []`.
test('state [] (MCP, HTTP, the library) is refused: it names no state; omit it for every state', async () => {
  const bob = await mcp.clients.http(mcp.t['@b']);
  const client = await mcp.server.mailbox.as(mcp.t['@b']);
  const before = await mcp.server.eventCount();
  const teaches = "names none, so it would match no task: omit 'state' to list tasks in every state";
  const overMcp = (await bob.callTool({ name: 'list_tasks', arguments: { state: [] } })) as ToolResult;
  expect(overMcp.isError).toBe(true);
  expect(overMcp.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'state' });
  expect(overMcp.structuredContent.message).toContain(STATES);
  expect(overMcp.structuredContent.message).toMatch(new RegExp(`; \\[\\] ${teaches.replace(/[()]/g, '\\$&')}$`));
  const overHttp = await mcp.server.call('GET', '/v1/tasks?state=[]', { token: mcp.t['@b'] });
  expect([overHttp.status, overHttp.body.code, overHttp.body.field]).toEqual([400, 'VALIDATION_FAILED', 'state']);
  expect(overHttp.body.message).toContain(`"[]" ${teaches}`);
  const library = await client.listTasks({ state: [] as never }).catch((error: { envelope: any }) => error.envelope);
  expect(library).toMatchObject({ code: 'VALIDATION_FAILED', field: 'state' });
  expect(library.message).toContain(`[] ${teaches}`);
  expect(await mcp.server.eventCount()).toBe(before);
});
