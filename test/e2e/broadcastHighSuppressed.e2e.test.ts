/**
 * A broadcast sent high priority with wakeSuppressed: true is taken (DESIGN: the refusal is for messages to named
 * identities) and wakes nobody, while the served descriptions promised otherwise: priority said "high always wakes the
 * recipient". The descriptions a model reads (MCP tools/list) and a client reads (GET /openapi.json) now say what is
 * done: high wakes each recipient except a broadcast's with wakeSuppressed; to @identities the pair is refused.
 */
import { McpSdkClients, type ToolResult } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'broadcast-high-suppressed-e2e');
const streams: WakeSubscriber[] = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await clients.closeAll();
  await server.close();
});

test('tools/list and /openapi.json describe priority and wakeSuppressed alike, naming the broadcast exception', async () => {
  const a = await clients.http(t['@a']);
  const { tools } = await a.listTools();
  const served = (tools.find((tool) => tool.name === 'add_message')!.inputSchema.properties ?? {}) as Record<string, any>;
  expect(served.priority.description).toBe('default normal; high wakes each recipient, except AGENT:* with wakeSuppressed');
  expect(served.wakeSuppressed.description).toBe('true: no wake event; to @identities, refused if high priority or a task');
  const openapi = await server.call('GET', '/openapi.json');
  const send = openapi.body.paths['/v1/messages'].post.requestBody.content['application/json'].schema.properties;
  expect(send.priority.description).toBe(served.priority.description);
  expect(send.wakeSuppressed.description).toBe(served.wakeSuppressed.description);
});

test('a high broadcast with wakeSuppressed is delivered to each peer as high and wakes none; to a list it is refused', async () => {
  for (const identity of ['@b', '@c']) {
    const stream = await subscribe(server.url, t[identity]);
    streams.push(stream);
    await stream.next((event) => event.event === 'sync');
  }
  const [b, c] = streams;
  const a = await clients.http(t['@a']);
  const quiet = (await a.callTool({
    name: 'add_message',
    arguments: { to: 'AGENT:*', subject: 'freeze', body: 'no deploys today', priority: 'high', wakeSuppressed: true },
  })) as ToolResult;
  expect(quiet.isError).toBeFalsy();
  expect(quiet.structuredContent).toMatchObject({ status: 'sent', recipients: ['@b', '@c'] });
  const quietId = quiet.structuredContent.messageId;

  // Refused to named identities, alone or in a list: nothing is written.
  for (const to of ['@b', ['@b', '@c']]) {
    const before = await server.eventCount();
    const refused = (await a.callTool({
      name: 'add_message',
      arguments: { to, subject: 'freeze', body: 'x', priority: 'high', wakeSuppressed: true },
    })) as ToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'wakeSuppressed' });
    expect(await server.eventCount()).toBe(before);
  }

  // A broadcast sent after it wakes both: once its wake is in, the quiet one's would have been before it.
  const loud = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: 'AGENT:*', subject: 'lunch', body: 'at noon' },
  });
  expect(loud.status).toBe(201);
  for (const stream of [b, c]) {
    await stream.next((event) => event.event === 'wake' && event.data.messageId === loud.body.messageId);
    expect(stream.wakes().map((wake) => wake.messageId)).toEqual([loud.body.messageId]);
  }

  for (const identity of ['@b', '@c']) {
    const count = await server.call('GET', '/v1/inbox/count', { token: t[identity] });
    expect(count.body.byPriority).toEqual({ low: 0, normal: 1, high: 1 });
  }
  const delivery = await server.call('GET', `/v1/messages/${quietId}/delivery`, { token: t['@a'] });
  expect(delivery.body).toMatchObject({ wakeExpected: false, noWakeReason: 'suppressed' });
});

/**
 * Refused to named identities, the pair was told only "its recipients must be woken": a model could not tell what to
 * send instead. The refusal now names both ways out, each of which is then taken (run last: it sends to @b and @c).
 */
test('wakeSuppressed refused to named identities says how to send it: woken, or waking nobody as AGENT:* (MCP and HTTP)', async () => {
  const a = await clients.http(t['@a']);
  const broadcast =
    ', send it to the broadcast AGENT:*, which may suppress its wakes (it reaches every other active agent, not only ' +
    'those named). Nothing was sent.';
  const refusals: Array<[Record<string, unknown>, string]> = [
    [
      { to: '@b', priority: 'high' },
      "'wakeSuppressed' is refused for a high-priority message to named identities: high priority wakes each recipient. " +
        "Drop 'wakeSuppressed' to send it woken, or send it normal or low priority to deliver it without a wake; to " +
        'keep it high and wake nobody' +
        broadcast,
    ],
    [
      { to: ['@b', '@c'], task: {} },
      "'wakeSuppressed' is refused for a task sent to named identities: its recipients are woken to claim it. " +
        "Drop 'wakeSuppressed' to send it woken; if waking nobody is meant" +
        broadcast,
    ],
    [
      { to: '@c', priority: 'high', task: {} },
      "'wakeSuppressed' is refused for a high-priority task sent to named identities: its recipients are woken to claim " +
        "it. Drop 'wakeSuppressed' to send it woken; if waking nobody is meant" +
        broadcast,
    ],
  ];
  for (const [fields, message] of refusals) {
    const send = { subject: 'review', body: 'x', wakeSuppressed: true, ...fields };
    const before = await server.eventCount();
    const overMcp = (await a.callTool({ name: 'add_message', arguments: send })) as ToolResult;
    expect(overMcp.isError).toBe(true);
    expect(overMcp.structuredContent).toEqual({
      error: 'Validation failed',
      code: 'VALIDATION_FAILED',
      message,
      field: 'wakeSuppressed',
    });
    const overHttp = await server.call('POST', '/v1/messages', { token: t['@a'], body: send });
    expect(overHttp.status).toBe(400);
    expect(overHttp.body).toEqual(overMcp.structuredContent);
    expect(await server.eventCount()).toBe(before);
  }

  // Either way out is taken: without wakeSuppressed, to the identities; with it, as the broadcast, waking nobody.
  const woken = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'review', body: 'x', task: {} },
  });
  expect([woken.status, woken.body.recipients]).toEqual([201, ['@b', '@c']]);
  const quiet = (await a.callTool({
    name: 'add_message',
    arguments: { to: 'AGENT:*', subject: 'review', body: 'x', priority: 'high', task: {}, wakeSuppressed: true },
  })) as ToolResult;
  expect(quiet.structuredContent).toMatchObject({ status: 'sent', recipients: ['@b', '@c'] });
  const delivery = await server.call('GET', `/v1/messages/${quiet.structuredContent.messageId}/delivery`, { token: t['@a'] });
  expect(delivery.body).toMatchObject({ wakeExpected: false, noWakeReason: 'suppressed' });
});
