/**
 * A task part with a field of another kind ({"kind": "text", "data": {...}}: a model mixing A2A's part forms) was
 * refused "add_message does not accept 'task.input.parts.0.data'; allowed fields in 'task.input.parts.0': kind, text,
 * data, file.": the field refused was listed as allowed, and the caller could not tell what a text part takes. The
 * allowed fields are now those of the part's kind (text: kind, text; data: kind, data; file: kind, file), in a task's
 * input over HTTP and in an artifact's parts over MCP alike; nothing is written.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('part-fields-by-kind', ['@s', '@b', '@c']);

test.each([
  [{ kind: 'text', text: 'x', data: { a: 1 } }, 'data', 'kind, text'],
  [{ kind: 'data', data: { a: 1 }, text: 'x' }, 'text', 'kind, data'],
  [{ kind: 'file', file: { uri: 'https://example.com/a' }, text: 'x' }, 'text', 'kind, file'],
])('a task input part %j: the allowed fields are those of its kind; nothing is written', async (part, field, allowed) => {
  const before = await mcp.server.eventCount();
  const refused = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@s'],
    body: { to: ['@b', '@c'], subject: 'review', body: 'please', task: { input: { parts: [part] } } },
  });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({
    code: 'UNKNOWN_FIELD',
    field: `task.input.parts.0.${field}`,
    allowed: allowed.split(', '),
  });
  expect(refused.body.message).toBe(
    `add_message does not accept 'task.input.parts.0.${field}'; allowed fields in 'task.input.parts.0': ${allowed}.`,
  );
  expect(await mcp.server.eventCount()).toBe(before);
  const inbox = await mcp.server.call('GET', '/v1/messages', { token: mcp.t['@b'] });
  expect(inbox.body.messages).toEqual([]);
});

test('an artifact part over MCP: the allowed fields are those of its kind; nothing is written', async () => {
  const taskId = await mcp.sendAs('@s', { to: '@b', subject: 'review', body: 'please', task: {} });
  const working = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: mcp.t['@b'],
    body: { to: 'Working' },
  });
  expect(working.body).toMatchObject({ state: 'Working' });
  const bob = await mcp.clients.http(mcp.t['@b']);
  const before = await mcp.server.eventCount();
  const refused = (await bob.callTool({
    name: 'update_task',
    arguments: { taskId, to: 'Completed', artifacts: [{ parts: [{ kind: 'text', text: 'LGTM', data: { ok: true } }] }] },
  })) as ToolResult;
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent).toMatchObject({
    code: 'UNKNOWN_FIELD',
    field: 'artifacts.0.parts.0.data',
    allowed: ['kind', 'text'],
  });
  expect(refused.structuredContent.message).toContain("allowed fields in 'artifacts.0.parts.0': kind, text");
  expect(await mcp.server.eventCount()).toBe(before);
  const task = (await bob.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult;
  expect(task.structuredContent).toMatchObject({ status: { state: 'TASK_STATE_WORKING' }, artifacts: [] });
});
