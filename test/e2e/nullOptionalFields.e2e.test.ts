/**
 * An optional field sent as null is told to leave it out, whichever field and tool: `priority: null` said "must be
 * one of low, normal, high" and `limit: null` "takes a whole number from 1 to 200 (default 50)", where other fields
 * said "must be text (a JSON string), not null": none said that the field may be omitted, which is what a caller
 * sending null means. Now every optional field's null is refused (400 VALIDATION_FAILED, the same envelope as the MCP
 * tool error) with "must not be null: omit it for the default (...)" or "omit it if you have none", then what a value
 * must be; nothing is written. A required field's null is told its type, as before.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const mcp: Record<string, Client> = {};
let messageId: string;
let taskId: string;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  for (const identity of ['@a', '@b']) {
    mcp[identity] = new Client({ name: 'null-optional-fields-e2e', version: '1.0.0' });
    await mcp[identity].connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t[identity]}` } },
      }),
    );
  }
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'hello', body: 'x' },
  });
  messageId = sent.body.messageId;
  const task = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: 'AGENT:*', subject: 'a task', body: 'x', task: {} },
  });
  taskId = task.body.messageId;
});
afterAll(async () => {
  for (const client of Object.values(mcp)) await client.close();
  await server.close();
});

const tool = async (identity: string, name: string, args: Record<string, unknown>) => {
  const result = (await mcp[identity].callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any };
  return { isError: result.isError === true, body: result.structuredContent };
};

test('priority: null and limit: null say to omit them for the default, over HTTP and MCP alike; nothing written', async () => {
  const before = await server.eventCount();
  const send = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@b', subject: 's', body: 'b', priority: null },
  });
  expect(send.status).toBe(400);
  expect(send.body).toEqual({
    error: 'Validation failed',
    code: 'VALIDATION_FAILED',
    message:
      'add_message: \'priority\' must not be null: omit it for the default ("normal"); when given, it must be one of ' +
      '"low", "normal", "high"',
    field: 'priority',
    issues: [
      {
        field: 'priority',
        message: 'must not be null: omit it for the default ("normal"); when given, it must be one of "low", "normal", "high"',
      },
    ],
  });
  expect(await tool('@a', 'add_message', { to: '@b', subject: 's', body: 'b', priority: null })).toEqual({
    isError: true,
    body: send.body,
  });
  const list = await tool('@b', 'list_messages', { limit: null });
  expect(list.body.message).toBe(
    "list_messages: 'limit' must not be null: omit it for the default (50); when given, it takes a whole number from 1 to 200",
  );
  const delivery = await tool('@a', 'get_delivery', { messageId, limit: null });
  expect(delivery.body.message).toBe(
    "get_delivery: 'limit' must not be null: omit it for the default (100); when given, it takes a whole number from 1 to 1000",
  );
  expect(await server.eventCount()).toBe(before);
});

// The task id is known once beforeAll ran: '<task>' stands for it.
test.each<[string, string, Record<string, unknown>, string]>([
  [
    '@a',
    'add_message',
    { to: '@b', subject: 's', body: 'b', threadId: null },
    "'threadId' must not be null: omit it if you have none; when given, it must be text (a JSON string)",
  ],
  [
    '@a',
    'add_message',
    { to: '@b', subject: 's', body: 'b', task: { budget: { maxTokens: null } } },
    "'task.budget.maxTokens' must not be null: omit it if you have none; when given, it takes a whole number of tokens, 1 or more, e.g. 300",
  ],
  [
    '@a',
    'add_message',
    { to: '@b', subject: 's', body: 'b', wakeSuppressed: null },
    "'wakeSuppressed' must not be null: omit it for the default (false); when given, it must be true or false",
  ],
  [
    '@b',
    'claim_task',
    { taskId: '<task>', leaseSeconds: null },
    "'leaseSeconds' must not be null: omit it if you have none; when given, it takes a whole number of seconds from 1 to 604800, e.g. 300",
  ],
  [
    '@b',
    'mark_read',
    { all: true, priority: null },
    '\'priority\' must not be null: omit it if you have none; when given, it must be one of "low", "normal", "high"',
  ],
])('%s %s %j: "%s"; nothing written', async (identity, name, args, says) => {
  const before = await server.eventCount();
  const refused = await tool(identity, name, args.taskId === '<task>' ? { ...args, taskId } : args);
  expect(refused.isError).toBe(true);
  expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', message: `${name}: ${says}` });
  expect(await server.eventCount()).toBe(before);
});

test('every optional input of every tool, sent as null, is told to omit it; a required one is told its type', async () => {
  const { tools } = await mcp['@a'].listTools();
  const required: Record<string, Record<string, unknown>> = {
    add_message: { to: '@b', subject: 's', body: 'b' },
    get_message: { messageId },
    get_delivery: { messageId },
    mark_read: { messageId },
    archive_message: { messageId },
    unarchive_message: { messageId },
    claim_task: { taskId },
    update_task: { taskId, to: 'working' },
    get_task: { taskId },
  };
  const before = await server.eventCount();
  const told: string[] = [];
  for (const each of tools) {
    const properties = Object.keys((each.inputSchema.properties ?? {}) as object);
    const requiredOnes = new Set(each.inputSchema.required ?? []);
    for (const property of properties.filter((name) => !requiredOnes.has(name))) {
      const refused = await tool('@b', each.name, { ...required[each.name], [property]: null });
      expect([each.name, property, refused.isError]).toEqual([each.name, property, true]);
      expect([each.name, property, refused.body.message]).toEqual([
        each.name,
        property,
        expect.stringMatching(
          new RegExp(`'${property}' must not be null: omit it (for the default \\(.+\\)|if you have none); when given, it `),
        ),
      ]);
      told.push(`${each.name}.${property}`);
    }
  }
  expect(told).toEqual(
    expect.arrayContaining(['add_message.priority', 'list_messages.limit', 'list_tasks.view', 'mark_read.all']),
  );
  const to = await tool('@a', 'add_message', { to: null, subject: 's', body: 'b' });
  expect(to.body.message).toContain("'to' must be text or a list, not null");
  expect(await server.eventCount()).toBe(before);
});
