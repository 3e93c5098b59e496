/**
 * mailbox_commands_total counts every command, accepted and rejected, on HTTP and MCP, under one name per
 * command (commandNames.ts): the task commands were not counted at all, though their rejections were in
 * GET /v1/audit/rejections. Three identities: @s sends a broadcast task, @c claims it first, @d comes second.
 * Each step asserts exactly which series moved, and by one.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Clock } from '../../src/application/runtime';
import { uncountedWriteRoutes } from '../../src/adapters/http/commandRecorder';
import { startTestServer, type TestServer } from '../support/httpServer';

class TestClock implements Clock {
  constructor(private at: number) {}
  now = () => new Date(this.at);
  advance(ms: number): void {
    this.at += ms;
  }
}

const clock = new TestClock(Date.parse('2030-05-01T12:00:00.000Z'));
let server: TestServer;
let t: Record<string, string>;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer({ taskSweepMs: 0 }, { clock });
  t = await server.register(['@s', '@c', '@d']);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

/** Every mailbox_commands_total series as "command surface outcome code" -> value. */
async function commandSeries(): Promise<Record<string, number>> {
  const { body } = await server.call('GET', '/metrics');
  const series: Record<string, number> = {};
  for (const line of (body as string).split('\n')) {
    const found = /^mailbox_commands_total\{command="([^"]*)",surface="(\w+)",outcome="(\w+)",code="(\w*)"\} (\d+)$/.exec(line);
    if (found) series[found.slice(1, 5).join(' ').trim()] = Number(found[5]);
  }
  return series;
}

/** The series `step` moved, with how much each moved. */
async function movedBy(step: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await commandSeries();
  await step();
  const after = await commandSeries();
  return Object.fromEntries(
    Object.entries(after)
      .filter(([key, value]) => value !== (before[key] ?? 0))
      .map(([key, value]) => [key, value - (before[key] ?? 0)]),
  );
}

const post = async (token: string | null, path: string, body: unknown, status: number, code?: string) => {
  const answer = await server.call('POST', path, { token, body });
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
  return answer.body;
};

const sendTask = async () =>
  (await post(t['@s'], '/v1/messages', { to: 'AGENT:*', subject: 'review', body: 'x', task: {} }, 201)).messageId as string;

test('HTTP: each claim and transition, accepted or rejected, moves its own series by one', async () => {
  let taskId = '';
  expect(await movedBy(async () => (taskId = await sendTask()))).toEqual({ 'send http accepted': 1 });
  const claim = `/v1/tasks/${taskId}/claim`;
  const transition = `/v1/tasks/${taskId}/transition`;

  expect(await movedBy(() => post(t['@c'], claim, {}, 200))).toEqual({ 'claim_task http accepted': 1 });
  expect(await movedBy(() => post(t['@d'], claim, {}, 409, 'TASK_ALREADY_CLAIMED'))).toEqual({
    'claim_task http rejected TASK_ALREADY_CLAIMED': 1,
  });
  expect(await movedBy(() => post(t['@c'], transition, { to: 'Working' }, 200))).toEqual({ 'update_task http accepted': 1 });
  expect(await movedBy(() => post(t['@d'], transition, { to: 'Completed' }, 409, 'INVALID_TRANSITION'))).toEqual({
    'update_task http rejected INVALID_TRANSITION': 1,
  });
  // Refusals before the command is reached count too: no token, a body the route refuses.
  expect(await movedBy(() => post(null, claim, {}, 401, 'UNAUTHENTICATED'))).toEqual({
    'claim_task http rejected UNAUTHENTICATED': 1,
  });
  expect(await movedBy(() => post(t['@c'], transition, { to: 'Working', taskId: 'other' }, 400, 'VALIDATION_FAILED'))).toEqual({
    'update_task http rejected VALIDATION_FAILED': 1,
  });

  // The rejection log names them as /metrics does.
  const { body: log } = await server.call('GET', '/v1/audit/rejections', { token: server.adminToken });
  expect(log.rejections.slice(0, 4).map((r: any) => `${r.command} ${r.code}`)).toEqual([
    'update_task VALIDATION_FAILED',
    'claim_task UNAUTHENTICATED',
    'update_task INVALID_TRANSITION',
    'claim_task TASK_ALREADY_CLAIMED',
  ]);
});

test('HTTP: an update after the claimant’s lease lapsed is counted as rejected with LEASE_EXPIRED', async () => {
  const taskId = await sendTask();
  await post(t['@c'], `/v1/tasks/${taskId}/claim`, { leaseSeconds: 30 }, 200);
  clock.advance(31_000);
  expect(await movedBy(() => post(t['@c'], `/v1/tasks/${taskId}/transition`, { to: 'Completed' }, 409, 'LEASE_EXPIRED'))).toEqual(
    { 'update_task http rejected LEASE_EXPIRED': 1 },
  );
});

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'metrics-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** Calls a tool and checks its outcome: the error code of a refused call, none of an accepted one. */
const tool = async (client: Client, name: string, args: Record<string, unknown>, code?: string) => {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any };
  expect({ isError: result.isError ?? false, code: result.isError ? result.structuredContent.code : undefined }).toEqual({
    isError: code !== undefined,
    code,
  });
};

test('MCP: claim_task and update_task, accepted or rejected, each move their own series by one', async () => {
  const [s, c, d] = await Promise.all([mcpClient(t['@s']), mcpClient(t['@c']), mcpClient(t['@d'])]);
  let taskId = '';
  expect(
    await movedBy(async () => {
      const sent = (await s.callTool({
        name: 'add_message',
        arguments: { to: 'AGENT:*', subject: 'review', body: 'x', task: {} },
      })) as { structuredContent?: any };
      taskId = sent.structuredContent.messageId;
    }),
  ).toEqual({ 'send mcp accepted': 1 });

  expect(await movedBy(() => tool(c, 'claim_task', { taskId, leaseSeconds: 30 }))).toEqual({ 'claim_task mcp accepted': 1 });
  expect(await movedBy(() => tool(d, 'claim_task', { taskId }, 'TASK_ALREADY_CLAIMED'))).toEqual({
    'claim_task mcp rejected TASK_ALREADY_CLAIMED': 1,
  });
  expect(await movedBy(() => tool(c, 'update_task', { taskId, to: 'Working' }))).toEqual({ 'update_task mcp accepted': 1 });
  expect(await movedBy(() => tool(d, 'update_task', { taskId, to: 'Completed' }, 'INVALID_TRANSITION'))).toEqual({
    'update_task mcp rejected INVALID_TRANSITION': 1,
  });
  clock.advance(31_000);
  expect(await movedBy(() => tool(c, 'update_task', { taskId, to: 'Completed' }, 'LEASE_EXPIRED'))).toEqual({
    'update_task mcp rejected LEASE_EXPIRED': 1,
  });

  const { body: log } = await server.call('GET', '/v1/audit/rejections', { token: server.adminToken });
  expect(log.rejections.slice(0, 3).map((r: any) => `${r.agent} ${r.command} ${r.surface} ${r.code}`)).toEqual([
    '@c update_task mcp LEASE_EXPIRED',
    '@d update_task mcp INVALID_TRANSITION',
    '@d claim_task mcp TASK_ALREADY_CLAIMED',
  ]);
});

test('HTTP: every other command is counted once, by its name', async () => {
  const messageId = (await post(t['@s'], '/v1/messages', { to: '@c', subject: 'x', body: 'x' }, 201)).messageId;
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['register_agent http accepted', () => post(server.adminToken, '/v1/agents', { identity: '@e' }, 201)],
    ['rotate_agent_token http accepted', () => post(server.adminToken, '/v1/agents/@e/token', undefined, 201)],
    ['mark_read http accepted', () => post(t['@c'], `/v1/messages/${messageId}/read`, undefined, 200)],
    ['mark_read http accepted', () => post(t['@c'], '/v1/messages/read', { all: true, includeUnseen: true }, 200)],
    ['archive http accepted', () => post(t['@c'], `/v1/messages/${messageId}/archive`, undefined, 200)],
    ['unarchive http accepted', () => post(t['@c'], `/v1/messages/${messageId}/unarchive`, undefined, 200)],
    [
      'unarchive http rejected MESSAGE_NOT_FOUND',
      () => post(t['@d'], `/v1/messages/${messageId}/unarchive`, undefined, 404, 'MESSAGE_NOT_FOUND'),
    ],
    [
      'retire_agent http accepted',
      async () => expect((await server.call('DELETE', '/v1/agents/@e', { token: server.adminToken })).status).toBe(200),
    ],
    [
      'retire_agent http rejected FORBIDDEN',
      async () => expect((await server.call('DELETE', '/v1/agents/@d', { token: t['@c'] })).status).toBe(403),
    ],
  ];
  for (const [series, step] of steps) expect(await movedBy(step)).toEqual({ [series]: 1 });
  // Every write route served has its command's name (POST /mcp counts by tool, above).
  expect(uncountedWriteRoutes(server.http.routes)).toEqual([]);
});

test('MCP: a command tool whose arguments are refused before its command runs is counted, once, as over HTTP', async () => {
  // archive_message given messageIds, unarchive_message a bad id, claim_task a leaseSeconds of "5m", update_task a
  // "state" for "to": each was in the rejection log but moved no series of mailbox_commands_total (the same mistakes
  // over HTTP, and add_message's or mark_read's over MCP, were counted). Nothing is written by any of them.
  const [s, c, d] = await Promise.all([mcpClient(t['@s']), mcpClient(t['@c']), mcpClient(t['@d'])]);
  const sent = (await s.callTool({
    name: 'add_message',
    arguments: { to: ['@c', '@d'], subject: 'review', body: 'x', task: {} },
  })) as { structuredContent?: any };
  const id = sent.structuredContent.messageId as string;
  const { body: before } = await server.call('GET', '/v1/audit/events?limit=1000', { token: server.adminToken });

  const steps: Array<[string, () => Promise<unknown>]> = [
    ['archive mcp rejected UNKNOWN_FIELD', () => tool(c, 'archive_message', { messageIds: [id] }, 'UNKNOWN_FIELD')],
    ['unarchive mcp rejected VALIDATION_FAILED', () => tool(d, 'unarchive_message', { messageId: 'nope' }, 'VALIDATION_FAILED')],
    [
      'claim_task mcp rejected VALIDATION_FAILED',
      () => tool(c, 'claim_task', { taskId: id, leaseSeconds: '5m' }, 'VALIDATION_FAILED'),
    ],
    ['update_task mcp rejected UNKNOWN_FIELD', () => tool(d, 'update_task', { taskId: id, state: 'Working' }, 'UNKNOWN_FIELD')],
    // Refused by the command itself: counted by it, not a second time by the rejection log's hook.
    [
      'send mcp rejected INVALID_RECIPIENT_SHAPE',
      () => tool(s, 'add_message', { to: 'c', subject: 'x', body: 'x' }, 'INVALID_RECIPIENT_SHAPE'),
    ],
    ['mark_read mcp rejected VALIDATION_FAILED', () => tool(c, 'mark_read', { all: 'true' }, 'VALIDATION_FAILED')],
  ];
  for (const [series, step] of steps) expect(await movedBy(step)).toEqual({ [series]: 1 });
  // A read's refusal is recorded, not counted (reads are no commands); nor is a call of a tool that does not exist, even
  // one named as a command is (`send`).
  expect(await movedBy(() => tool(c, 'get_message', { id }, 'UNKNOWN_FIELD'))).toEqual({});
  expect(await movedBy(() => tool(c, 'send', { to: '@d', subject: 'x', body: 'x' }, 'NOT_FOUND'))).toEqual({});

  const { body: after } = await server.call('GET', '/v1/audit/events?limit=1000', { token: server.adminToken });
  expect(after.events.length).toBe(before.events.length);
  const { body: log } = await server.call('GET', '/v1/audit/rejections', { token: server.adminToken });
  expect(log.rejections.slice(0, 8).map((r: any) => `${r.agent} ${r.command} ${r.code}`)).toEqual([
    '@c send NOT_FOUND',
    '@c get_message UNKNOWN_FIELD',
    '@c mark_read VALIDATION_FAILED',
    '@s send INVALID_RECIPIENT_SHAPE',
    '@d update_task UNKNOWN_FIELD',
    '@c claim_task VALIDATION_FAILED',
    '@d unarchive VALIDATION_FAILED',
    '@c archive UNKNOWN_FIELD',
  ]);
});
