/**
 * Where a tool takes a message id (get_message, mark_read, archive_message, get_delivery, claim_task...), a model
 * most often passes a subject, a number or nothing. It was told "'messageId' must be a message id: a UUID, as returned
 * by a send" whatever it gave, with no example and no word of where the ids are (a recipient never sent one). The tool
 * error now quotes what was given and shows a UUID and the listings that carry ids. Nothing is written.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

type ToolResult = { isError?: boolean; structuredContent?: any };

let server: TestServer;
let t: Record<string, string>;
let b: Client;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  b = new Client({ name: 'message-id-mistakes-e2e', version: '1.0.0' });
  await b.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@b']}` } },
    }),
  );
});
afterAll(async () => {
  await b.close();
  await server.close();
});

const FORM =
  'must be a message id: a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86, as a send returns it and a listing ' +
  "shows it (list_messages' messageId, list_tasks' taskId)";

test.each<[string, string, Record<string, unknown>, string]>([
  ['get_message', 'messageId', { messageId: 'Deploy plan for Friday' }, "'Deploy plan for Friday' is not one"],
  ['mark_read', 'messageId', { messageId: 'hello' }, "'hello' is not one"],
  ['archive_message', 'messageId', { messageId: 42 }, 'got the number 42'],
  ['get_message', 'messageId', {}, 'none was given'],
  [
    'claim_task',
    'taskId',
    { taskId: 'review the PR please, it is the one from yesterday' },
    "'review the PR please, it is the one from...' is not one",
  ],
  ['add_message', 'inReplyTo', { to: '@a', subject: 're', body: 'x', inReplyTo: 'Deploy plan' }, "'Deploy plan' is not one"],
])('%s with %j: the tool error quotes it and shows the valid form; nothing is written', async (tool, field, args, got) => {
  const before = await server.eventCount();
  const result = (await b.callTool({ name: tool, arguments: args })) as ToolResult;
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field });
  expect(result.structuredContent.message).toBe(`${tool}: '${field}' ${FORM}; ${got}`);
  expect(await server.eventCount()).toBe(before);
});
