/**
 * A model that claims, moves or reads as a task the id of a plain message (one sent without a task) was told "No task
 * <id> exists among the tasks you sent, hold or may claim", as if the id were mistyped. A party to the message (its
 * sender or a recipient) is now told the message carries no task and how a task is made; anyone else still learns
 * nothing from the id. Still TASK_NOT_FOUND, and nothing is written.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

type ToolResult = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: any };

let server: TestServer;
let t: Record<string, string>;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c', '@d']);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'plain-message-as-task-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

const NO_TASK = 'carries no task: it was sent without one';

test('claim_task, update_task and get_task on a plain message: its parties are told it carries no task; nothing is written', async () => {
  const [a, b, c, d] = await Promise.all(['@a', '@b', '@c', '@d'].map((who) => mcpClient(t[who])));
  const sent = (await a.callTool({
    name: 'add_message',
    arguments: { to: ['@b', '@c'], subject: 'plain', body: 'x' },
  })) as ToolResult;
  const taskId = sent.structuredContent.messageId;
  const calls: Array<[Client, string, string, Record<string, unknown>]> = [
    [b, '@b', 'claim_task', { taskId }],
    [c, '@c', 'update_task', { taskId, to: 'Working' }],
    [b, '@b', 'get_task', { taskId }],
    [a, '@a', 'get_task', { taskId }],
    [a, '@a', 'update_task', { taskId, to: 'Canceled' }],
  ];
  for (const [client, who, name, args] of calls) {
    const before = await server.eventCount();
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    expect([who, name, result.isError]).toEqual([who, name, true]);
    expect(result.structuredContent).toMatchObject({ code: 'TASK_NOT_FOUND', taskId, messageId: taskId });
    expect(result.structuredContent.message).toContain(NO_TASK);
    expect(result.structuredContent.message).toContain("A task is a message sent with 'task'");
    expect(await server.eventCount()).toBe(before);
  }
  // @d neither sent nor received it: the id tells it nothing, as any id it has no part in.
  const before = await server.eventCount();
  const stranger = (await d.callTool({ name: 'claim_task', arguments: { taskId } })) as ToolResult;
  expect(stranger.structuredContent).toEqual({
    error: 'Task not found',
    code: 'TASK_NOT_FOUND',
    message: expect.stringContaining(`No task ${taskId} exists among the tasks you sent, hold or may claim`),
    taskId,
  });
  const unknown = '00000000-0000-4000-8000-000000000000';
  const missing = (await b.callTool({ name: 'get_task', arguments: { taskId: unknown } })) as ToolResult;
  expect(missing.structuredContent.message).toContain(`No task ${unknown} exists`);
  expect(await server.eventCount()).toBe(before);
});
