/**
 * Message ids are no existence oracle: a message the caller is not party to
 * (neither its sender nor a recipient) is answered exactly as a missing one,
 * 404 MESSAGE_NOT_FOUND with the same body shape, on every route and MCP tool
 * (get, read, bulk read, archive, reply via inReplyTo). The sender stays party
 * (marking its own message read is 403 NOT_A_RECIPIENT); auditors still read it.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;
let existing: string;
const missing = randomUUID();
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  auditor = (await server.register(['@audit'], 'auditor'))['@audit'];
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@b', subject: 'private', body: 'for @b only' },
  });
  existing = sent.body.messageId;
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

/** The answer with the message id replaced, so that answers about two ids can be compared whole. */
const normalized = (body: unknown, id: string) => JSON.parse(JSON.stringify(body).split(id).join('<id>'));

const httpProbes: Array<[string, (id: string) => [string, string, unknown?]]> = [
  ['GET /v1/messages/{id}', (id) => ['GET', `/v1/messages/${id}`]],
  ['POST /v1/messages/{id}/read', (id) => ['POST', `/v1/messages/${id}/read`]],
  ['POST /v1/messages/read (bulk)', (id) => ['POST', '/v1/messages/read', { messageIds: [id] }]],
  ['POST /v1/messages/{id}/archive', (id) => ['POST', `/v1/messages/${id}/archive`]],
  ['POST /v1/messages with inReplyTo', (id) => ['POST', '/v1/messages', { to: '@a', subject: 're', body: 'x', inReplyTo: id }]],
];

test.each(httpProbes)(
  '%s: a message @c is not party to answers exactly as a missing one, writing nothing',
  async (_route, probe) => {
    const before = await server.eventCount();
    const [method, path, body] = probe(existing);
    const other = await server.call(method, path, { token: t['@c'], body });
    const [m2, p2, b2] = probe(missing);
    const absent = await server.call(m2, p2, { token: t['@c'], body: b2 });
    expect(other.status).toBe(absent.status);
    expect(normalized(other.body, existing)).toEqual(normalized(absent.body, missing));
    expect(JSON.stringify(other.body)).toContain('MESSAGE_NOT_FOUND');
    expect(await server.eventCount()).toBe(before);
  },
);

test('the parties and auditors are unchanged: recipient and sender read it, an auditor too; the sender cannot mark it read', async () => {
  expect((await server.call('GET', `/v1/messages/${existing}`, { token: t['@b'] })).status).toBe(200);
  expect((await server.call('GET', `/v1/messages/${existing}`, { token: t['@a'] })).status).toBe(200);
  expect((await server.call('GET', `/v1/messages/${existing}`, { token: auditor })).status).toBe(200);
  const before = await server.eventCount();
  const bySender = await server.call('POST', `/v1/messages/${existing}/read`, { token: t['@a'] });
  expect({ status: bySender.status, code: bySender.body.code }).toEqual({ status: 403, code: 'NOT_A_RECIPIENT' });
  expect(await server.eventCount()).toBe(before);
});

test('MCP tools: get_message, mark_read, archive_message and add_message inReplyTo answer as for a missing message', async () => {
  const client = new Client({ name: 'oracle-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@c']}` } },
    }),
  );
  clients.push(client);
  const probes: Array<[string, (id: string) => Record<string, unknown>]> = [
    ['get_message', (id) => ({ messageId: id })],
    ['mark_read', (id) => ({ messageId: id })],
    ['archive_message', (id) => ({ messageId: id })],
    ['add_message', (id) => ({ to: '@a', subject: 're', body: 'x', inReplyTo: id })],
  ];
  for (const [name, args] of probes) {
    const before = await server.eventCount();
    const other = (await client.callTool({ name, arguments: args(existing) })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    const absent = (await client.callTool({ name, arguments: args(missing) })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect({ name, isError: other.isError }).toEqual({ name, isError: true });
    const [o, a] = [JSON.parse(other.content[0].text), JSON.parse(absent.content[0].text)];
    expect(o.code).toBe('MESSAGE_NOT_FOUND');
    expect(normalized(o, existing)).toEqual(normalized(a, missing));
    expect(await server.eventCount()).toBe(before);
  }
});
