/**
 * A POST /mcp over the request limit, as an MCP client meets it. A tools/call too large to be read is answered as
 * that call: a tool error whose PAYLOAD_TOO_LARGE envelope gives the limit and the request's size (and, for
 * add_message, the body limit), which the model reads and can act on; a bare 413 reached the SDK client as a transport
 * error ("Streamable HTTP error: Error POSTing to endpoint") saying neither the size nor what to send instead. Anything
 * else over the limit (tools/list, a batch, what is no JSON) is a 413 whose body is a JSON-RPC error with the limit and
 * the size. The limit holds: nothing over it is parsed or applied, no event is written, the refusal is recorded.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

const LIMIT = 8192;
let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'oversized-e2e');

beforeAll(async () => {
  server = await startTestServer({ maxBodyBytes: 1024, maxRequestBytes: LIMIT });
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

const post = (body: string | ReadableStream, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t['@a']}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
    // a ReadableStream body is sent chunked (no Content-Length)
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);

/** An add_message with a 20,000-byte body (over the request limit): the tool error's envelope, its size checked. */
async function sendTooLarge(client: Client) {
  const refused = (await client.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 'the log', body: 'x'.repeat(20_000) },
  })) as ToolResult;
  expect(refused.isError).toBe(true);
  const envelope = refused.structuredContent;
  expect(envelope).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', limit: LIMIT });
  expect(envelope.bytes).toBeGreaterThan(20_000);
  expect(JSON.parse(refused.content[0].text)).toEqual(envelope);
  return envelope;
}

test('an add_message too large to be read is its tool error naming the limit, the size and the body limit; nothing is written', async () => {
  const a = await clients.http(t['@a']);
  const before = await server.eventCount();
  const envelope = await sendTooLarge(a);
  expect(envelope.tool).toBe('add_message');
  expect(envelope.message).toContain(
    `This add_message call is ${envelope.bytes} bytes, ${envelope.bytes - LIMIT} over this server's limit of ${LIMIT} bytes for one request, so it was not read and nothing was done.`,
  );
  expect(envelope.message).toContain("A message's body is at most 1024 bytes");
  // the client still works: the next call, within the limit, is sent (the positive signal before counting events)
  const sent = (await a.callTool({ name: 'add_message', arguments: { to: '@b', subject: 's', body: 'short' } })) as ToolResult;
  expect(sent.isError).toBeFalsy();
  expect(await server.eventCount()).toBe(before + 1); // the short one's
  const { body } = await server.call('GET', '/v1/messages', { token: t['@b'] });
  expect(body.messages.map((m: any) => m.subject)).toEqual(['s']);
  const { body: rejections } = await server.call('GET', '/v1/audit/rejections', { token: server.adminToken });
  expect(rejections.rejections.some((r: any) => r.code === 'PAYLOAD_TOO_LARGE' && r.command === 'POST /mcp')).toBe(true);
});

test('on the wire: the call is found whatever the order of its keys and the chunking, and a nested id is not its id', async () => {
  const before = await server.eventCount();
  const call = `{"jsonrpc": "2.0", "id": "call-9", "method": "tools/call", "params": {"name": "update_task", "arguments": {"taskId": "x", "id": 5, "note": "${'y'.repeat(LIMIT)}"}}}`;
  const bytes = Buffer.from(call);
  const chunked = new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 1000) controller.enqueue(bytes.subarray(i, i + 1000));
      controller.close();
    },
  });
  for (const body of [call, chunked]) {
    const response = await post(body);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as any;
    expect(answer).toMatchObject({
      jsonrpc: '2.0',
      id: 'call-9',
      result: {
        isError: true,
        structuredContent: { code: 'PAYLOAD_TOO_LARGE', limit: LIMIT, bytes: bytes.length, tool: 'update_task' },
      },
    });
    expect(answer.result.structuredContent.message).toContain('Send smaller arguments.');
  }
  expect(await server.eventCount()).toBe(before);
});

test('what is no single tool call is a 413 with a JSON-RPC error naming the limit and the size; nothing is written', async () => {
  const before = await server.eventCount();
  const pad = 'z'.repeat(LIMIT);
  const list = `{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {"pad": "${pad}"}}}`;
  const batch = `[{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_message", "arguments": {"body": "${pad}"}}}]`;
  const garbage = `not json ${pad}`;
  const cases: Array<[string, unknown, string]> = [
    [list, 4, `This JSON-RPC request (tools/list) is ${Buffer.byteLength(list)} bytes, ${Buffer.byteLength(list) - LIMIT} over`],
    [batch, null, `This JSON-RPC batch is ${Buffer.byteLength(batch)} bytes`],
    [garbage, null, `This JSON-RPC request is ${Buffer.byteLength(garbage)} bytes`],
  ];
  for (const [body, id, says] of cases) {
    const response = await post(body);
    expect(response.status).toBe(413);
    const answer = (await response.json()) as any;
    expect(answer).toMatchObject({
      jsonrpc: '2.0',
      id,
      error: { code: -32600, data: { code: 'PAYLOAD_TOO_LARGE', limit: LIMIT, bytes: Buffer.byteLength(body) } },
    });
    expect(answer.error.message).toContain(says);
    expect(answer.error.message).toContain(`limit of ${LIMIT} bytes for one request, so it was not read and nothing was done.`);
  }
  expect(await server.eventCount()).toBe(before);
});

test('over stdio (mailbox mcp) an add_message too large to be sent is its tool error with the size, from the API; nothing is written', async () => {
  const c = await clients.stdio(t['@c']);
  const before = await server.eventCount();
  const envelope = await sendTooLarge(c);
  expect(envelope.message).toContain(
    `The request is ${envelope.bytes} bytes, ${envelope.bytes - LIMIT} over this server's limit of ${LIMIT} bytes`,
  );
  expect(await server.eventCount()).toBe(before);
});
