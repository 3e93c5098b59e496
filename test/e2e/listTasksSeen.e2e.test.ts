/**
 * list_tasks was advertised read-only (`readOnlyHint: true`, and "read-only" in docs/mcp.md), but a task it returns to
 * a recipient of the task's message marks that message seen, a MessagesSeen event that the sender's delivery ledger
 * shows, as list_messages does (whose hints say so: not read-only, idempotent, not destructive). Its hints now say the
 * same as list_messages'.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';
import { waitFor } from '../support/waitFor';

const mcp = mcpTestServer('list-tasks-seen-e2e', ['@alice', '@bob', '@carol']);

test.each(['http', 'stdio'])('over MCP (%s), list_tasks is not read-only: the task it lists is seen', async (via) => {
  const bob = via === 'http' ? await mcp.clients.http(mcp.t['@bob']) : await mcp.clients.stdio(mcp.t['@bob']);
  const alice = via === 'http' ? await mcp.clients.http(mcp.t['@alice']) : await mcp.clients.stdio(mcp.t['@alice']);
  const { tools } = await bob.listTools();
  expect(tools.find((tool) => tool.name === 'list_tasks')?.annotations).toEqual({
    readOnlyHint: false,
    idempotentHint: true,
    destructiveHint: false,
    openWorldHint: false,
  });
  const taskId = await mcp.sendAs('@alice', { to: ['@bob', '@carol'], subject: `review ${via}`, body: 'b', task: {} });
  const seenBy = async () => {
    const ledger = (await alice.callTool({ name: 'get_delivery', arguments: { messageId: taskId } })) as ToolResult;
    return ledger.structuredContent.recipients
      .filter((row: { seen: unknown }) => row.seen !== null)
      .map((row: any) => row.recipient);
  };
  expect(await seenBy()).toEqual([]);
  const before = await mcp.server.eventCount();
  const listed = (await bob.callTool({ name: 'list_tasks', arguments: { view: 'claimable' } })) as ToolResult;
  expect(listed.structuredContent.tasks.map((task: { taskId: string }) => task.taskId)).toContain(taskId);
  await waitFor(async () => (await seenBy()).length > 0, { what: "@bob's seen mark from list_tasks" });
  expect(await seenBy()).toEqual(['@bob']);
  expect(await mcp.server.eventCount()).toBe(before + 1); // the MessagesSeen the listing wrote
});
