/**
 * A task sent in a thread its sender named (threadId "port-7", or another message's id) was not found by the holder's
 * message in that thread: "done" sent to the task's sender there (by threadId, or inReplyTo a message of the thread
 * that is not the task's) was a bare 201, no TASK_UNCHANGED, while the task stayed Working. It is now said as in the
 * task's own thread, per task whose sender the message goes to, over MCP and HTTP; the message alone is written.
 * Three agents: @a and @c each send @b a task in the same named thread; @b holds both.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-holder-named-thread-e2e', ['@a', '@b', '@c']);

test('the holder writing in a named thread is told, per task whose sender it writes to, that the task is unchanged', async () => {
  const b = await mcp.clients.http(mcp.t['@b']);
  const fromA = await mcp.sendAs('@a', { to: '@b', subject: 'port it', body: 'x', task: {}, threadId: 'port-7' });
  const fromC = await mcp.sendAs('@c', { to: '@b', subject: 'test it', body: 'x', task: {}, threadId: 'port-7' });
  // A thread named by another message's id: a plain message first, then a task in its thread.
  const plain = await mcp.sendAs('@a', { to: '@b', subject: 'context', body: 'x' });
  const inPlain = await mcp.sendAs('@a', { to: '@b', subject: 'fix it', body: 'x', task: {}, threadId: plain });
  for (const taskId of [fromA, fromC, inPlain])
    expect(((await b.callTool({ name: 'update_task', arguments: { taskId, to: 'Working' } })) as ToolResult).isError).toBeFalsy();

  const send = async (token: string, body: Record<string, unknown>) => {
    const before = await mcp.server.eventCount();
    const sent = await mcp.server.call('POST', '/v1/messages', { token, body: { subject: 'done', body: 'PR 12', ...body } });
    expect(sent.status).toBe(201);
    expect(await mcp.server.eventCount()).toBe(before + 1); // the message alone: no task moved
    return (sent.body.warnings ?? []).map((w: { code: string; taskId: string }) => [w.code, w.taskId]);
  };
  const b_ = mcp.t['@b'];
  expect(await send(b_, { to: '@a', threadId: 'port-7' })).toEqual([['TASK_UNCHANGED', fromA]]);
  expect(await send(b_, { to: '@c', threadId: 'port-7' })).toEqual([['TASK_UNCHANGED', fromC]]);
  expect((await send(b_, { to: ['@a', '@c'], threadId: 'port-7' })).sort()).toEqual(
    [
      ['TASK_UNCHANGED', fromA],
      ['TASK_UNCHANGED', fromC],
    ].sort(),
  );
  // inReplyTo a message of the thread that carries no task: the thread's tasks are found all the same.
  expect(await send(b_, { to: '@a', inReplyTo: plain })).toEqual([['TASK_UNCHANGED', inPlain]]);

  // Over MCP alike, with the calls that move the task.
  const done = (await b.callTool({
    name: 'add_message',
    arguments: { to: '@a', subject: 'done', body: 'PR 12', threadId: 'port-7' },
  })) as ToolResult;
  expect(done.structuredContent.warnings).toEqual([
    expect.objectContaining({ code: 'TASK_UNCHANGED', taskId: fromA, state: 'Working', sender: '@a' }),
  ]);
  expect(done.structuredContent.warnings[0].message).toContain(`update_task {"taskId": "${fromA}", "to": "Completed"`);

  // Not the holder (@c to @a in the thread), another thread, or once the task is finished: no note.
  expect(await send(mcp.t['@c'], { to: '@a', threadId: 'port-7' })).toEqual([]);
  expect(await send(b_, { to: '@a', threadId: 'port-8' })).toEqual([]);
  expect(
    ((await b.callTool({ name: 'update_task', arguments: { taskId: fromA, to: 'Completed' } })) as ToolResult).isError,
  ).toBeFalsy();
  expect(await send(b_, { to: ['@a', '@c'], threadId: 'port-7' })).toEqual([['TASK_UNCHANGED', fromC]]);
});
