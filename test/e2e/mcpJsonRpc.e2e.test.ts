/**
 * The JSON-RPC layer of POST /mcp as a client that gets it wrong meets it: each malformed message is answered with
 * the JSON-RPC error JSON-RPC 2.0 names for it (its `data` the mailbox's error envelope, saying the valid form), with
 * HTTP 400, and runs nothing.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  await server.close();
});

/** A raw POST /mcp of `body` (a string is sent as is), as @a. */
const postMcp = (body: unknown) =>
  server.call('POST', '/mcp', {
    token: t['@a'],
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });

// JSON-RPC 2.0: "rpc call with an empty Array" is answered with one Invalid Request error (id null). POST /mcp
// answered 202 Accepted with no body, as if notifications had been accepted: the caller learnt nothing.
test('an empty batch [] is 400 with one JSON-RPC Invalid Request error saying what to send, and writes nothing', async () => {
  const before = await server.eventCount();
  const answer = await postMcp([]);
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: expect.stringContaining('Invalid Request: an empty batch ([]) holds no message'),
      data: expect.objectContaining({ error: 'Validation failed', code: 'VALIDATION_FAILED', field: 'body' }),
    },
  });
  expect(answer.body.error.message).toContain('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}');
  expect(answer.body.error.data.message).toBe(answer.body.error.message);
  // The server is fine after it: a real request is answered.
  const list = await postMcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  expect([list.status, list.body.id]).toEqual([200, 1]);
  expect(await server.eventCount()).toBe(before);
});

// JSON that is no JSON-RPC message is an Invalid Request (-32600) in JSON-RPC 2.0; the SDK's transport answered -32700
// "Parse error: Invalid JSON-RPC message", the code of JSON that could not be parsed, naming nothing that was wrong.
describe('valid JSON that is no JSON-RPC message', () => {
  const send = { name: 'add_message', arguments: { to: '@b', subject: 's', body: 'never sent' } };
  test.each([
    [{ hello: 'world' }, null, 'jsonrpc', 'the message has no "jsonrpc": it must be "2.0"'],
    [{ jsonrpc: '2.0', id: 7 }, 7, 'method', 'the message has no "method"'],
    [
      { jsonrpc: '1.0', id: 7, method: 'tools/call', params: send },
      7,
      'jsonrpc',
      'the message has "jsonrpc": "1.0": it must be "2.0"',
    ],
    [{ id: 7, method: 'tools/call', params: send }, 7, 'jsonrpc', 'the message has no "jsonrpc": it must be "2.0"'],
    [
      { jsonrpc: '2.0', id: 7, method: 5 },
      7,
      'method',
      'the "method" of the message must be a string naming the method, e.g. "tools/list"',
    ],
    [
      { jsonrpc: '2.0', id: null, method: 'tools/call', params: send },
      null,
      'id',
      'the "id" of the message must be a string or an integer (got null)',
    ],
    [
      { jsonrpc: '2.0', id: 1.5, method: 'tools/list' },
      null,
      'id',
      'the "id" of the message must be a string or an integer (got a number)',
    ],
    [
      { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: ['add_message'] },
      'x',
      'params',
      'the "params" of the message must be an object of named parameters (got an array)',
    ],
    [
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: send, from: '@c' },
      7,
      'from',
      'the message holds "from": a request holds only jsonrpc, id, method, params',
    ],
    [
      1,
      null,
      'body',
      'the message is a number, not a JSON-RPC message: an object such as {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    ],
    ['"tools/list"', null, 'body', 'the message is a string, not a JSON-RPC message'],
    [null, null, 'body', 'the message is null, not a JSON-RPC message'],
    // An empty POST (curl -X POST with no -d, a client that lost its body) was told "the message is a undefined".
    ['', null, 'body', 'the request has no body: send one JSON-RPC message, an object such as {"jsonrpc": "2.0", "id": 1'],
    [' \n', null, 'body', 'the request has no body: send one JSON-RPC message'],
  ])('%j is 400 -32600 Invalid Request (id %j) naming %s: %s; nothing is done', async (body, id, field, wrong) => {
    const before = await server.eventCount();
    const answer = await postMcp(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id,
      error: {
        code: -32600,
        message: expect.stringContaining(`Invalid Request: ${wrong}`),
        data: expect.objectContaining({ code: 'VALIDATION_FAILED', field }),
      },
    });
    expect(answer.body.error.message).toMatch(/Nothing was done\.$/);
    expect(answer.body.error.data.message).toBe(answer.body.error.message);
    expect(await server.eventCount()).toBe(before);
  });

  test('a batch with one such entry is refused whole, naming its index: its valid send is not run either', async () => {
    const before = await server.eventCount();
    const answer = await postMcp([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: send },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: 'all' },
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message:
          'Invalid Request: the "params" of batch entry [1] must be an object of named parameters (got a string), or left out. ' +
          'Nothing in the batch was done.',
        data: expect.objectContaining({ code: 'VALIDATION_FAILED', field: 'params', index: 1 }),
      },
    });
    expect(await server.eventCount()).toBe(before);
    const inbox = await server.call('GET', '/v1/messages', { token: t['@b'] });
    expect(inbox.body.messages).toEqual([]);
  });
});

// A body that is not JSON was answered with the API's envelope alone, not a JSON-RPC message: JSON-RPC 2.0 answers it
// with a Parse error (-32700, id null), which is what an MCP client reads. The envelope is its data.
describe('a body that cannot be read as JSON', () => {
  test.each([
    ['{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', 'The request body is not valid JSON'],
    ['{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "id": 2}', "'id' appears twice in one JSON object"],
  ])('%s is 400 with a JSON-RPC Parse error (-32700) whose data is the envelope; nothing is done', async (body, says) => {
    const before = await server.eventCount();
    const answer = await postMcp(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32700,
        message: expect.stringContaining(`Parse error: ${says}`),
        data: expect.objectContaining({
          error: expect.any(String),
          code: 'VALIDATION_FAILED',
          message: expect.stringContaining(says),
        }),
      },
    });
    expect(answer.body.error.message).toBe(`Parse error: ${answer.body.error.data.message}`);
    expect(await server.eventCount()).toBe(before);
  });

  test('so is a body that is not UTF-8', async () => {
    const answer = await server.call('POST', '/mcp', {
      token: t['@a'],
      rawBody: Buffer.from('{"jsonrpc": "2.0", "id": 1, "method": "caf\xe9"}', 'latin1'),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringContaining('Parse error: The request body is not valid UTF-8') },
    });
  });

  test('a missing token is still the 401 that says to configure one, whatever the body', async () => {
    const answer = await server.call('POST', '/mcp', {
      rawBody: '{not json',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    expect([answer.status, answer.body.code]).toEqual([401, 'UNAUTHENTICATED']);
  });
});

// initialize, ping and tools/list with params their schema refuses were answered -32603 (an internal error: the server
// blaming itself) with zod's issue dump as the message. They are -32602 Invalid params naming each wrong param and the
// valid form; the answer keeps the request's id.
describe('params the method does not take', () => {
  test.each([
    [
      'initialize',
      undefined,
      "Invalid params for initialize: 'params' expected object, received undefined. Send params such as " +
        '{"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "my-client", "version": "1.0.0"}}.',
      'params',
    ],
    [
      'initialize',
      { protocolVersion: 20250618, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      "Invalid params for initialize: 'params.protocolVersion' expected string, received number.",
      'params.protocolVersion',
    ],
    [
      'tools/list',
      { cursor: 5 },
      "Invalid params for tools/list: 'params.cursor' expected string, received number.",
      'params.cursor',
    ],
  ])('%s %j: -32602 Invalid params, "%s"', async (method, params, says, field) => {
    const before = await server.eventCount();
    const answer = await postMcp({ jsonrpc: '2.0', id: 'req-9', method, ...(params === undefined ? {} : { params }) });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id: 'req-9',
      error: {
        code: -32602,
        message: expect.stringContaining(says),
        data: expect.objectContaining({ code: 'VALIDATION_FAILED', field, method }),
      },
    });
    expect(answer.body.error.message).not.toContain('"code": "invalid_type"'); // no zod dump
    expect(answer.body.error.data.message).toBe(answer.body.error.message);
    expect(await server.eventCount()).toBe(before);
  });

  test('valid params are served as before', async () => {
    const answer = await postMcp({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
    expect([answer.status, answer.body.id, answer.body.result.tools.length]).toEqual([200, 3, 13]);
  });
});

// MCP 2025-11-25: a receiver that does not declare the tasks capability for a request type MUST process such requests
// normally, ignoring task-augmentation metadata. tools/call with params.task {ttl} was answered -32603 "Server does not
// support task creation", an internal error blaming the server; a task that is no task metadata got the SDK's schema
// dump as -32602 "Invalid tools/call request: [...]".
describe('tools/call with MCP task augmentation (params.task), which this server does not offer', () => {
  const call = (id: number, extra: object, subject = 'task-augmented') => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'add_message', arguments: { to: '@b', subject, body: 'b' }, ...extra },
  });

  test('valid task metadata {ttl: 1000} is ignored: the tool runs and its result is answered at once', async () => {
    const answer = await postMcp(call(11, { task: { ttl: 1000 } }));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: 11, result: { structuredContent: { status: 'sent', to: '@b' } } });
    expect(answer.body.result.task).toBeUndefined(); // no CreateTaskResult: the call was not made a task
    const { messageId } = answer.body.result.structuredContent;
    const read = await server.call('GET', `/v1/messages/${messageId}`, { token: t['@b'] });
    expect([read.status, read.body.subject]).toEqual([200, 'task-augmented']);
    const stranger = await server.call('GET', `/v1/messages/${messageId}`, { token: t['@c'] });
    expect(stranger.status).toBe(404);
  });

  test.each([
    [{ ttl: '1000' }, "'params.task.ttl' must be a number of milliseconds (got a string)", 'params.task.ttl'],
    ['soon', '\'params.task\' must be an object such as {"ttl": <milliseconds>} (got a string)', 'params.task'],
    [
      { state: 'submitted' },
      "'params.task' holds 'state': MCP task metadata is {\"ttl\": <milliseconds>} alone. A mailbox task",
      'params.task',
    ],
  ])('task %j is -32602 Invalid params: "%s"; nothing is sent', async (task, says, field) => {
    const before = await server.eventCount();
    const answer = await postMcp(call(12, { task }));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id: 12,
      error: {
        code: -32602,
        message: expect.stringContaining(`Invalid params for tools/call: ${says}`),
        data: expect.objectContaining({ code: 'VALIDATION_FAILED', field, method: 'tools/call' }),
      },
    });
    expect(answer.body.error.message).toContain('This server runs tools/call without task augmentation');
    expect(answer.body.error.message).not.toContain('"code": "invalid_type"'); // no zod dump
    expect(answer.body.error.data.message).toBe(answer.body.error.message);
    expect(await server.eventCount()).toBe(before);
  });
});

// A malformed `_meta` (MCP's request metadata) made the request "not a JSON-RPC 2.0 message" (-32600, field body),
// naming nothing. It is a request whose params are wrong: -32602 with its id, naming the param and the valid form.
describe('a malformed params._meta', () => {
  test.each([
    ['tools/call', 'x', 'params._meta', '\'params._meta\' must be an object such as {"progressToken"'],
    [
      'tools/call',
      { progressToken: {} },
      'params._meta.progressToken',
      "'params._meta.progressToken' must be a string or an integer",
    ],
    [
      'tools/call',
      { 'io.modelcontextprotocol/related-task': { taskId: 5 } },
      'params._meta.io.modelcontextprotocol/related-task',
      '\'params._meta.io.modelcontextprotocol/related-task\' must be an object {"taskId": "<a task id>"}',
    ],
    [
      'tools/list',
      { progressToken: 1.5 },
      'params._meta.progressToken',
      "'params._meta.progressToken' must be a string or an integer",
    ],
  ])('%s with _meta %j: -32602 naming %s; nothing is done', async (method, meta, field, says) => {
    const before = await server.eventCount();
    const params =
      method === 'tools/call'
        ? { name: 'add_message', arguments: { to: '@b', subject: 's', body: 'never sent' }, _meta: meta }
        : { _meta: meta };
    const answer = await postMcp({ jsonrpc: '2.0', id: 'm-1', method, params });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id: 'm-1',
      error: {
        code: -32602,
        message: expect.stringContaining(`Invalid params for ${method}: ${says}`),
        data: expect.objectContaining({ code: 'VALIDATION_FAILED', field, method }),
      },
    });
    expect(answer.body.error.message).toMatch(/Nothing was done\.$/);
    expect(await server.eventCount()).toBe(before);
  });

  test('a valid _meta is served as before', async () => {
    const answer = await postMcp({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { progressToken: 'p-1' } } });
    expect([answer.status, answer.body.id, answer.body.result.tools.length]).toEqual([200, 4, 13]);
  });
});

// MCP makes a tools/call's arguments optional. add_message called without them was told "add_message: the input is
// required: an object (a JSON object of fields)", naming none of the fields it needs; every other tool named its own.
test('a tools/call without arguments is a call with none: add_message names the fields it requires; nothing is written', async () => {
  const before = await server.eventCount();
  const answers = [];
  for (const params of [{ name: 'add_message' }, { name: 'add_message', arguments: {} }]) {
    const answer = await postMcp({ jsonrpc: '2.0', id: 9, method: 'tools/call', params });
    expect(answer.status).toBe(200);
    answers.push(answer.body.result);
  }
  expect(answers[0]).toEqual(answers[1]);
  expect(answers[0]).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_FAILED', field: 'to' } });
  expect(answers[0].structuredContent.message).toMatch(
    /^add_message: 'to' is required: .*; 'subject' is required: text \(a JSON string\); 'body' is required: text \(a JSON string\)$/,
  );
  const counted = await postMcp({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'unread_count' } });
  expect(counted.body.result.isError).toBeFalsy();
  expect(await server.eventCount()).toBe(before);
});
