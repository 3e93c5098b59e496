/**
 * The schemas a server serves state its own limits: tools/list over POST /mcp and GET /openapi.json (read by /docs)
 * said "markdown; at most 64 KiB by default" for a message body on a server started with MAILBOX_MAX_BODY_BYTES=100,
 * and a model that read them sent a body the server refused. They now say this server's limit, the one it enforces;
 * the checked-in openapi.json (no server's) states the defaults and says it does. GET /v1/whoami answers them, and
 * `mailbox mcp` (stdio) states the limits its server gave there; the defaults, said so, when it could not ask.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import Ajv2020 from 'ajv/dist/2020';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { runStdioMcp } from '../../src/stdioMcp';
import { ensureBuilt, runCli } from '../support/builtCli';
import { McpSdkClients } from '../support/mcpSdkClients';
import { freePort } from '../support/redisServer';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'served-limits-e2e');

beforeAll(async () => {
  ensureBuilt(); // `mailbox mcp` is run as a user runs it
  server = await startTestServer({ maxBodyBytes: 100 });
  t = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@ops'], 'auditor')) };
}, 120_000);
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

test("GET /v1/whoami answers this server's limits, to every role, as its OpenAPI schema says", async () => {
  const { body: document } = await server.call<Json>('GET', '/openapi.json');
  const validate = new Ajv2020({ strict: false }).compile(
    document.paths['/v1/whoami'].get.responses['200'].content['application/json'].schema,
  );
  for (const [token, identity, role] of [
    [t['@a'], '@a', 'agent'],
    [t['@ops'], '@ops', 'auditor'],
    [server.adminToken, 'admin', 'admin'],
  ]) {
    const { status, body } = await server.call('GET', '/v1/whoami', { token });
    expect([status, body]).toEqual([200, { identity, role, limits: { maxBodyBytes: 100 } }]);
    expect([identity, validate(body)]).toEqual([identity, true]);
  }
  expect(document.paths['/v1/whoami'].get.responses['200'].content['application/json'].schema.required).toContain('limits');
});

/** The lines `mailbox mcp` answers initialize and tools/list with (stdin ends after them), and its stderr. */
const mcpCli = async (url: string, token: string) => {
  const lines = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ];
  const run = await runCli(
    ['mcp'],
    { MAILBOX_URL: url, MAILBOX_TOKEN: token },
    { input: lines.map((line) => `${JSON.stringify(line)}\n`).join('') },
  );
  const answers = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Json);
  const listed = answers.find((answer) => answer.id === 2)!.result.tools as Json[];
  return {
    code: run.code,
    stderr: run.stderr.trim(),
    body: listed.find((tool) => tool.name === 'add_message')!.inputSchema.properties.body,
  };
};

test("`mailbox mcp`'s tools/list states its server's body limit, read from GET /v1/whoami at start", async () => {
  // It said "markdown; at most 64 KiB by default" whatever its server's limit: a model sent a body of 101 bytes or more
  // to a server that takes 100, and was refused.
  expect(await mcpCli(server.url, t['@a'])).toEqual({
    code: 0,
    stderr: `mailbox mcp: serving MCP on stdio for ${server.url} as @a`,
    body: { type: 'string', description: 'markdown; at most 100 bytes' },
  });

  // In process, over the SDK: the limit stated is the one add_message enforces.
  const a = await clients.stdio(t['@a']);
  const body = ((await a.listTools()).tools.find((tool) => tool.name === 'add_message')!.inputSchema.properties as Json).body;
  expect(body).toEqual({ type: 'string', description: 'markdown; at most 100 bytes' });
  const before = await server.eventCount();
  const refused = (await a.callTool({
    name: 'add_message',
    arguments: { to: '@b', subject: 'log', body: 'x'.repeat(101) },
  })) as Json;
  expect(refused.structuredContent).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', limit: 100 });
  expect(await server.eventCount()).toBe(before);
});

test("`mailbox mcp` whose server cannot be asked states the default, and that the server's own could not be read", async () => {
  const unread = {
    type: 'string',
    description: "markdown; at most 64 KiB by default (the server's own limit could not be read)",
  };
  const nobody = `http://127.0.0.1:${await freePort()}`;
  const unreachable = await mcpCli(nobody, t['@a']);
  expect([unreachable.code, unreachable.body]).toEqual([0, unread]);
  expect(unreachable.stderr).toMatch(
    /^mailbox mcp: Cannot reach the mailbox at .+ Serving MCP anyway: tool calls answer UNAVAILABLE until it answers\.$/,
  );

  // A token the server refuses (whoami answers 401), and none at all (nothing asked): the same, in process.
  for (const token of [`${t['@a']}x`, undefined]) {
    const [toServer, fromServer] = [new PassThrough(), new PassThrough()];
    const mcp = await runStdioMcp(server.url, token, { stdin: toServer, stdout: fromServer });
    const client = new Client({ name: 'unread-limits', version: '1.0.0' });
    await client.connect(new StdioServerTransport(fromServer, toServer));
    try {
      const { tools } = await client.listTools();
      expect([token, (tools.find((tool) => tool.name === 'add_message')!.inputSchema.properties as Json).body]).toEqual([
        token,
        unread,
      ]);
    } finally {
      await client.close();
      await mcp.close();
    }
  }
});
