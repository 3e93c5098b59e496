/**
 * A string holding a lone UTF-16 surrogate ("\ud800" in JSON with no partner) is refused on every surface: it was
 * accepted with 201, the log kept it as sent, but the SQLite views hold UTF-8, where it became three U+FFFD, so the
 * inbox listed a subject other than the one get_message returned. Now it is VALIDATION_FAILED naming the field,
 * the code unit and its index, with zero events; three agents, so that neither recipient receives anything.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isMailboxError } from '../../src/errors';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

const inboxOf = async (identity: string) =>
  (await server.call('GET', '/v1/messages', { token: t[identity] })).body.messages as Array<Record<string, unknown>>;

/** Sends `rawBody` (JSON text, escapes as written) as @a: 400 VALIDATION_FAILED, zero events. */
async function refused(rawBody: string) {
  const before = await server.eventCount();
  const response = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    rawBody,
    headers: { 'content-type': 'application/json' },
  });
  expect([response.status, response.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  expect(await server.eventCount()).toBe(before);
  return response.body;
}

test('a subject with a lone high surrogate: 400 naming the field and the code unit, nothing sent to either recipient', async () => {
  const body = await refused('{"to":["@b","@c"],"subject":"deploy \\ud800","body":"b"}');
  expect(body).toMatchObject({ field: 'subject', index: 7 });
  expect(body.message).toBe(
    "add_message: 'subject' holds a lone UTF-16 surrogate (\\uD800 at index 7), which is not a Unicode character and " +
      'cannot be stored as sent; send the character itself, or in JSON its surrogate pair (\\uD83D\\uDE00 for U+1F600), ' +
      'or remove it. Nothing was written.',
  );
  expect(await inboxOf('@b')).toEqual([]);
  expect(await inboxOf('@c')).toEqual([]);
});

test('a lone low surrogate in a tag, and in text decoded from a task sent as a JSON string, are named by their path', async () => {
  expect((await refused('{"to":"@b","subject":"s","body":"b","tags":["ok","\\udc00x"]}')).field).toBe('tags.1');
  const task = '{"input":{"parts":[{"kind":"text","text":"half \\ud83d"}]}}';
  expect((await refused(JSON.stringify({ to: '@b', subject: 's', body: 'b', task }))).field).toBe('task.input.parts.0.text');
});

test('a key that holds one is named with the surrogate escaped, so that the error itself is storable text', async () => {
  const body = await refused(
    '{"to":"@b","subject":"s","body":"b","task":{"input":{"parts":[{"kind":"data","data":{"k\\ud800":1}}]}}}',
  );
  expect(body.field).toBe('task.input.parts.0.data.k\\uD800');
  expect(body.message).toContain("the key 'task.input.parts.0.data.k\\uD800' holds a lone UTF-16 surrogate");
});

test('MCP add_message and the library are held to it too: the same envelope, zero events', async () => {
  const client = new Client({ name: 'well-formed-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@a']}` } },
    }),
  );
  const before = await server.eventCount();
  try {
    const result = (await client.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject: 's', body: 'notes \udfff' },
    })) as { isError?: boolean; content: Array<{ text: string }> };
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0].text)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body', index: 6 });
  } finally {
    await client.close();
  }
  const a = await server.mailbox.as(t['@a']);
  const error: unknown = await a.send({ to: '@b', subject: '\ud800', body: 'b' }).catch((e: unknown) => e);
  expect(isMailboxError(error) && error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'subject', index: 0 });
  expect(await server.eventCount()).toBe(before);
});

test('a surrogate pair (a character beyond U+FFFF), escaped or not, is accepted and kept exactly', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    rawBody: '{"to":["@b","@c"],"subject":"ship it \\ud83d\\ude80 😀","body":"b"}',
    headers: { 'content-type': 'application/json' },
  });
  expect(sent.status).toBe(201);
  for (const recipient of ['@b', '@c']) {
    expect((await inboxOf(recipient)).map((m) => m.subject)).toEqual(['ship it 🚀 😀']);
  }
});
