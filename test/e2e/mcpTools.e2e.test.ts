/**
 * The MCP tools as a model and a client see them (issue 11), with the SDK's own
 * client over streamable HTTP: described properties, hints, output schemas the
 * client validates results against, encoded `arguments`, and a 401 that sends
 * no client into an OAuth login. Every rejection writes no event.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { taskEnvelopeSchema } from '../../src/commands/messageFields';
import { allowedKeysAt } from '../../src/commands/validation';
import { COMPACT_TASK_SCHEMA } from '../../src/adapters/mcp/tools';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let tools: Tool[];
const clients: Client[] = [];

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'mailbox-tools-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  tools = (await (await mcpClient(t['@a'])).listTools()).tools;
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

/** A raw JSON-RPC POST to /mcp (what a client that gets the request wrong sends), with the bearer token if any. */
const postMcp = (token: string | null, message: Record<string, unknown>): Promise<Response> =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(message),
  });

/** The JSON-RPC answer, sent as plain JSON or as one SSE `data:` line. */
async function rpcAnswer(response: Response): Promise<any> {
  const text = await response.text();
  return JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]);
}

const tool = (name: string) => tools.find((candidate) => candidate.name === name)!;
const property = (name: string, field: string) => (tool(name).inputSchema.properties as Record<string, any>)[field];

test('every input property is described; to carries its pattern; status says its default', () => {
  for (const { name, inputSchema } of tools) {
    for (const [field, schema] of Object.entries(inputSchema.properties ?? {}) as Array<[string, any]>) {
      const said = schema.description ?? (schema.enum ? 'its enum says it' : undefined);
      expect([name, field, typeof said]).toEqual([name, field, 'string']);
    }
  }
  const to = property('add_message', 'to');
  expect(to).toMatchObject({ description: expect.stringMatching(/@<identity>.*AGENT:\*.*a list/) });
  // one recipient (either shape) or a list of identities
  expect(JSON.stringify(to)).toContain(JSON.stringify('^(AGENT:\\*|@[A-Za-z0-9_-]{1,64})$'));
  expect(JSON.stringify(to)).toContain('"maxItems":100');
  expect(property('add_message', 'inReplyTo').description).toContain('threadId is inherited');
  expect(property('add_message', 'threadId').description).toContain('omit with inReplyTo');
  expect(property('add_message', 'wakeSuppressed').description).toContain('to @identities, refused if high priority or a task');
  expect(property('add_message', 'idempotencyKey').description).toContain('retry');
  expect(property('list_messages', 'status').description).toContain('default all');
  expect(property('list_messages', 'box').description).toContain('outbox');
  // an outbox entry's readAt is always null: a model asking whether its message was read is sent to the ledger
  expect(property('list_messages', 'box').description).toContain(
    'outbox: messages you sent (readAt null: who read each is in its delivery ledger)',
  );
  expect(property('list_messages', 'cursor').description).toContain('nextCursor');
});

test('list_agents says which of the identities it lists read their mail (auditors and retired agents do not)', () => {
  // It said "who you can write to" while listing auditors and retired agents, whose messages are never read.
  expect(tool('list_agents').description).toContain('only role agent, not retired, reads mail');
});

test('mark_read says exactly one of messageId, messageIds or all in its schema; the filters go with all', () => {
  expect(tool('mark_read').inputSchema).toMatchObject({ minProperties: 1, additionalProperties: false });
  expect(tool('mark_read').description).toMatch(/exactly one of messageId, messageIds, or all: true/);
  expect(Object.keys(tool('mark_read').inputSchema.properties!)).toEqual([
    'messageId',
    'messageIds',
    'all',
    'threadId',
    'from',
    'priority',
    'before',
    'includeUnseen',
  ]);
});

test('the task schema is compact, with no long regexes anywhere, and names exactly the keys the server accepts', () => {
  const task = property('add_message', 'task');
  expect(JSON.stringify(task).length).toBeLessThan(1000);
  expect(Object.keys(task.properties).sort()).toEqual(allowedKeysAt(taskEnvelopeSchema, []).sort());
  expect(task).toEqual(COMPACT_TASK_SCHEMA);
  const patterns = JSON.stringify(tools).match(/"pattern":"[^"]*"/g) ?? [];
  for (const pattern of patterns) expect(pattern.length).toBeLessThan(60);
});

test('hints: reads are read-only and idempotent; mark_read is idempotent; archive is destructive; add_message is neither', () => {
  for (const name of ['list_agents', 'unread_count', 'get_delivery']) {
    expect(tool(name).annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  }
  // Returning messages to their recipient records seen marks (issue 13): idempotent, not read-only.
  // So do the task reads (list_tasks marks a listed task's message seen; get_task too, and the sender's outcome seen).
  for (const name of ['list_messages', 'get_message', 'list_tasks', 'get_task']) {
    expect(tool(name).annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true, destructiveHint: false });
  }
  expect(tool('mark_read').annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true, destructiveHint: false });
  expect(tool('archive_message').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  expect(tool('add_message').annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, destructiveHint: false });
});

test('every tool has an outputSchema; the SDK client validates each structured result against it', async () => {
  for (const { name, outputSchema } of tools) expect([name, outputSchema?.type]).toEqual([name, 'object']);
  const [a, b] = [await mcpClient(t['@a']), await mcpClient(t['@b'])];
  const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
  const sent = await call(a, 'add_message', { to: '@b', subject: 's', body: 'b', task: { state: 'input-required' } });
  const { messageId } = sent.structuredContent as { messageId: string };
  for (const [client, name, args] of [
    [b, 'list_messages', {}],
    [b, 'get_message', { messageId }],
    [a, 'get_message', { messageId }],
    [b, 'unread_count', {}],
    [b, 'mark_read', { messageId }],
    [b, 'mark_read', { messageIds: [messageId] }],
    [b, 'archive_message', { messageId }],
    [a, 'list_agents', {}],
    [a, 'list_messages', { box: 'outbox' }],
  ] as Array<[Client, string, Record<string, unknown>]>) {
    const result = await call(client, name, args); // throws if structuredContent does not match the outputSchema
    expect([name, result.isError ?? false, typeof result.structuredContent]).toEqual([name, false, 'object']);
  }
  expect((await call(b, 'unread_count')).structuredContent).toMatchObject({ unreadCount: 0, unread: 0 });
  const failed = await call(b, 'get_message', { messageId: 'nope' }); // an error result also passes the client's validation
  expect(failed).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_FAILED' } });
});

describe('tools/call with arguments JSON-encoded as a string', () => {
  const rawCall = (client: Client, name: string, args: unknown) =>
    client.request({ method: 'tools/call', params: { name, arguments: args as Record<string, unknown> } }, CallToolResultSchema);

  test('a JSON object string is decoded losslessly', async () => {
    const a = await mcpClient(t['@a']);
    const result = await rawCall(a, 'add_message', JSON.stringify({ to: '@c', subject: 'encoded', body: 'b', tags: ['x'] }));
    expect(result.isError ?? false).toBe(false);
    const listed = await rawCall(await mcpClient(t['@c']), 'list_messages', '{"tags": ["x"]}');
    expect((listed.structuredContent as any).messages[0]).toMatchObject({ subject: 'encoded', from: '@a', tags: ['x'] });
  });

  test('a JSON object string that names a key twice is -32602 naming it, and writes nothing (not the last value kept)', async () => {
    const a = await mcpClient(t['@a']);
    const before = await server.eventCount();
    await expect(
      rawCall(a, 'add_message', '{"to": "@c", "subject": "s", "body": "first", "body": "second"}'),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("'arguments.body' appears twice in one JSON object"),
      data: { code: 'VALIDATION_FAILED', field: 'arguments.body' },
    });
    expect(await server.eventCount()).toBe(before);
  });

  test.each(['not json', '["@b"]', '42'])('%j is -32602 with the envelope, and writes nothing', async (args) => {
    const a = await mcpClient(t['@a']);
    const before = await server.eventCount();
    await expect(rawCall(a, 'add_message', args)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("'arguments' must be an object of the tool's named arguments"),
      data: { code: 'VALIDATION_FAILED', field: 'arguments', error: 'Validation failed' },
    });
    expect(await server.eventCount()).toBe(before);
  });

  test.each([
    [null, 'null'],
    [['@b'], 'an array'],
    [42, 'a number'],
    [true, 'a boolean'],
  ])('%j (not an object) is -32602 with the envelope, as a bad string is, and writes nothing', async (args, kind) => {
    const before = await server.eventCount();
    const body = await rpcAnswer(
      await postMcp(t['@a'], { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'add_message', arguments: args } }),
    );
    const message =
      'tools/call: \'arguments\' must be an object of the tool\'s named arguments (e.g. {"messageId": "<id>"}), ' +
      `or that object JSON-encoded as one string; got ${kind}.`;
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32602,
        message: `MCP error -32602: ${message}`, // the SDK's prefix, as for a string that is not a JSON object
        data: { error: 'Validation failed', code: 'VALIDATION_FAILED', message, field: 'arguments' },
      },
    });
    expect(await server.eventCount()).toBe(before);
  });

  test("left out, the arguments are the tool's to check: a tool that takes none answers", async () => {
    const result = await (
      await mcpClient(t['@a'])
    ).request({ method: 'tools/call', params: { name: 'unread_count' } }, CallToolResultSchema);
    expect(result.isError ?? false).toBe(false);
  });
});

// A tools/call without a tool name (or without params) was JSON-RPC -32603 "internal error" whose message was the
// SDK's zod issue dump: the server blamed itself for the client's request and named no tool.
describe('tools/call without a tool name', () => {
  test.each([
    [{ arguments: {} }, 'no name'],
    [{ name: 5, arguments: {} }, 'a number'],
    [undefined, 'no params'],
  ] as Array<[Record<string, unknown> | undefined, string]>)(
    'params %j (%s): -32602 with the envelope listing the tools, and writes nothing',
    async (params) => {
      const before = await server.eventCount();
      const body = await rpcAnswer(
        await postMcp(t['@a'], { jsonrpc: '2.0', id: 8, method: 'tools/call', ...(params === undefined ? {} : { params }) }),
      );
      expect(body).toMatchObject({
        jsonrpc: '2.0',
        id: 8,
        error: {
          code: -32602,
          message: expect.stringContaining("tools/call: 'name' must name one of the tools: add_message, list_messages"),
          data: { error: 'Validation failed', code: 'VALIDATION_FAILED', field: 'name', tools: tools.map((x) => x.name) },
        },
      });
      expect(await server.eventCount()).toBe(before);
    },
  );
});

// A request sent without an id is a JSON-RPC notification: the SDK answers none and runs nothing, so POST /mcp
// answered 202 Accepted with an empty body, and the send the caller meant was silently dropped.
describe('a request without an id (a notification by mistake)', () => {
  test.each([
    [{ jsonrpc: '2.0', method: 'tools/call', params: { name: 'add_message', arguments: { to: '@b', subject: 's', body: 'b' } } }],
    [
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'tools/call', params: { name: 'unread_count' } },
      ],
    ],
    [{ jsonrpc: '2.0', method: 'tools/list' }],
  ])('%j is 400 saying to give it an id, and writes nothing', async (message) => {
    const before = await server.eventCount();
    const response = await postMcp(t['@a'], message as unknown as Record<string, unknown>);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { message: string };
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'id' });
    expect(body.message).toMatch(/sent without an id: .* notification, .* nothing was done\. Give it an id/);
    expect(await server.eventCount()).toBe(before);
  });

  test('a real notification (notifications/initialized) is still accepted: 202', async () => {
    const response = await postMcp(t['@a'], { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(response.status).toBe(202);
  });
});

describe('a missing or bad token: a clear error, never an OAuth login', () => {
  test.each([
    [null, 'missing'],
    ['mbx_wrong', 'bad'],
  ] as Array<[string | null, string]>)(
    '%s token (%s): 401 without resource metadata, the envelope says use a static token',
    async (token) => {
      const before = await server.eventCount();
      const response = await postMcp(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(response.status).toBe(401);
      const challenge = response.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer realm="agent-mailbox"/);
      expect(challenge).not.toContain('resource_metadata');
      expect(challenge.includes('error="invalid_token"')).toBe(token !== null);
      const body = (await response.json()) as { code: string; message: string };
      expect(body).toMatchObject({ code: 'UNAUTHENTICATED', oauth: false });
      expect(body.message).toContain(
        "not OAuth: configure your MCP client with the header 'Authorization: Bearer <agent token>'",
      );
      expect(await server.eventCount()).toBe(before);
    },
  );

  test('the SDK client surfaces that message on connect', async () => {
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)))).rejects.toThrow(
      /takes a static agent token, not OAuth/,
    );
  });

  test.each(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server', '/register'])(
    'OAuth discovery at %s answers 404 saying there is no OAuth here',
    async (path) => {
      const { status, body } = await server.call(path === '/register' ? 'POST' : 'GET', path);
      expect([status, body.code]).toEqual([404, 'NOT_FOUND']);
      expect(body.message).toContain('this mailbox does not offer OAuth');
    },
  );
});
