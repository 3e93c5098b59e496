/**
 * An agent over its rate limit, as an MCP client meets it. Over streamable HTTP a refused tools/call is the call's
 * answer: a tool result with isError and the RATE_LIMITED envelope (retryAfterSeconds, "retry after N s"), which a
 * model can act on, where a bare 429 reached the SDK client as a transport error ("Streamable HTTP error: Error
 * POSTing to endpoint") that hosts treat as a broken connection. Everything else (tools/list, initialize, a batch) is
 * still 429 with Retry-After. Over stdio (`mailbox mcp`) the API's 429 comes back as the same tool error. Either way
 * nothing is written, and the refusal is counted and recorded as every rate-limited request is.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'rate-limit-e2e');

beforeAll(async () => {
  // One request per 100 s (the limiter reads the wall clock): once the burst is spent, no whole request refills within
  // the file, however slow the machine (at 0.5/s a loaded machine refilled one between a refusal and the next request).
  server = await startTestServer({ rateLimitPerSecond: 0.01, rateLimitBurst: 8 });
  t = await server.register(['@a', '@b', '@c', '@d']);
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

/** Sends until the limit refuses one (the burst is 8): the refused call's result, and how many were sent. */
async function sendUntilRefused(client: Client, to: string): Promise<{ refused: ToolResult; sent: number; before: number }> {
  let sent = 0;
  for (let i = 0; i < 12; i += 1) {
    const before = await server.eventCount();
    const result = (await client.callTool({ name: 'add_message', arguments: { to, subject: `m${i}`, body: 'x' } })) as ToolResult;
    if (result.isError) return { refused: result, sent, before };
    sent += 1;
  }
  throw new Error('the rate limit never refused a call');
}

const rawPost = (token: string, message: object) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(message),
  });

test('over streamable HTTP a rate-limited tools/call is a tool error saying when to retry; nothing is written', async () => {
  const a = await clients.http(t['@a']);
  const { refused, sent, before } = await sendUntilRefused(a, '@b');
  expect(sent).toBeGreaterThan(0);
  expect(refused.structuredContent).toMatchObject({ code: 'RATE_LIMITED', limitPerSecond: 0.01, burst: 8 });
  const { retryAfterSeconds } = refused.structuredContent;
  // what is left of a token, refilled at 0.01/s, rounded up
  expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(retryAfterSeconds).toBeLessThanOrEqual(100);
  expect(JSON.parse(refused.content[0].text)).toEqual(refused.structuredContent);
  expect(refused.structuredContent.message).toContain(`retry after ${retryAfterSeconds} s. The request was not applied.`);
  expect(await server.eventCount()).toBe(before);

  // On the wire: the JSON-RPC request is answered (200, its id), and Retry-After still says when to come back.
  const before2 = await server.eventCount();
  const wire = await rawPost(t['@a'], {
    jsonrpc: '2.0',
    id: 41,
    method: 'tools/call',
    params: { name: 'add_message', arguments: { to: '@b', subject: 's', body: 'x' } },
  });
  const answer = (await wire.json()) as any;
  expect(wire.status).toBe(200);
  expect(answer).toMatchObject({
    jsonrpc: '2.0',
    id: 41,
    result: { isError: true, structuredContent: { code: 'RATE_LIMITED' } },
  });
  expect(wire.headers.get('retry-after')).toBe(String(answer.result.structuredContent.retryAfterSeconds));
  expect(await server.eventCount()).toBe(before2);

  // The refusals are counted and recorded as any rate-limited request is.
  const { body } = await server.call('GET', '/v1/audit/rejections', { token: server.adminToken });
  expect(
    body.rejections.filter((r: any) => r.code === 'RATE_LIMITED' && r.command === 'POST /mcp').length,
  ).toBeGreaterThanOrEqual(2);
});

test('what is no tool call (tools/list, a batch) is still 429 with Retry-After: the client answers to it; nothing is written', async () => {
  const c = await clients.http(t['@c']);
  await sendUntilRefused(c, '@d');
  const before = await server.eventCount();
  const list = await rawPost(t['@c'], { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const listed = (await list.json()) as any;
  expect(listed).toMatchObject({ code: 'RATE_LIMITED' });
  expect([list.status, list.headers.get('retry-after')]).toEqual([429, String(listed.retryAfterSeconds)]);
  const batch = await rawPost(t['@c'], [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'unread_count', arguments: {} } },
  ]);
  expect(batch.status).toBe(429);
  const garbled = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t['@c']}`, 'content-type': 'application/json', accept: 'application/json' },
    body: '{"jsonrpc": "2.0", "id": 1, "method": ',
  });
  // Its body is read now (to see whether it is a tool call): one that is no JSON is told so, as it must be fixed anyway.
  expect(garbled.status).toBe(400);
  expect(await garbled.json()).toMatchObject({ id: null, error: { code: -32700, data: { code: 'VALIDATION_FAILED' } } });
  await expect(c.listTools()).rejects.toMatchObject({ code: 429 });
  expect(await server.eventCount()).toBe(before);
});

// The refusal is held until the body is read; it still comes before the request's other refusals (here: a query
// string on a write), as it did when it was answered before the body.
test('over the limit, a tools/call that is also refused for its query string is told the rate limit first', async () => {
  const d = await clients.http(t['@d']);
  await sendUntilRefused(d, '@a');
  const before = await server.eventCount();
  const response = await fetch(`${server.url}/mcp?verbose=1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t['@d']}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'unread_count', arguments: {} } }),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ id: 5, result: { isError: true, structuredContent: { code: 'RATE_LIMITED' } } });
  expect(await server.eventCount()).toBe(before);
});

test('over stdio (mailbox mcp) the API answer 429 is the same tool error; nothing is written', async () => {
  const b = await clients.stdio(t['@b']);
  const { refused, before } = await sendUntilRefused(b, '@a');
  expect(await server.eventCount()).toBe(before);
  expect(refused.structuredContent).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
  expect(refused.structuredContent.message).toContain('The request was not applied.');
});
