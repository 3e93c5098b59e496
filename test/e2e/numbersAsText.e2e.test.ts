/**
 * Every whole-number input takes one rule, on every surface: a JSON number, or its decimal digits as a string, read
 * as the number and kept as one (DESIGN: lossless-permissive). Before, `list_messages {limit: "10"}` and
 * `get_delivery {limit: "5"}` were accepted while `claim_task {leaseSeconds: "60"}` and a task's
 * `budget.maxTokens: "1000"` were refused, though each tool schema said integer alike. Other text is refused with the
 * field, its range and the form, and writes nothing; the advertised schemas say the two forms.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const mcp: Record<string, Client> = {};

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  for (const identity of ['@a', '@b', '@c']) {
    mcp[identity] = new Client({ name: 'numbers-as-text-e2e', version: '1.0.0' });
    await mcp[identity].connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t[identity]}` } },
      }),
    );
  }
});
afterAll(async () => {
  for (const client of Object.values(mcp)) await client.close();
  await server.close();
});

const tool = async (identity: string, name: string, args: Record<string, unknown>) => {
  const result = (await mcp[identity].callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any };
  return { isError: result.isError === true, body: result.structuredContent };
};

const broadcastTask = async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: 'AGENT:*', subject: 'a task for anyone', body: 'x', task: {} },
  });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};

const leaseMs = (claim: { claimedAt: string; leaseExpiresAt: string }) =>
  Date.parse(claim.leaseExpiresAt) - Date.parse(claim.claimedAt);

describe('leaseSeconds as digits', () => {
  test('claim_task {leaseSeconds: "60"} over MCP holds the task 60 seconds, as 60 does', async () => {
    const taskId = await broadcastTask();
    const claimed = await tool('@b', 'claim_task', { taskId, leaseSeconds: '60' });
    expect(claimed.isError).toBe(false);
    expect(claimed.body).toMatchObject({ assignee: '@b', events: ['TaskClaimed'] });
    expect(leaseMs(claimed.body)).toBe(60_000);
    // The lease is the number: the other member of the audience finds the task held.
    const other = await tool('@c', 'claim_task', { taskId });
    expect([other.isError, other.body.code]).toEqual([true, 'TASK_ALREADY_CLAIMED']);
  });

  test('POST /v1/tasks/{id}/claim {"leaseSeconds": "120"} too', async () => {
    const taskId = await broadcastTask();
    const claimed = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@c'], body: { leaseSeconds: '120' } });
    expect(claimed.status).toBe(200);
    expect(leaseMs(claimed.body)).toBe(120_000);
    const task = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@a'] });
    expect(Date.parse(task.body.mailbox.lease.expiresAt) - Date.parse(claimed.body.claimedAt)).toBe(120_000);
  });

  test.each([
    [
      '60s',
      "takes a whole number of seconds from 1 to 604800, e.g. 300, written in plain decimal digits, not '60s': did you mean 60?",
    ],
    [' 60', "takes a whole number of seconds from 1 to 604800, e.g. 300, written in plain decimal digits, not ' 60'"],
    ['-1', "takes a whole number of seconds from 1 to 604800, e.g. 300, written in plain decimal digits, not '-1'"],
    ['1.5', "takes a whole number of seconds from 1 to 604800, e.g. 300, written in plain decimal digits, not '1.5'"],
    ['0', 'takes a whole number of seconds from 1 to 604800, e.g. 300, not 0'],
  ])('leaseSeconds %j is refused over MCP and HTTP alike, naming the range and the form; nothing written', async (text, says) => {
    const taskId = await broadcastTask();
    const before = await server.eventCount();
    const overMcp = await tool('@b', 'claim_task', { taskId, leaseSeconds: text });
    const overHttp = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'], body: { leaseSeconds: text } });
    expect(overHttp.status).toBe(400);
    expect(overHttp.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'leaseSeconds',
      message: `claim_task: 'leaseSeconds' ${says}`,
    });
    expect(overMcp).toEqual({ isError: true, body: overHttp.body });
    expect(await server.eventCount()).toBe(before);
  });
});

test('a task budget of maxTokens "1000" (add_message over MCP, POST /v1/messages) is kept as the number 1000', async () => {
  const overMcp = await tool('@a', 'add_message', {
    to: '@b',
    subject: 'budgeted',
    body: 'x',
    task: { budget: { maxTokens: '1000' } },
  });
  expect(overMcp.isError).toBe(false);
  const overHttp = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@c', subject: 'budgeted', body: 'x', task: JSON.stringify({ budget: { maxTokens: '2000' } }) },
  });
  expect(overHttp.status).toBe(201);
  const readByB = await server.call('GET', `/v1/messages/${overMcp.body.messageId}`, { token: t['@b'] });
  const readByC = await tool('@c', 'get_message', { messageId: overHttp.body.messageId });
  expect(readByB.body.task.budget).toEqual({ maxTokens: 1000 });
  expect(readByC.body.task.budget).toEqual({ maxTokens: 2000 });
});

test('a page size as digits: list_messages, list_tasks and get_delivery {limit: "1"} answer one entry', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'two recipients', body: 'x' },
  });
  const inbox = await tool('@b', 'list_messages', { limit: '1' });
  expect([inbox.isError, inbox.body.messages.length, inbox.body.nextCursor]).toEqual([false, 1, expect.any(String)]);
  const tasks = await tool('@a', 'list_tasks', { view: 'sent', limit: '1' });
  expect([tasks.isError, tasks.body.tasks.length]).toEqual([false, 1]);
  const delivery = await tool('@a', 'get_delivery', { messageId: sent.body.messageId, limit: '1' });
  expect([delivery.isError, delivery.body.recipients.length]).toEqual([false, 1]);
});

test('tools/list and openapi.json say it: every whole-number input is an integer or a string of digits', async () => {
  const { tools } = await mcp['@a'].listTools();
  const integers: string[] = [];
  const walk = (schema: unknown, path: string): void => {
    if (!schema || typeof schema !== 'object') return;
    const node = schema as Record<string, unknown>;
    const types = ([] as unknown[]).concat(node.type);
    if (types.includes('integer')) {
      integers.push(path);
      expect({ path, type: node.type, pattern: node.pattern }).toEqual({ path, type: ['integer', 'string'], pattern: '^\\d+$' });
    }
    for (const [key, value] of Object.entries(node)) walk(value, `${path}.${key}`);
  };
  for (const each of tools) walk(each.inputSchema, each.name);
  expect(integers.sort()).toEqual([
    'claim_task.properties.leaseSeconds',
    'get_delivery.properties.limit',
    'list_messages.properties.limit',
    'list_tasks.properties.limit',
  ]);
  const addMessage = tools.find((each) => each.name === 'add_message')!;
  const task = (addMessage.inputSchema.properties as Record<string, any>).task;
  expect(JSON.stringify(task)).toContain('maxTokens?: positive integer or its digits');
  const openapi = await server.call('GET', '/openapi.json');
  const claim = openapi.body.paths['/v1/tasks/{id}/claim'].post.requestBody.content['application/json'].schema;
  expect(claim.properties.leaseSeconds).toMatchObject({ type: ['integer', 'string'], pattern: '^\\d+$', minimum: 1 });
  // A query string is text anyway: there the page size is documented as the number.
  const limit = openapi.body.paths['/v1/messages'].get.parameters.find((p: { name: string }) => p.name === 'limit');
  expect(limit.schema.type).toBe('integer');
});
