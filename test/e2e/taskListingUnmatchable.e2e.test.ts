/**
 * A task listing that can never match is refused, on every surface: the claimable view holds only tasks nobody holds
 * yet (all Submitted), so `view=claimable&state=Completed` answered `200 {tasks: []}`, and an agent read "no finished
 * tasks" where it had asked the wrong view. Now it is 400 VALIDATION_FAILED saying why and which views hold such tasks,
 * over HTTP, MCP, the CLI and the library alike; a listing never writes, the refusal neither.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildProgram } from '../../src/cli/main';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let taskId: string;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: 'AGENT:*', subject: 'a task', body: 'x', task: {} },
  });
  taskId = sent.body.messageId;
  expect((await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'], body: {} })).status).toBe(200);
  const working = { to: 'Working' };
  expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: working })).status).toBe(200);
  const done = { to: 'Completed', artifacts: [{ parts: [{ kind: 'text', text: 'ok' }] }] };
  expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: done })).status).toBe(200);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

const REFUSAL = {
  code: 'VALIDATION_FAILED',
  field: 'state',
  value: ['Completed'],
  view: 'claimable',
  allowed: ['Submitted'],
};
const WHY = /claimable view holds only tasks nobody holds yet, which are all Submitted, so state Completed can never match/;
const INSTEAD = /ask the view assigned \(tasks you hold\) or sent \(tasks you sent\) with that state/;

test('HTTP: claimable with Completed is 400 saying why and where to ask; the view that holds it answers it', async () => {
  const before = await server.eventCount();
  const refused = await server.call('GET', '/v1/tasks?view=claimable&state=completed', { token: t['@c'] });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject(REFUSAL);
  expect(refused.body.message).toMatch(WHY);
  expect(refused.body.message).toMatch(INSTEAD);
  // Several states, none Submitted: refused too, naming them all.
  const several = await server.call('GET', '/v1/tasks?view=claimable&state=Working,Failed', { token: t['@c'] });
  expect([several.status, several.body.value]).toEqual([400, ['Working', 'Failed']]);
  expect(await server.eventCount()).toBe(before);
  // What it says to ask instead finds the task; a state list holding Submitted is a listing that can match.
  const held = await server.call('GET', '/v1/tasks?view=assigned&state=Completed', { token: t['@b'] });
  expect(held.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([taskId]);
  const sent = await server.call('GET', '/v1/tasks?view=sent&state=Completed', { token: t['@a'] });
  expect(sent.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([taskId]);
  const open = await server.call('GET', '/v1/tasks?view=claimable&state=Submitted,Completed', { token: t['@c'] });
  expect([open.status, open.body.tasks]).toEqual([200, []]);
});

test('MCP list_tasks and the library refuse it alike, nothing written', async () => {
  const client = new Client({ name: 'task-listing-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@c']}` } },
    }),
  );
  clients.push(client);
  const before = await server.eventCount();
  const result = (await client.callTool({ name: 'list_tasks', arguments: { view: 'claimable', state: 'Completed' } })) as {
    isError?: boolean;
    structuredContent?: any;
  };
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toMatchObject(REFUSAL);
  expect(result.structuredContent.message).toMatch(WHY);
  const c = await server.mailbox.as(t['@c']);
  await expect(c.listTasks({ view: 'claimable', state: ['Completed'] })).rejects.toMatchObject({
    code: 'VALIDATION_FAILED',
    message: expect.stringMatching(WHY),
  });
  expect(await server.eventCount()).toBe(before);
});

test('CLI task list --view claimable --state Completed: the message on stderr, exit code 1, nothing on stdout', async () => {
  const out: string[] = [];
  const err: string[] = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  process.exitCode = undefined;
  const before = await server.eventCount();
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(
        ['node', 'mailbox', 'task', 'list', '--view', 'claimable', '--state', 'Completed'].concat([
          '--url',
          server.url,
          '--token',
          t['@c'],
        ]),
      );
    expect(process.exitCode).toBe(1);
  } finally {
    jest.restoreAllMocks();
    process.exitCode = undefined;
  }
  expect(out.join('')).toBe('');
  expect(err.join('')).toMatch(WHY);
  expect(await server.eventCount()).toBe(before);
});
