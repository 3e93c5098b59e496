/**
 * A JSON object that names a key twice is refused, not guessed: JSON.parse keeps the last value and drops the
 * others, so `{"body": "a", "body": "b"}` used to deliver "b" and lose "a" without a word. Over HTTP (the body,
 * a field sent as a JSON-encoded string, an MCP request) the answer is 400 VALIDATION_FAILED naming the key and
 * where it is, with zero events written; three agents, so that nothing reaches either recipient.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

async function refused(path: string, rawBody: string, token = t['@a']) {
  const before = await server.eventCount();
  const response = await server.call('POST', path, { token, rawBody, headers: { 'content-type': 'application/json' } });
  // POST /mcp answers in JSON-RPC's shape: a Parse error whose data is the envelope.
  const envelope = path.startsWith('/mcp') ? response.body.error.data : response.body;
  if (path.startsWith('/mcp')) expect([response.body.error.code, response.body.id]).toEqual([-32700, null]);
  expect([response.status, envelope.code]).toEqual([400, 'VALIDATION_FAILED']);
  expect(await server.eventCount()).toBe(before);
  return envelope;
}

test('a send naming "body" twice: 400 naming the key, nothing sent, both recipients see nothing', async () => {
  const body = await refused('/v1/messages', '{"to":["@b","@c"],"subject":"s","body":"first","body":"second"}');
  expect(body.field).toBe('body');
  expect(body.message).toContain("'body' appears twice in one JSON object; send the key 'body' once");
  for (const recipient of ['@b', '@c']) {
    const inbox = await server.call('GET', '/v1/messages', { token: t[recipient] });
    expect(inbox.body.messages).toEqual([]);
  }
});

test('the same key spelled with an escape is the same key', async () => {
  const body = await refused('/v1/messages', '{"to":"@b","subject":"s","body":"a","b\\u006fdy":"b"}');
  expect(body.field).toBe('body');
});

test('a repeated key deep in task data is named by its path', async () => {
  const body = await refused(
    '/v1/messages',
    '{"to":"@b","subject":"s","body":"b","task":{"input":{"parts":[{"kind":"data","data":{"n":1,"n":2}}]}}}',
  );
  expect(body.field).toBe('task.input.parts.0.data.n');
});

test('a task sent as a JSON-encoded string is held to the same rule', async () => {
  const task = '{"input":{"parts":[{"kind":"text","text":"a","text":"b"}]}}';
  const body = await refused('/v1/messages', JSON.stringify({ to: '@b', subject: 's', body: 'b', task }));
  expect(body.field).toBe('task.input.parts.0.text');
});

test('an MCP request over HTTP with a repeated argument is refused before any tool runs', async () => {
  const body = await refused(
    '/mcp',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_message",' +
      '"arguments":{"to":"@b","subject":"s","body":"a","body":"b"}}}',
  );
  expect(body.field).toBe('params.arguments.body');
});

test('one name in two objects, and the ordinary send, are accepted', async () => {
  const response = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    rawBody: '{"to":"@b","subject":"s","body":"b","task":{"input":{"parts":[{"kind":"data","data":{"body":1}}]}}}',
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status).toBe(201);
  const inbox = await server.call('GET', '/v1/messages', { token: t['@b'] });
  expect(inbox.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([response.body.messageId]);
});
