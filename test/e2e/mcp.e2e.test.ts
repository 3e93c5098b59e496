/**
 * MCP over streamable HTTP (POST /mcp) with the SDK's own client: the tool
 * list, send -> list -> mark_read, the recipient seed cases, and errors as
 * tool errors carrying the envelope. Every rejection writes no event.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { VALID_RECIPIENT_SHAPES } from '../../src/commands/recipients';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const clients: Client[] = [];

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'mailbox-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: any;
  _meta?: Record<string, unknown>;
};
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;
const json = (result: ToolResult) => JSON.parse(result.content[0].text);

async function expectToolError(client: Client, name: string, args: Record<string, unknown>, code: string) {
  const before = await server.eventCount();
  const result = await call(client, name, args);
  expect(result.isError).toBe(true);
  const envelope = json(result);
  expect(envelope).toEqual(expect.objectContaining({ code, error: expect.any(String), message: expect.any(String) }));
  expect(result.structuredContent).toEqual(envelope);
  expect(await server.eventCount()).toBe(before);
  return envelope;
}

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c', '@neo-gpt', '@other-client-agent-foo_42']);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

test('lists the thirteen tools (issue 12 added the four task tools, issue 13 unarchive_message and get_delivery) with strict input schemas', async () => {
  const { tools } = await (await mcpClient(t['@a'])).listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual([
    'add_message',
    'archive_message',
    'claim_task',
    'get_delivery',
    'get_message',
    'get_task',
    'list_agents',
    'list_messages',
    'list_tasks',
    'mark_read',
    'unarchive_message',
    'unread_count',
    'update_task',
  ]);
  for (const tool of tools) expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
  const markRead = tools.find((tool) => tool.name === 'mark_read')!;
  expect((markRead.inputSchema.properties as any).messageIds.anyOf.map((s: any) => s.type)).toEqual(['array', 'string']);
});

test('send -> list -> mark_read, as the SDK client', async () => {
  const [a, b] = [await mcpClient(t['@a']), await mcpClient(t['@b'])];
  const sent = await call(a, 'add_message', { to: '@b', subject: 'review', body: 'please', priority: 'high' });
  expect(sent.isError).toBeFalsy();
  const { messageId, recipients } = json(sent);
  expect(recipients).toEqual(['@b']);

  const listed = json(await call(b, 'list_messages', { status: 'unread' }));
  expect(listed.messages.map((m: any) => m.messageId)).toEqual([messageId]);
  expect(listed.messages[0]).toMatchObject({ from: '@a', subject: 'review', priority: 'high', readAt: null });
  expect(json(await call(b, 'unread_count')).byPriority.high).toBe(1);
  expect(json(await call(b, 'get_message', { messageId })).body).toBe('please');

  const read = json(await call(b, 'mark_read', { messageIds: JSON.stringify([messageId]) }));
  expect(read.results).toEqual([{ messageId, status: 'read', readAt: expect.any(String) }]);
  expect(json(await call(b, 'list_messages', { status: 'unread' })).messages).toEqual([]);
  expect(json(await call(b, 'archive_message', { messageId }))).toMatchObject({ status: 'archived', changed: true });
  expect(json(await call(b, 'archive_message', { messageId }))).toMatchObject({ status: 'archived', changed: false });
  expect(json(await call(b, 'list_messages', { status: 'archived' })).messages).toEqual([
    expect.objectContaining({ messageId, archivedAt: expect.any(String) }),
  ]);
  expect(json(await call(b, 'unarchive_message', { messageId }))).toMatchObject({ messageId, status: 'inbox', changed: true });
  expect(json(await call(b, 'list_messages', { status: 'archived' })).messages).toEqual([]);
  expect(json(await call(b, 'list_messages', {})).messages.map((m: any) => m.messageId)).toContain(messageId);
  expect(json(await call(b, 'list_agents')).agents.map((x: any) => x.identity)).toContain('@a');
});

test.each(['@neo-gpt', '@other-client-agent-foo_42', 'AGENT:*'])('add_message to %s succeeds', async (to) => {
  const result = await call(await mcpClient(t['@a']), 'add_message', { to, subject: 's', body: 'b' });
  expect(result.isError).toBeFalsy();
  expect(json(result)).toMatchObject({ status: 'sent', to });
});

test.each(['AGENT:gpt', 'BROADCAST:*', 'neo-gpt'])(
  'add_message to %s is a tool error with INVALID_RECIPIENT_SHAPE',
  async (to) => {
    const envelope = await expectToolError(
      await mcpClient(t['@a']),
      'add_message',
      { to, subject: 's', body: 'b' },
      'INVALID_RECIPIENT_SHAPE',
    );
    expect(envelope).toMatchObject({ to, valid_shapes: VALID_RECIPIENT_SHAPES });
  },
);

test('errors are tool errors with the same envelope as HTTP', async () => {
  const [a, c] = [await mcpClient(t['@a']), await mcpClient(t['@c'])];
  const unknown = await expectToolError(
    a,
    'add_message',
    { to: '@b', subject: 's', body: 'b', from: '@someone-else' },
    'UNKNOWN_FIELD',
  );
  expect(unknown.field).toBe('from');
  const { messageId } = json(await call(a, 'add_message', { to: '@b', subject: 's', body: 'b' }));
  await expectToolError(c, 'mark_read', { messageId }, 'MESSAGE_NOT_FOUND'); // @c is not party to it: as if it did not exist
  await expectToolError(c, 'get_message', { messageId }, 'MESSAGE_NOT_FOUND');
  await expectToolError(c, 'list_messages', { box: 'outbox', status: 'unread' }, 'FILTER_NOT_APPLICABLE');
  await expectToolError(c, 'unread_count', { identity: '@b' }, 'UNKNOWN_FIELD');
  await expectToolError(c, 'mark_read', {}, 'VALIDATION_FAILED');
  await expectToolError(c, 'no_such_tool', {}, 'NOT_FOUND');
});

// The warnings said only "GET /v1/agents lists the agents": an HTTP route an MCP agent cannot call.
test('a warning about a recipient that is not an active agent names list_agents, the tool that lists them', async () => {
  await server.register(['@gone']);
  expect((await server.call('DELETE', '/v1/agents/@gone', { token: server.adminToken })).status).toBe(200);
  await server.register(['@auditor-x'], 'auditor');
  const a = await mcpClient(t['@a']);
  for (const [to, code] of [
    ['@gone', 'RETIRED_RECIPIENT'],
    ['@nobody-here', 'UNREGISTERED_RECIPIENT'],
    ['@auditor-x', 'UNREGISTERED_RECIPIENT'],
  ]) {
    const sent = json(await call(a, 'add_message', { to, subject: 's', body: 'b' }));
    expect(sent.warnings).toEqual([expect.objectContaining({ code, message: expect.stringContaining('list_agents') })]);
    // The warning names its recipient whether `to` was one identity or a list (it did for a list only).
    const listed = json(await call(a, 'add_message', { to: [to, '@b'], subject: 's', body: 'b' }));
    expect([sent.warnings[0].identity, listed.warnings.map((warning: { identity: string }) => warning.identity)]).toEqual([
      to,
      [to],
    ]);
  }
});

// DESIGN: a retry returns the original result. a3709e1 put replayed: true in the result, another object than the first.
test('add_message honours idempotencyKey: a retry returns the original result, says the replay in _meta, writes nothing', async () => {
  const a = await mcpClient(t['@a']);
  const args = { to: '@b', subject: 'once', body: 'b', idempotencyKey: 'mcp-retry-1' };
  const first = await call(a, 'add_message', args);
  expect(first._meta).toBeUndefined();
  const before = await server.eventCount();
  const retry = await call(a, 'add_message', args);
  expect(retry.content).toEqual(first.content); // the same text, byte for byte
  expect(retry.structuredContent).toEqual(first.structuredContent);
  expect(retry.structuredContent).not.toHaveProperty('replayed');
  expect(retry._meta).toEqual({ 'agent-mailbox/replayed': true });
  expect(await server.eventCount()).toBe(before);
});

// A replay sent nothing, yet both surfaces told the wake-latency tracker it was a send acknowledged now: a wake of
// the original then counted from the replay's arrival (or, the replay answered first, was taken from the original).
test('a replayed send (HTTP or add_message) is not a send for the wake latency: only the send that wrote it is', async () => {
  const acknowledged = jest.spyOn(server.http.context.wakeLatency, 'sendAcknowledged');
  try {
    const a = await mcpClient(t['@a']);
    const args = { to: '@b', subject: 'latency', body: 'b', idempotencyKey: 'latency-mcp' };
    const viaMcp = json(await call(a, 'add_message', args));
    expect((await call(a, 'add_message', args))._meta).toEqual({ 'agent-mailbox/replayed': true });
    const request = { token: t['@a'], body: { ...args, idempotencyKey: 'latency-http' } };
    const viaHttp = (await server.call('POST', '/v1/messages', request)).body;
    const replay = await server.call('POST', '/v1/messages', request);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(acknowledged.mock.calls.map(([messageId]) => messageId)).toEqual([viaMcp.messageId, viaHttp.messageId]);
  } finally {
    acknowledged.mockRestore();
  }
});

test('GET /mcp is 405 (stateless endpoint)', async () => {
  const response = await server.call('GET', '/mcp', { token: t['@a'] });
  expect(response.status).toBe(405);
  expect(response.headers.get('allow')).toBe('POST');
});
