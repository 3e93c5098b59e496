/**
 * get_message (GET /v1/messages/{id}) and list_messages (GET /v1/messages) on a task's message answered the task
 * envelope as sent: `task.state` still said "Submitted" after @b had taken and completed the task, so @c, reading its
 * mail, concluded nobody had taken it. The envelope's `state` is now the task's state as of the answer (as get_task
 * says it), its other keys as sent (nothing added: until the task moves, it equals the envelope sent). Read with the
 * MCP SDK client and over HTTP, by the sender and two of the audience.
 */
import { mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-state-in-mail', ['@s', '@b', '@c']);
const clients = mcp.clients;

const ENVELOPE = { expectedOutput: { shape: 'review' }, budget: { maxTokens: 5000 } };
const answer = (result: any) => result.structuredContent ?? JSON.parse(result.content[0].text);

test('a completed task reads Completed in every answer carrying its message, the rest of its envelope as sent', async () => {
  const [s, b, c] = await Promise.all(['@s', '@b', '@c'].map((who) => clients.http(mcp.t[who])));
  const sent = answer(
    await s.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject: 'review PR 7', body: 'please', task: { state: 'submitted', ...ENVELOPE } },
    }),
  );
  const taskId = sent.messageId;
  // Before anyone takes it: the envelope as sent (its state in canonical PascalCase), nothing added.
  expect(answer(await c.callTool({ name: 'get_message', arguments: { messageId: taskId } })).task).toEqual({
    state: 'Submitted',
    ...ENVELOPE,
  });

  for (const [name, to] of [['claim_task'], ['update_task', 'Working'], ['update_task', 'Completed']])
    expect((await b.callTool({ name, arguments: to ? { taskId, to } : { taskId } })).isError).toBeFalsy();
  const task = answer(await s.callTool({ name: 'get_task', arguments: { taskId } }));
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  const now = { state: 'Completed', ...ENVELOPE };

  for (const reader of [s, b, c])
    expect(answer(await reader.callTool({ name: 'get_message', arguments: { messageId: taskId } })).task).toEqual(now);
  for (const reader of ['@s', '@b', '@c']) {
    const got = await mcp.server.call('GET', `/v1/messages/${taskId}`, { token: mcp.t[reader] });
    expect({ status: got.status, task: got.body.task }).toEqual({ status: 200, task: now });
  }
  // The listings carry it so too: the inboxes of the audience, the sender's outbox.
  expect(answer(await c.callTool({ name: 'list_messages', arguments: {} })).messages.map((m: any) => m.task)).toEqual([now]);
  expect(
    answer(await s.callTool({ name: 'list_messages', arguments: { box: 'outbox' } })).messages.map((m: any) => m.task),
  ).toEqual([now]);
  const listed = await mcp.server.call('GET', '/v1/messages', { token: mcp.t['@b'] });
  expect(listed.body.messages.map((m: any) => m.task)).toEqual([now]);
});
