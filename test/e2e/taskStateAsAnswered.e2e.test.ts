/**
 * A task state the mailbox answers is one it takes back: get_task says an Unknown task is TASK_STATE_UNSPECIFIED (A2A
 * v1.0 has no UNKNOWN), and that word was refused as no task state ("must be a task state: one of ..."), in a send's
 * task.state, list_tasks' state and update_task's to alike. Found by walking tasks as an agent over MCP (helper ht2).
 */
import { mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('state-as-answered', ['@s', '@b', '@c']);
const clients = mcp.clients;

const answer = (result: any) => result.structuredContent ?? JSON.parse(result.content[0].text);

test('the v1.0 state get_task answers for Unknown is taken back over MCP: in a send, a listing filter and a move', async () => {
  const s = await clients.http(mcp.t['@s']);
  const b = await clients.http(mcp.t['@b']);
  const first = answer(
    await s.callTool({ name: 'add_message', arguments: { to: '@b', subject: 'triage', body: 'x', task: { state: 'Unknown' } } }),
  );
  const read = answer(await b.callTool({ name: 'get_task', arguments: { taskId: first.messageId } }));
  expect(read.status.state).toBe('TASK_STATE_UNSPECIFIED');

  const again = await s.callTool({
    name: 'add_message',
    arguments: { to: '@c', subject: 'triage too', body: 'x', task: { state: read.status.state } },
  });
  expect(again.isError).toBeFalsy();
  const listed = await s.callTool({ name: 'list_tasks', arguments: { view: 'sent', state: read.status.state } });
  expect(listed.isError).toBeFalsy();
  expect(answer(listed).tasks.map((task: any) => [task.subject, task.state])).toEqual([
    ['triage too', 'Unknown'],
    ['triage', 'Unknown'],
  ]);
  // A move to it is a transition like any other: refused as one (only Canceled leaves Unknown), nothing written.
  const before = await mcp.server.eventCount();
  const moved = await s.callTool({ name: 'update_task', arguments: { taskId: first.messageId, to: read.status.state } });
  expect(answer(moved)).toMatchObject({
    code: 'INVALID_TRANSITION',
    currentState: 'Unknown',
    requested: 'Unknown',
    allowed: ['Canceled'],
  });
  expect(await mcp.server.eventCount()).toBe(before);
});
