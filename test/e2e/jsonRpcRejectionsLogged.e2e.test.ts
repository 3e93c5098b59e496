/**
 * A JSON-RPC message POST /mcp refused before any tool ran (params not an object, no tool named, arguments not an
 * object, a task that is no task metadata, a request without an id, an initialize with wrong params, an empty batch, a
 * method that does not exist: the SDK's bare -32601 "Method not found", now naming the method, those there are, and the
 * likeliest meant)
 * was answered and recorded nowhere; over `mailbox mcp` (stdio) neither were those nor a call of a tool that does not
 * exist, refused in the stdio process itself. Each is now in the rejection log (GET /v1/audit/rejections) once, by the
 * tool or method it was for, with the agent its token names: `mailbox mcp` sends what it refused on to POST /mcp, and the
 * server refuses and records it. No event is written for any of them.
 */
import { mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('jsonrpc-rejections');

/** Every record the log keeps, newest first. */
async function rejections(): Promise<Array<Record<string, unknown>>> {
  const { status, body } = await mcp.server.call('GET', '/v1/audit/rejections?limit=1000', { token: mcp.server.adminToken });
  expect(status).toBe(200);
  return body.rejections;
}

const call = (id: unknown, params: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

/** [what, the message (a string: the text as sent), the record's command, code, field]. */
const refusals: Array<[string, object | string, string, string, string | undefined]> = [
  ['a tool that does not exist', call(1, { name: 'add_mesage', arguments: { to: '@a' } }), 'add_mesage', 'NOT_FOUND', undefined],
  ['params that are not an object', call(2, ['add_message']), 'tools/call', 'VALIDATION_FAILED', 'params'],
  ['no tool named', call(3, { arguments: { to: '@a' } }), 'tools/call', 'VALIDATION_FAILED', 'name'],
  [
    'arguments that are not an object',
    call(4, { name: 'add_message', arguments: ['@a'] }),
    'send',
    'VALIDATION_FAILED',
    'arguments',
  ],
  [
    'a task that is no task metadata',
    call(5, { name: 'list_messages', task: 'urgent' }),
    'list_messages',
    'VALIDATION_FAILED',
    'params.task',
  ],
  [
    "arguments under another key than 'arguments'",
    call(10, { name: 'add_message', input: { to: '@a', subject: 's', body: 'b' } }),
    'send',
    'UNKNOWN_FIELD',
    'params.input',
  ],
  [
    'initialize with wrong params',
    { jsonrpc: '2.0', id: 6, method: 'initialize', params: { protocolVersion: 5 } },
    'initialize',
    'VALIDATION_FAILED',
    'params.protocolVersion',
  ],
  [
    'a request without an id',
    { jsonrpc: '2.0', method: 'tools/call', params: { name: 'add_message', arguments: {} } },
    'send',
    'VALIDATION_FAILED',
    'id',
  ],
  [
    'a message without "jsonrpc"',
    { id: 7, method: 'tools/call', params: { name: 'unread_count' } },
    'unread_count',
    'VALIDATION_FAILED',
    'jsonrpc',
  ],
  ['an empty batch', '[]', 'POST /mcp', 'VALIDATION_FAILED', 'body'],
  [
    'a method that does not exist',
    { jsonrpc: '2.0', id: 8, method: 'tools/cal', params: {} },
    'tools/cal',
    'NOT_FOUND',
    undefined,
  ],
];

const idOf = (message: object | string) => (typeof message === 'string' || !('id' in message) ? null : message.id);

describe.each(['http', 'stdio'] as const)('over %s', (transport) => {
  test.each(refusals)('%s is recorded once, by what it was for, with the agent', async (_what, message, command, code, field) => {
    const identity = transport === 'http' ? '@a' : '@b';
    const token = mcp.t[identity];
    const before = [await rejections(), await mcp.server.eventCount()] as const;
    let answer: any;
    if (transport === 'http') {
      const text = typeof message === 'string' ? message : JSON.stringify(message);
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      answer = (await mcp.server.call('POST', '/mcp', { token, rawBody: text, headers })).body;
    } else {
      const stdio = await mcp.clients.rawStdio(token);
      stdio.write(message);
      answer = await stdio.answerTo(idOf(message));
    }
    // The answer is the positive signal: each refusal is recorded before it is answered.
    const told = answer.result?.structuredContent ?? answer.error?.data ?? answer;
    expect(told).toMatchObject({ code });
    if (command === 'tools/cal') expect(answer.error).toMatchObject({ code: -32601, data: { suggestions: ['tools/call'] } });
    const after = await rejections();
    expect(after.length).toBe(before[0].length + 1);
    expect(after[0]).toMatchObject({ agent: identity, role: 'agent', command, surface: 'mcp', code });
    expect(after[0].field).toBe(field);
    // What was told is what was recorded; over stdio, a request without an id and an empty batch are worded for lines
    // (the server recorded them as POST /mcp words them).
    if (transport === 'http' || !['id', 'body'].includes(field as string)) expect(after[0].message).toBe(told.message);
    expect(JSON.stringify(after[0])).not.toContain(token);
    expect(await mcp.server.eventCount()).toBe(before[1]);
  });
});

test('over stdio, a line that is not JSON is recorded once as POST /mcp refused it, with the agent', async () => {
  const stdio = await mcp.clients.rawStdio(mcp.t['@c']);
  const before = [await rejections(), await mcp.server.eventCount()] as const;
  stdio.write('{"jsonrpc": "2.0", "id": 9, "method": "tools/list"');
  expect((await stdio.answerTo(null)).error).toMatchObject({ code: -32700, data: { code: 'VALIDATION_FAILED' } });
  const after = await rejections();
  expect(after.length).toBe(before[0].length + 1);
  expect(after[0]).toMatchObject({ agent: '@c', command: 'POST /mcp', code: 'VALIDATION_FAILED', field: 'body' });
  expect(await mcp.server.eventCount()).toBe(before[1]);
});

test('over stdio, a refusal the server answered (a claim of no task) is recorded once, by the server', async () => {
  const stdio = await mcp.clients.rawStdio(mcp.t['@c']);
  const before = [await rejections(), await mcp.server.eventCount()] as const;
  stdio.write(call(10, { name: 'claim_task', arguments: { taskId: '0a8d3f4e-1111-4c1e-9a55-000000000001' } }));
  const { result } = await stdio.answerTo(10);
  expect(result.isError).toBe(true);
  const after = await rejections();
  expect(after.length).toBe(before[0].length + 1);
  expect(after[0]).toMatchObject({ agent: '@c', command: 'claim_task', code: result.structuredContent.code });
  expect(await mcp.server.eventCount()).toBe(before[1]);
});

test('a stdio refusal with a token the server does not know is recorded without an agent, never with the token', async () => {
  const forged = 'mbx_not-a-token-0123456789abcdef';
  const stdio = await mcp.clients.rawStdio(forged);
  const before = await rejections();
  stdio.write(call(11, { name: 'add_mesage' }));
  expect((await stdio.answerTo(11)).result.structuredContent).toMatchObject({ code: 'NOT_FOUND', suggestions: ['add_message'] });
  const after = await rejections();
  expect(after.length).toBe(before.length + 1);
  expect(after[0]).toMatchObject({ agent: null, code: 'UNAUTHENTICATED' });
  expect(JSON.stringify(after[0])).not.toContain(forged);
});

// `mailbox mcp` tells the server what it refused itself as a refusal report. Sent as an ordinary request, a message
// that this server accepts (a stdio of another version, refusing by other rules) would have run: a send written after
// the agent was told it was refused. A report is checked as any message and never run.
describe('a refusal report (the header mailbox mcp sends)', () => {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mailbox-refusal-report': '1',
  };
  const send = call(12, { name: 'add_message', arguments: { to: '@c', subject: 'reported', body: 'never sent' } });

  test('of a message this server accepts: FORBIDDEN, nothing run, nothing recorded; without the header it runs', async () => {
    const before = [await rejections(), await mcp.server.eventCount()] as const;
    const token = mcp.t['@a'];
    const reported = await mcp.server.call('POST', '/mcp', { token, rawBody: JSON.stringify(send), headers });
    expect(reported.body.result).toMatchObject({ isError: true, structuredContent: { code: 'FORBIDDEN', error: 'Not run' } });
    expect(await mcp.server.eventCount()).toBe(before[1]);
    expect((await rejections()).length).toBe(before[0].length);
    const { 'mailbox-refusal-report': _report, ...plain } = headers;
    const ran = await mcp.server.call('POST', '/mcp', { token, rawBody: JSON.stringify(send), headers: plain });
    expect(ran.body.result.isError).toBeFalsy();
    expect(await mcp.server.eventCount()).toBeGreaterThan(before[1]);
  });

  test('of a message this server refuses: recorded once, by what it was for, with the agent', async () => {
    const before = await rejections();
    const body = JSON.stringify(call(13, { name: 'add_mesage', arguments: { to: '@c' } }));
    const reported = await mcp.server.call('POST', '/mcp', { token: mcp.t['@b'], rawBody: body, headers });
    expect(reported.body.result.structuredContent).toMatchObject({ code: 'NOT_FOUND' });
    const after = await rejections();
    expect(after.length).toBe(before.length + 1);
    expect(after[0]).toMatchObject({ agent: '@b', command: 'add_mesage', surface: 'mcp', code: 'NOT_FOUND' });
  });
});
