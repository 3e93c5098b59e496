/**
 * A task's sender answering its InputRequired with an ordinary message, over MCP as a model does: the add_message
 * result said nothing either way (a bare {messageId, status: "sent", ...}), whether the message moved the task back to
 * Working or, sent to the holder in another thread, left it waiting. It now says which (warnings TASK_AWAITS_INPUT,
 * with the calls that answer, and TASK_ANSWERED), and the HTTP 201 alike. Three agents: @a sends, @b holds, @c looks on.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-answer-said', ['@a', '@b', '@c']);

test('add_message tells the sender that its message did not answer the task, how to, then that it did', async () => {
  const taskId = await mcp.sendAs('@a', { to: '@b', subject: 'port it', body: 'x', task: {} });
  const b = await mcp.clients.http(mcp.t['@b']);
  for (const args of [{ to: 'Working' }, { to: 'InputRequired', note: 'which branch?' }])
    expect(((await b.callTool({ name: 'update_task', arguments: { taskId, ...args } })) as ToolResult).isError).toBeFalsy();
  const a = await mcp.clients.http(mcp.t['@a']);
  const state = async () =>
    ((await a.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult).structuredContent.mailbox.state;

  // To the holder, replying to a question it sent apart (another thread): the message alone is written; the task
  // still waits, and the result says so.
  const question = await mcp.sendAs('@b', { to: '@a', subject: 'which branch?', body: 'x' });
  const before = await mcp.server.eventCount();
  const apart = (await a.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 'use main', body: 'main', inReplyTo: question },
  })) as ToolResult;
  expect(apart.isError).toBeFalsy();
  expect(apart.structuredContent.warnings).toMatchObject([
    { code: 'TASK_AWAITS_INPUT', taskId, state: 'InputRequired', assignee: '@b' },
  ]);
  expect(apart.structuredContent.warnings[0].message).toContain(`reply in the task's thread (inReplyTo "${taskId}"`);
  expect(apart.structuredContent.warnings[0].message).toContain(`update_task {"taskId": "${taskId}", "to": "Working"`);
  expect(await mcp.server.eventCount()).toBe(before + 1);
  expect(await state()).toBe('InputRequired');

  // Over HTTP alike, to @c in the task's thread.
  const aside = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: '@c', subject: 'fyi', body: 'x', inReplyTo: taskId },
  });
  expect([aside.status, aside.body.warnings]).toEqual([
    201,
    [expect.objectContaining({ code: 'TASK_AWAITS_INPUT', taskId, assignee: '@b' })],
  ]);
  expect(await state()).toBe('InputRequired');

  // As it says: a reply in the task's thread, to @b, answers it, and the result says that too.
  const reply = (await a.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 'use main', body: 'main', inReplyTo: taskId },
  })) as ToolResult;
  expect(reply.structuredContent.warnings).toEqual([
    expect.objectContaining({ code: 'TASK_ANSWERED', taskId, state: 'Working' }),
  ]);
  expect(await state()).toBe('Working');
});
