/**
 * POST /mcp runs under the request deadline like every other route: a tool
 * call still running at MAILBOX_REQUEST_TIMEOUT_MS answers then, as a tool
 * error carrying the UNAVAILABLE envelope (which says a send may still apply
 * and how to retry it safely), and the server stays healthy afterwards.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { holdApplies } from '../support/heldApplies';
import { startTestServer, type TestServer } from '../support/httpServer';

// Long enough for the MCP handshake and the retry on a loaded machine (headers and bodies have the deadline too);
// the stalled send waits AWAIT_MS, far beyond it.
const TIMEOUT_MS = 1000;
const AWAIT_MS = 15_000;
let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ requestTimeoutMs: TIMEOUT_MS, awaitProjectionMs: AWAIT_MS });
  t = await server.register(['@x', '@y', '@z']);
});
afterAll(() => server.close());

test('a tool call outliving the deadline answers at the deadline with UNAVAILABLE; the same key then returns the send once', async () => {
  const client = new Client({ name: 'deadline-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@x']}` } },
    }),
  );
  try {
    const held = holdApplies(server.mailbox.projections); // views stall: a send waits AWAIT_MS (a stopped runner settles at once)
    const args = { to: '@y', subject: 'slow', body: 'x', idempotencyKey: 'mcp-slow-1' };
    const before = await server.eventCount();
    const started = Date.now();
    const result = (await client.callTool({ name: 'add_message', arguments: args })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    const elapsed = Date.now() - started;
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0].text)).toMatchObject({ code: 'UNAVAILABLE', timeoutMs: TIMEOUT_MS });
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 5000); // not the AWAIT_MS the send waits for the views
    expect(await server.eventCount()).toBe(before + 1); // applied, as the message warns
    held.release();
    const retried = (await client.callTool({ name: 'add_message', arguments: args })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(retried.isError).toBeFalsy();
    expect(await server.eventCount()).toBe(before + 1);
    const inbox = await server.call('GET', '/v1/messages', { token: t['@y'] });
    expect(inbox.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([
      JSON.parse(retried.content[0].text).messageId,
    ]);
  } finally {
    await client.close();
  }
});

test('past the deadline a tool call (200) and a batch (503) say when to retry: Retry-After, and retryAfterSeconds alike', async () => {
  const held = holdApplies(server.mailbox.projections); // views stall: a send waits AWAIT_MS (a stopped runner settles at once)
  try {
    const send = (id: number, key: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'add_message', arguments: { to: '@z', subject: 'slow', body: 'x', idempotencyKey: key } },
    });
    const headers = { accept: 'application/json, text/event-stream' };
    const call = await server.call('POST', '/mcp', { token: t['@x'], headers, body: send(1, 'mcp-slow-call') });
    const envelope = call.body.result.structuredContent;
    expect({ status: call.status, code: envelope.code, retryAfter: call.headers.get('retry-after') }).toEqual({
      status: 200,
      code: 'UNAVAILABLE',
      retryAfter: String(envelope.retryAfterSeconds),
    });
    expect(envelope.retryAfterSeconds).toBeGreaterThan(0);
    const batch = await server.call('POST', '/mcp', { token: t['@y'], headers, body: [send(2, 'mcp-slow-batch')] });
    expect({ status: batch.status, code: batch.body.code, retryAfter: batch.headers.get('retry-after') }).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      retryAfter: String(batch.body.retryAfterSeconds),
    });
    expect(batch.body.retryAfterSeconds).toBeGreaterThan(0);
  } finally {
    held.release();
  }
});
