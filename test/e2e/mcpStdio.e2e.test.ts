/**
 * `mailbox mcp`: the stdio MCP server proxies its tools to the HTTP API. The
 * SDK client talks to it over a pair of in-memory pipes carrying the same
 * newline-delimited JSON-RPC as a real stdin/stdout (the stdio transport is
 * symmetric, so the SDK's StdioServerTransport serves as the client's end too).
 */
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { runStdioMcp } from '../../src/stdioMcp';
import { startTestServer, type TestServer } from '../support/httpServer';
import { stdioLines } from '../support/mcpSdkClients';

let server: TestServer;
let t: Record<string, string>;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  for (const close of closers) await close();
  await server.close();
});

/** `mailbox mcp` on in-memory pipes, connected (initialize answered), closed after the test. */
async function stdioClient(token: string | undefined, url = server.url) {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const mcp = await runStdioMcp(url, token, { stdin: toServer, stdout: fromServer });
  const client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
  await client.connect(new StdioServerTransport(fromServer, toServer));
  closers.push(async () => {
    await client.close();
    await mcp.close();
  });
  return client;
}
/** `mailbox mcp` on in-memory pipes, spoken to raw: what a test writes to its stdin, and each line it answers, parsed. */
async function rawStdio(token: string) {
  const { toServer, lines, arrived, close } = await stdioLines(server.url, token);
  closers.push(close);
  return { toServer, lines, arrived };
}
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> };
const json = (result: { content: Array<{ text: string }> }) => JSON.parse(result.content[0].text);

test('tools over stdio: send -> list -> mark_read through the HTTP API', async () => {
  const [a, b] = [await stdioClient(t['@a']), await stdioClient(t['@b'])];
  expect((await a.listTools()).tools).toHaveLength(13);
  const sent = json(await call(a, 'add_message', { to: 'AGENT:*', subject: 'standup', body: 'at 10', tags: ['daily'] }));
  expect(sent.recipients.sort()).toEqual(['@b', '@c']);
  const listed = json(await call(b, 'list_messages', { status: 'unread', tags: ['daily'] }));
  expect(listed.messages.map((m: any) => m.messageId)).toEqual([sent.messageId]);
  expect(json(await call(b, 'mark_read', { messageId: sent.messageId }))).toMatchObject({ status: 'read' });
  expect(json(await call(b, 'unread_count')).unreadCount).toBe(0);
  const asC = await server.call('GET', '/v1/inbox/count', { token: t['@c'] });
  expect(asC.body).toMatchObject({ unreadCount: 1, unread: 1 }); // B's read does not touch C's copy; unread: unreadCount's first name, kept
});

// `mailbox mcp` reads the replay from the HTTP answer's Idempotent-Replayed header: the result stays the original.
test('add_message replayed through the HTTP API: the original result, and the replay in _meta', async () => {
  const a = await stdioClient(t['@a']);
  const args = { to: '@b', subject: 'once', body: 'b', idempotencyKey: 'stdio-retry-1' };
  const first = (await a.callTool({ name: 'add_message', arguments: args })) as Record<string, unknown>;
  expect(first._meta).toBeUndefined();
  const before = await server.eventCount();
  const retry = (await a.callTool({ name: 'add_message', arguments: args })) as Record<string, unknown>;
  expect([retry.content, retry.structuredContent]).toEqual([first.content, first.structuredContent]);
  expect(retry._meta).toEqual({ 'agent-mailbox/replayed': true });
  expect(await server.eventCount()).toBe(before);
});

test("the server's envelope comes back as the tool error, and nothing is written", async () => {
  const a = await stdioClient(t['@a']);
  const before = await server.eventCount();
  const result = await call(a, 'add_message', { to: 'AGENT:gpt', subject: 's', body: 'b' });
  expect(result.isError).toBe(true);
  expect(json(result)).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to: 'AGENT:gpt', valid_shapes: expect.any(Array) });
  const forbidden = await call(await stdioClient(t['@c']), 'mark_read', {
    messageIds: '["2b1e6c1e-5a8e-4a47-9c39-0c2f1d0c9a11"]',
  });
  expect(json(forbidden).results[0].error.code).toBe('MESSAGE_NOT_FOUND');
  expect(await server.eventCount()).toBe(before);
});

test('a bad token surfaces as UNAUTHENTICATED tool errors', async () => {
  const client = await stdioClient('mbx_wrong');
  const result = await call(client, 'unread_count');
  expect(result.isError).toBe(true);
  expect(json(result).code).toBe('UNAUTHENTICATED');
});

test('no token: the server still answers initialize and tools/list, and every tool call returns the UNAUTHENTICATED envelope', async () => {
  const client = await stdioClient(undefined); // initialize answered
  const before = await server.eventCount();
  expect((await client.listTools()).tools).toHaveLength(13);
  for (const [name, args] of [
    ['unread_count', {}],
    ['add_message', { to: '@b', subject: 's', body: 'b' }],
    ['list_agents', {}],
  ] as const) {
    const result = await call(client, name, args);
    expect(result.isError).toBe(true);
    expect(json(result)).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringContaining('set MAILBOX_TOKEN') });
  }
  expect(await server.eventCount()).toBe(before);
});

// MAILBOX_URL without its scheme (127.0.0.1:7420) made `mailbox mcp` exit before `initialize`: the MCP client
// showed only "disconnected" (the reason went to a stderr its user never sees), unlike a missing token.
test.each(['127.0.0.1:7420', 'ftp://x'])(
  'MAILBOX_URL %j (not http or https): initialize and tools/list answer, every tool call returns the URL error',
  async (url) => {
    const client = await stdioClient(t['@a'], url); // initialize answered
    const before = await server.eventCount();
    expect((await client.listTools()).tools).toHaveLength(13);
    for (const [name, args] of [
      ['unread_count', {}],
      ['add_message', { to: '@b', subject: 's', body: 'b' }],
    ] as const) {
      const result = await call(client, name, args);
      expect(result.isError).toBe(true);
      expect(json(result)).toMatchObject({
        code: 'VALIDATION_FAILED',
        field: 'url',
        message: expect.stringContaining(`The mailbox URL '${url}' is not an http:// or https:// URL`),
      });
    }
    expect(await server.eventCount()).toBe(before);
  },
);

/** The same tool call over POST /mcp, as an SDK client there sees it. */
async function httpClient(token: string) {
  const client = new Client({ name: 'stdio-e2e-http', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  closers.push(() => client.close());
  return client;
}

// `mailbox mcp` forwards the list tools' arguments as a query string and task ids in the path: a null was left
// out (list_messages {status: null} listed everything), an object became its JSON text (tags: {} filtered on the
// tag "{}"), and a taskId of ".." climbed out of /v1/tasks/ (a NOT_FOUND for a route). POST /mcp refused each.
describe('arguments the HTTP API could not carry as given are refused as POST /mcp refuses them, and nothing is written', () => {
  test.each([
    ['list_messages', { status: null }, 'status'],
    ['list_messages', { limit: null }, 'limit'],
    ['list_messages', { tags: {} }, 'tags'],
    ['list_messages', { box: 'outbox', to: null }, 'to'],
    ['list_messages', { from: ['@a'] }, 'from'],
    ['list_tasks', { view: null }, 'view'],
    ['list_tasks', { state: null }, 'state'],
    ['get_delivery', { messageId: '2b1e6c1e-5a8e-4a47-9c39-0c2f1d0c9a11', limit: null }, 'limit'],
    ['get_delivery', { messageId: '..' }, 'messageId'],
    ['claim_task', { taskId: '..' }, 'taskId'],
    ['update_task', { taskId: '.', to: 'Working' }, 'taskId'],
  ] as const)('%s %j', async (name, args, field) => {
    const [viaStdio, viaHttp] = [await stdioClient(t['@c']), await httpClient(t['@c'])];
    const before = await server.eventCount();
    const overStdio = await call(viaStdio, name, args);
    const overHttp = await call(viaHttp, name, args);
    expect(overStdio.isError).toBe(true);
    expect(json(overStdio)).toMatchObject({ code: 'VALIDATION_FAILED', field });
    expect(json(overStdio)).toEqual(json(overHttp));
    expect(await server.eventCount()).toBe(before);
  });
});

// A tools/call sent without an id parses as a JSON-RPC notification: the SDK answered nothing and ran nothing, so
// the caller waited forever and its add_message was silently dropped. POST /mcp refuses it with 400; stdio has no
// status, so it answers the JSON-RPC Invalid Request error (id null) naming the missing id, and runs nothing.
test('a request without an id is answered with a JSON-RPC Invalid Request error, and the tool is not run', async () => {
  const { toServer, lines, arrived } = await rawStdio(t['@a']);
  const answerTo = async (id: number) => {
    while (!lines.some((line) => line.id === id)) await arrived();
    return lines.find((line) => line.id === id);
  };
  const write = (message: object) => toServer.write(`${JSON.stringify(message)}\n`);
  write({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await answerTo(1);
  write({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const before = await server.eventCount();
  write({
    jsonrpc: '2.0',
    method: 'tools/call',
    params: { name: 'add_message', arguments: { to: '@b', subject: 'lost?', body: 'sent without an id' } },
  });
  write({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'unread_count', arguments: {} } });
  await answerTo(2); // answered in order: the refusal, if any, was written before it
  expect(lines.filter((line) => line.id !== 1 && line.id !== 2)).toEqual([
    {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: expect.stringContaining("'tools/call' was sent without an id"),
        data: { code: 'VALIDATION_FAILED', field: 'id', method: 'tools/call' },
      },
    },
  ]);
  expect(lines.find((line) => line.id === null).error.message).toContain('Give it an id (e.g. "id": 1)');
  expect(await server.eventCount()).toBe(before);
});

// A line that is no JSON-RPC message was only reported to the SDK transport's onerror: no answer at all, so a client
// waited for one forever (not JSON, [] , a batch, a message without "jsonrpc" or with a null id). Each is answered
// with the JSON-RPC error JSON-RPC 2.0 names for it, whose data is the envelope, and nothing of it runs.
test('each line that is no JSON-RPC message is answered with a JSON-RPC error, and nothing of it runs', async () => {
  const { toServer, lines, arrived } = await rawStdio(t['@a']);
  const next = async () => {
    while (lines.length === 0) await arrived();
    return lines.shift();
  };
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  toServer.write(`${JSON.stringify(initialize)}\n`);
  expect(await next()).toMatchObject({ id: 1, result: { serverInfo: { name: 'agent-mailbox' } } });
  toServer.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const before = await server.eventCount();
  const send = (id: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'add_message', arguments: { to: '@b', subject: 'lost?', body: 'b' } },
  });
  const cases: Array<[string, { id: unknown; error: object }]> = [
    [
      '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"',
      { id: null, error: { code: -32700, message: expect.stringContaining('Parse error: the line is not valid JSON') } },
    ],
    [
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_message","arguments":{"to":"@b","subject":"s","body":"a","body":"b"}}}',
      {
        id: null,
        error: {
          code: -32700,
          message: expect.stringContaining("Parse error: 'params.arguments.body' appears twice"),
          data: expect.objectContaining({ field: 'params.arguments.body' }),
        },
      },
    ],
    [
      '[]',
      {
        id: null,
        error: {
          code: -32600,
          message: expect.stringMatching(/an empty batch \(\[\]\) holds no message, .*"tools\/list"}, on a line of its own\.$/),
        },
      },
    ],
    [
      JSON.stringify([send(4), { jsonrpc: '2.0', id: 5, method: 'ping' }]),
      {
        id: null,
        error: {
          code: -32600,
          message: expect.stringContaining('takes one JSON-RPC message per line, not a batch (a JSON array of 2)'),
          data: expect.objectContaining({ code: 'VALIDATION_FAILED', messages: 2 }),
        },
      },
    ],
    [
      JSON.stringify({ ...send(6), jsonrpc: undefined }),
      {
        id: 6,
        error: { code: -32600, message: 'Invalid Request: the message has no "jsonrpc": it must be "2.0". Nothing was done.' },
      },
    ],
    [
      JSON.stringify(send(null)),
      {
        id: null,
        error: {
          code: -32600,
          message: expect.stringContaining('the "id" of the message must be a string or an integer (got null)'),
        },
      },
    ],
  ];
  for (const [line, answer] of cases) {
    toServer.write(`${line}\n`);
    const got = await next();
    expect([line, got]).toEqual([line, { jsonrpc: '2.0', ...answer, error: expect.objectContaining(answer.error) }]);
    expect(got.error.data).toMatchObject({ error: 'Validation failed', code: 'VALIDATION_FAILED' });
  }
  // Still serving, and nothing was sent: a real call after them is answered, and @b's inbox is empty.
  toServer.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'unread_count', arguments: {} } })}\n`,
  );
  expect(await next()).toMatchObject({ id: 7, result: { structuredContent: { unreadCount: expect.any(Number) } } });
  expect(lines).toEqual([]);
  expect(await server.eventCount()).toBe(before);
  const inbox = await server.call('GET', '/v1/messages', { token: t['@b'] });
  expect(inbox.body.messages.filter((m: { subject: string }) => m.subject === 'lost?')).toEqual([]);
});

// tools/list with a cursor that is not a string was -32603 (an internal error) with zod's issue dump: the client's
// mistake is -32602 Invalid params naming the param and the valid form, as POST /mcp answers it.
test('params a method does not take are -32602 naming them, not an internal error', async () => {
  const a = await stdioClient(t['@a']);
  const refused = await a
    .request({ method: 'tools/list', params: { cursor: 5 } as never }, ListToolsResultSchema)
    .catch((error) => error);
  expect(refused).toMatchObject({
    code: -32602,
    message: expect.stringContaining("Invalid params for tools/list: 'params.cursor' expected string, received number."),
    data: expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'params.cursor', method: 'tools/list' }),
  });
  expect((await a.listTools()).tools).toHaveLength(13);
});

// MCP 2025-11-25: a server that declares no tasks capability MUST run a task-augmented tools/call normally, ignoring the
// task metadata. mailbox mcp answered -32603 "Server does not support task creation"; a task that is no task metadata
// got the SDK's schema dump.
test('tools/call with params.task {ttl} runs normally; a task that is no task metadata is -32602 naming it', async () => {
  const a = await stdioClient(t['@a']);
  const args = { to: '@b', subject: 'task-augmented over stdio', body: 'b' };
  const ran = await a.request(
    { method: 'tools/call', params: { name: 'add_message', arguments: args, task: { ttl: 1000 } } },
    CallToolResultSchema,
  );
  expect(ran.structuredContent).toMatchObject({ status: 'sent', recipients: ['@b'] });
  const read = await server.call('GET', `/v1/messages/${(ran.structuredContent as { messageId: string }).messageId}`, {
    token: t['@b'],
  });
  expect(read.body.subject).toBe('task-augmented over stdio');
  const before = await server.eventCount();
  const refused = await a
    .request(
      { method: 'tools/call', params: { name: 'add_message', arguments: args, task: 'soon' as never } },
      CallToolResultSchema,
    )
    .catch((error) => error);
  expect(refused).toMatchObject({
    code: -32602,
    message: expect.stringContaining('Invalid params for tools/call: \'params.task\' must be an object such as {"ttl"'),
    data: expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'params.task', method: 'tools/call' }),
  });
  expect(await server.eventCount()).toBe(before);
});

// A malformed _meta made the line "not a JSON-RPC 2.0 message" (-32600, field body), naming nothing: it is a request
// whose params are wrong, -32602 with its id, naming the param and the valid form, as on POST /mcp.
test('a tools/call with a malformed params._meta is -32602 naming it; nothing runs', async () => {
  const a = await stdioClient(t['@a']);
  const before = await server.eventCount();
  const args = { to: '@b', subject: 'never sent', body: 'b' };
  const refused = await a
    .request(
      { method: 'tools/call', params: { name: 'add_message', arguments: args, _meta: { progressToken: {} as never } } },
      CallToolResultSchema,
    )
    .catch((error) => error);
  expect(refused).toMatchObject({
    code: -32602,
    message: expect.stringContaining(
      "Invalid params for tools/call: 'params._meta.progressToken' must be a string or an integer",
    ),
    data: expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'params._meta.progressToken', method: 'tools/call' }),
  });
  expect(await server.eventCount()).toBe(before);
  expect((await a.listTools()).tools).toHaveLength(13); // still serving
});
