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
