/**
 * The schemas a server serves state its own limits: tools/list over POST /mcp and GET /openapi.json (read by /docs)
 * said "markdown; at most 64 KiB by default" for a message body on a server started with MAILBOX_MAX_BODY_BYTES=100,
 * and a model that read them sent a body the server refused. They now say this server's limit, the one it enforces;
 * the checked-in openapi.json (no server's) states the defaults and says it does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'served-limits-e2e');

beforeAll(async () => {
  server = await startTestServer({ maxBodyBytes: 100 });
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

type Json = Record<string, any>;
const sendBodyOf = (document: Json) =>
  document.paths['/v1/messages'].post.requestBody.content['application/json'].schema.properties.body;

test("tools/list states this server's body limit, the one add_message enforces", async () => {
  const a = await clients.http(t['@a']);
  const { tools } = await a.listTools();
  const body = (tools.find((tool) => tool.name === 'add_message')!.inputSchema.properties as Json).body;
  expect(body).toEqual({ type: 'string', description: 'markdown; at most 100 bytes' });

  const before = await server.eventCount();
  const refused = (await a.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 'log', body: 'x'.repeat(101) },
  })) as Json;
  expect(refused.structuredContent).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'body', bytes: 101, limit: 100 });
  expect(await server.eventCount()).toBe(before);
  const sent = (await a.callTool({
    name: 'add_message',
    arguments: { to: '@c', subject: 'log', body: 'x'.repeat(100) },
  })) as Json;
  expect(sent.structuredContent).toMatchObject({ status: 'sent' });
});

test("GET /openapi.json (what /docs shows) states this server's body limit and says the limits are its own", async () => {
  const { status, body: document } = await server.call<Json>('GET', '/openapi.json');
  expect(status).toBe(200);
  expect(sendBodyOf(document)).toEqual({ type: 'string', description: 'markdown; at most 100 bytes' });
  expect(document.info.description).toContain("The limits stated are this server's (a message body of at most 100 bytes).");
  expect(JSON.stringify(document)).not.toContain('64 KiB by default');
});

test('the checked-in openapi.json is the defaults’ document, and says so', () => {
  const checkedIn = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8')) as Json;
  expect(checkedIn).toEqual(buildOpenApiDocument());
  expect(sendBodyOf(checkedIn).description).toBe('markdown; at most 64 KiB by default');
  expect(checkedIn.info.description).toContain(
    'the limits stated are the defaults (a message body of at most 64 KiB, MAILBOX_MAX_BODY_BYTES); a server serves its own at GET /openapi.json.',
  );
});
