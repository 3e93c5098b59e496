/**
 * The task tools say which tasks a claim is for as the code decides it: a task sent to AGENT:* or to a list of
 * identities (both open to their audience; a list is no broadcast, isBroadcast false). claim_task said "Claim a
 * broadcast (AGENT:*) task", list_tasks "claimable (broadcast tasks you may claim)", update_task "give a claimed
 * broadcast task back" and leaseSeconds "broadcast tasks only", so a model holding a list task took it for
 * unclaimable. Read as a model reads them (tools/list over the MCP SDK), then done as they say: @s sends a list task
 * to @b, @c and @d; @b sees it claimable, @c claims it with a lease, gives it back, @d claims it.
 */
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const mcp = new McpSdkClients(() => server.url, 'task-tool-wording');

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c', '@d']);
});
afterAll(async () => {
  await mcp.closeAll();
  await server.close();
});

type ToolAnswer = { isError?: boolean; structuredContent?: any };

test('claim_task, list_tasks and update_task name AGENT:* and list tasks, and a list task is claimed as they say', async () => {
  const client = await mcp.http(t['@b']);
  const { tools } = await client.listTools();
  const tool = (name: string) => tools.find((candidate) => candidate.name === name)!;
  const words = (name: string) => JSON.stringify([tool(name).description, tool(name).inputSchema]);
  for (const name of ['claim_task', 'update_task', 'list_tasks']) expect(words(name)).not.toMatch(/broadcast/i);
  expect(tool('claim_task').description).toContain('Claim a task sent to AGENT:* or to a list naming you');
  expect(words('list_tasks')).toContain('claimable (AGENT:* or list tasks you may claim)');
  expect(words('update_task')).toContain('Submitted to give back a task you claimed');

  const sent = (await (
    await mcp.http(t['@s'])
  ).callTool({
    name: 'add_message',
    arguments: { to: ['@b', '@c', '@d'], subject: 'one of you', body: 'x', task: {} },
  })) as ToolAnswer;
  const taskId = sent.structuredContent.messageId as string;
  const listed = (await client.callTool({ name: 'list_tasks', arguments: { view: 'claimable' } })) as ToolAnswer;
  expect(listed.structuredContent.tasks).toMatchObject([{ taskId, isBroadcast: false, assignee: null }]);

  const carol = await mcp.http(t['@c']);
  const claimed = (await carol.callTool({ name: 'claim_task', arguments: { taskId, leaseSeconds: 600 } })) as ToolAnswer;
  expect(claimed).toMatchObject({ structuredContent: { assignee: '@c', events: ['TaskClaimed'] } });
  expect(claimed.isError).toBeFalsy();
  const back = (await carol.callTool({ name: 'update_task', arguments: { taskId, to: 'Submitted' } })) as ToolAnswer;
  expect(back).toMatchObject({ structuredContent: { state: 'Submitted', assignee: null, events: ['TaskReleased'] } });
  const dora = await mcp.http(t['@d']);
  expect(await dora.callTool({ name: 'claim_task', arguments: { taskId } })).toMatchObject({
    structuredContent: { assignee: '@d' },
  });
});
