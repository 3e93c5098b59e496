/**
 * A task's holder that answers the task with a message (a model writing "done: PR 12" to the task's sender in the
 * task's thread, by threadId or inReplyTo, instead of moving the task) was answered a bare {status: "sent"}: the task
 * stayed Working, its sender read a message with "task": null beside a task that said nobody had finished, and the
 * holder believed it had. The send now says so (warning TASK_UNCHANGED, with the calls that finish the task or ask its
 * sender), over MCP and HTTP alike; the message alone is written. Three agents: @a sends, @b holds, @c looks on.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-holder-message-e2e', ['@a', '@b', '@c']);

test('a message from the holder to the sender in the task thread says the task is unchanged and how to move it', async () => {
  const b = await mcp.clients.http(mcp.t['@b']);
  const a = await mcp.clients.http(mcp.t['@a']);
  const named = await mcp.sendAs('@a', { to: '@b', subject: 'port it', body: 'x', task: {}, threadId: 'port-7' });
  const plain = await mcp.sendAs('@a', { to: '@b', subject: 'review it', body: 'x', task: {} });
  for (const taskId of [named, plain])
    expect(((await b.callTool({ name: 'update_task', arguments: { taskId, to: 'Working' } })) as ToolResult).isError).toBeFalsy();
  const state = async (taskId: string) =>
    ((await a.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult).structuredContent.mailbox.state;

  for (const [taskId, where] of [
    [plain, { threadId: plain }],
    [plain, { inReplyTo: plain }],
    [named, { inReplyTo: named }],
  ] as const) {
    const before = await mcp.server.eventCount();
    const done = (await b.callTool({
      name: 'add_message',
      arguments: { to: '@a', subject: 'done', body: 'PR 12', ...where },
    })) as ToolResult;
    expect(done.isError ?? false).toBe(false);
    expect([where, done.structuredContent.warnings]).toEqual([
      where,
      [expect.objectContaining({ code: 'TASK_UNCHANGED', taskId, state: 'Working', sender: '@a' })],
    ]);
    expect(done.structuredContent.warnings[0].message).toContain(`update_task {"taskId": "${taskId}", "to": "Completed"`);
    expect(await mcp.server.eventCount()).toBe(before + 1);
    expect(await state(taskId)).toBe('Working');
  }

  // To someone else in the thread, or the sender's own message: no note. Once the task is finished: none either.
  const aside = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@b'],
    body: { to: '@c', subject: 'fyi', body: 'x', threadId: plain },
  });
  expect([aside.status, aside.body.warnings]).toEqual([201, undefined]);
  expect(
    ((await b.callTool({ name: 'update_task', arguments: { taskId: plain, to: 'Completed' } })) as ToolResult).isError,
  ).toBeFalsy();
  const after = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@b'],
    body: { to: '@a', subject: 'thanks', body: 'x', inReplyTo: plain },
  });
  expect([after.status, after.body.warnings]).toEqual([201, undefined]);
  // Over HTTP alike, while it is open.
  const http = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@b'],
    body: { to: '@a', subject: 'done', body: 'x', threadId: 'port-7', inReplyTo: named },
  });
  expect([http.status, http.body.warnings]).toEqual([201, [expect.objectContaining({ code: 'TASK_UNCHANGED', taskId: named })]]);
});
