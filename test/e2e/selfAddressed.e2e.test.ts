/**
 * A message to its own sender, as an agent sends it over HTTP and with the MCP SDK client: accepted (201, delivered to
 * its own inbox), with the SELF_ADDRESSED warning the library's send gives (selfAddressed.int).
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { McpSdkClients } from '../support/mcpSdkClients';

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'self-addressed');
beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

test('@a to @a over HTTP and MCP: sent, delivered to @a, SELF_ADDRESSED said', async () => {
  const before = await server.eventCount();
  const http = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@a', subject: 'note', body: 'x' } });
  expect({ status: http.status, recipients: http.body.recipients, codes: http.body.warnings.map((w: any) => w.code) }).toEqual({
    status: 201,
    recipients: ['@a'],
    codes: ['SELF_ADDRESSED'],
  });
  const a = await clients.http(t['@a']);
  const mcp = await a.callTool({ name: 'add_message', arguments: { to: ['@a', '@b'], subject: 'both', body: 'x' } });
  expect((mcp.structuredContent as any).warnings).toEqual([http.body.warnings[0]]);
  expect(await server.eventCount()).toBe(before + 2); // one MessageSent each
  const inbox = await server.call('GET', '/v1/messages', { token: t['@a'] });
  expect(inbox.body.messages.map((m: any) => m.subject)).toEqual(['both', 'note']);
  const ofC = await server.call('GET', '/v1/messages', { token: t['@c'] });
  expect(ofC.body.messages).toEqual([]);
});
