/**
 * A model completing a task with its artifacts in a wrong shape (`artifacts: "LGTM"`, `[{"text": "LGTM"}]`, a part
 * list given as text, an artifact with no parts) was told the type expected or the fields allowed, and had to guess
 * what an artifact looks like. Every such refusal now shows the form, with an example to copy, over MCP; nothing is
 * written, and the form as shown completes the task.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('artifact-shape', ['@s', '@b', '@c']);

const FORM = 'an artifact is {"name"?: "...", "parts": [{"kind": "text", "text": "..."}, ...]}';
const EXAMPLE = 'e.g. "artifacts": [{"parts": [{"kind": "text", "text": "LGTM"}]}]';

test.each([
  ['text', 'LGTM', 'VALIDATION_FAILED', `or that array JSON-encoded as one string; the plain string "LGTM" is not one.`],
  [
    'one object JSON-encoded',
    JSON.stringify({ parts: [{ kind: 'text', text: 'LGTM' }] }),
    'VALIDATION_FAILED',
    'the string decodes to an object {"parts"',
  ],
  ['one object', { parts: [{ kind: 'text', text: 'LGTM' }] }, 'VALIDATION_FAILED', "'artifacts' must be a list"],
  ['a list of text', ['LGTM'], 'VALIDATION_FAILED', "'artifacts.0' must be an object"],
  ['a part for an artifact', [{ text: 'LGTM' }], 'UNKNOWN_FIELD', "allowed fields in 'artifacts.0': name, parts; "],
  ['a description', [{ description: 'd', parts: [] }], 'UNKNOWN_FIELD', "allowed fields in 'artifacts.0': name, parts; "],
  ['parts as text', [{ parts: 'LGTM' }], 'VALIDATION_FAILED', "'artifacts.0.parts' must be a list"],
  ['no parts', [{ name: 'review' }], 'VALIDATION_FAILED', "'artifacts.0.parts' is required"],
  ['empty parts', [{ parts: [] }], 'VALIDATION_FAILED', "'artifacts.0.parts' must hold at least 1 item"],
])('artifacts given as %s: refused with the form and an example; nothing is written', async (_, artifacts, code, said) => {
  const sender = await mcp.clients.http(mcp.t['@s']);
  const sent = (await sender.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 'review', body: 'please', task: {} },
  })) as ToolResult;
  const taskId = sent.structuredContent.messageId as string;
  const bob = await mcp.clients.http(mcp.t['@b']);
  expect(await bob.callTool({ name: 'update_task', arguments: { taskId, to: 'Working' } })).toMatchObject({
    structuredContent: { state: 'Working' },
  });
  const before = await mcp.server.eventCount();
  const refused = (await bob.callTool({
    name: 'update_task',
    arguments: { taskId, to: 'Completed', artifacts },
  })) as ToolResult;
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent.code).toBe(code);
  expect(refused.structuredContent.message).toContain(said);
  expect(refused.structuredContent.message).toContain(FORM);
  expect(refused.structuredContent.message).toContain(`, ${EXAMPLE}`);
  expect(await mcp.server.eventCount()).toBe(before);
  const task = (await bob.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult;
  expect(task.structuredContent).toMatchObject({ status: { state: 'TASK_STATE_WORKING' }, artifacts: [] });

  const done = (await bob.callTool({
    name: 'update_task',
    arguments: { taskId, to: 'Completed', artifacts: [{ parts: [{ kind: 'text', text: 'LGTM' }] }] },
  })) as ToolResult;
  expect(done.isError ?? false).toBe(false);
  expect(done.structuredContent).toMatchObject({ state: 'Completed' });
});
