/**
 * A task sent to a list of identities or to AGENT:* is nobody's until one of its audience claims it, and only a
 * Submitted task can be claimed. Sent as Working, InputRequired or AuthRequired it was accepted (201) and then nobody
 * could ever work it: every claim was 409 INVALID_TRANSITION ("is Working; @b (audience) cannot claim it"), it was in
 * nobody's claimable list, and the sender's answer to its InputRequired moved it to Working with no holder. The send
 * is refused now, 400 VALIDATION_FAILED naming task.state, and nothing is written; a task sent so to one identity is
 * that identity's from the send, as before. @s sends; @b, @c and @d are the audience.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c', '@d']);
});
afterAll(() => server.close());

const send = (to: string | string[], state: string) =>
  server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to, subject: `a task sent ${state}`, body: 'x', task: { state } },
  });

test.each<[string | string[], string, string]>([
  [['@b', '@c', '@d'], 'Working', 'Working'],
  [['@b', '@c'], 'input-required', 'InputRequired'],
  ['AGENT:*', 'TASK_STATE_AUTH_REQUIRED', 'AuthRequired'],
  ['AGENT:*', 'working', 'Working'],
])('to %j as %s: 400 VALIDATION_FAILED naming task.state, nothing written', async (to, state, canonical) => {
  const before = await server.eventCount();
  const sent = await send(to, state);
  expect(sent.status).toBe(400);
  expect(sent.body).toMatchObject({
    error: 'Validation failed',
    code: 'VALIDATION_FAILED',
    field: 'task.state',
    value: canonical,
    allowed: expect.arrayContaining(['Submitted']),
  });
  expect(sent.body.message).toContain(`task.state '${canonical}' cannot open a task sent`);
  expect(sent.body.message).toContain('Nothing was sent');
  expect(await server.eventCount()).toBe(before);
  for (const who of ['@b', '@c', '@d']) {
    const claimable = await server.call('GET', '/v1/tasks?view=claimable', { token: t[who] });
    expect(claimable.body.tasks).toEqual([]);
  }
});

test('the same over MCP add_message; a task sent so to one identity is still theirs from the send', async () => {
  const client = new Client({ name: 'open-task-state', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@s']}` } },
    }),
  );
  try {
    const before = await server.eventCount();
    const refused = (await client.callTool({
      name: 'add_message',
      arguments: { to: ['@b', '@c'], subject: 'asks at once', body: 'x', task: JSON.stringify({ state: 'InputRequired' }) },
    })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(refused).toMatchObject({
      isError: true,
      structuredContent: { code: 'VALIDATION_FAILED', field: 'task.state', value: 'InputRequired' },
    });
    expect(await server.eventCount()).toBe(before);
  } finally {
    await client.close();
  }
  const direct = await send('@b', 'Working');
  expect(direct.status).toBe(201);
  const held = await server.call('GET', '/v1/tasks?view=assigned', { token: t['@b'] });
  expect(held.body.tasks).toMatchObject([{ taskId: direct.body.messageId, state: 'Working', assignee: '@b' }]);
  // A list's task sent Submitted (or as a record of finished work) is accepted as before.
  expect((await send(['@b', '@c'], 'submitted')).status).toBe(201);
  expect((await send(['@b', '@c'], 'Completed')).status).toBe(201);
});
