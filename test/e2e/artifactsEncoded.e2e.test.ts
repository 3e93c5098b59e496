/**
 * An MCP client that serialises nested arguments sends update_task's artifacts as the list JSON-encoded in one
 * string; it was refused ("'artifacts' must be a list (a JSON array), not text"), while a task, message ids and tags
 * already took that form. Artifacts now take it too, by the same rule (commands/encodedJson.ts): the task completes
 * with the artifacts as if sent as a list, over MCP and HTTP. Text that is not the JSON of a list is refused with the
 * form, and nothing is written. @s sends, @b and @c hold the tasks.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('artifacts-encoded', ['@s', '@b', '@c']);
const ARTIFACTS = [
  {
    name: 'report',
    parts: [
      { kind: 'text', text: 'all green' },
      { kind: 'data', data: { failed: 0 } },
    ],
  },
];
const SHOWN = [
  {
    name: 'report',
    parts: [
      { kind: 'text', text: 'all green' },
      { kind: 'data', data: { failed: 0 } },
    ],
  },
];

/** A task from @s to `holder`, accepted (Working) by it. */
async function workingTask(holder: string): Promise<string> {
  const taskId = await mcp.sendAs('@s', { to: holder, subject: 'check', body: 'run the checks', task: {} });
  const working = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: mcp.t[holder],
    body: { to: 'Working' },
  });
  expect(working.status).toBe(200);
  return taskId;
}

test('over MCP, artifacts JSON-encoded complete the task; the sender sees them as a list', async () => {
  const taskId = await workingTask('@b');
  const b = await mcp.clients.http(mcp.t['@b']);
  const done = (await b.callTool({
    name: 'update_task',
    arguments: { taskId, to: 'completed', artifacts: JSON.stringify(ARTIFACTS) },
  })) as ToolResult;
  expect(done.isError ?? false).toBe(false);
  expect(done.structuredContent).toMatchObject({ state: 'Completed' });
  const s = await mcp.clients.http(mcp.t['@s']);
  const task = (await s.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult;
  expect(task.structuredContent).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, artifacts: SHOWN });
});

test('over HTTP, the same text in a JSON body completes the task', async () => {
  const taskId = await workingTask('@c');
  const done = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: mcp.t['@c'],
    body: { to: 'Completed', artifacts: JSON.stringify(ARTIFACTS) },
  });
  expect(done.status).toBe(200);
  const task = await mcp.server.call('GET', `/v1/tasks/${taskId}`, { token: mcp.t['@s'] });
  expect(task.body).toMatchObject({ artifacts: SHOWN });
});

const FORM =
  'must be a list of artifacts (an artifact is {"name"?: "...", "parts": [{"kind": "text", "text": "..."}, ...]}), ' +
  'e.g. "artifacts": [{"parts": [{"kind": "text", "text": "LGTM"}]}], or that array JSON-encoded as one string; ';

test.each<[string, string, string]>([
  ['prose', 'LGTM', 'the plain string "LGTM" is not one.'],
  [
    'one artifact JSON-encoded',
    JSON.stringify(ARTIFACTS[0]),
    `the string decodes to an object {"name":"report","parts":[{"kind":"text","text":"all gree....`,
  ],
  [
    'a broken encoding',
    '[{"parts": [',
    'the string "[{\\"parts\\": [" looks like JSON but does not parse: Unexpected end of JSON input at position 12, ' +
      'where the text ends (a closing bracket or brace missing?).',
  ],
  ['a JSON number', '3', 'the string decodes to the number 3.'],
])('artifacts as %s are refused with the form over MCP and HTTP; nothing is written', async (_, artifacts, said) => {
  const taskId = await workingTask('@b');
  const b = await mcp.clients.stdio(mcp.t['@b']);
  const before = await mcp.server.eventCount();
  const overMcp = (await b.callTool({ name: 'update_task', arguments: { taskId, to: 'Completed', artifacts } })) as ToolResult;
  const overHttp = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: mcp.t['@b'],
    body: { to: 'Completed', artifacts },
  });
  expect(overHttp.status).toBe(400);
  for (const body of [overMcp.structuredContent, overHttp.body]) {
    expect(body).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'artifacts',
      message: `update_task: 'artifacts' ${FORM}${said}`,
    });
  }
  expect(await mcp.server.eventCount()).toBe(before);
  // The positive signal: the task is still Working, and the list as the form shows it completes it.
  const task = await mcp.server.call('GET', `/v1/tasks/${taskId}`, { token: mcp.t['@s'] });
  expect(task.body).toMatchObject({ status: { state: 'TASK_STATE_WORKING' }, artifacts: [] });
  const done = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: mcp.t['@b'],
    body: { to: 'Completed', artifacts: [{ parts: [{ kind: 'text', text: 'LGTM' }] }] },
  });
  expect(done.status).toBe(200);
});
