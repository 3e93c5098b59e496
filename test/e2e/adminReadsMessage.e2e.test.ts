/**
 * The admin token reads any message (GET /v1/messages/{id}) as an auditor does, with every recipient's receipt: it
 * reads the same message's task (GET /v1/tasks/{id}), its delivery ledger and the log that holds its body. It was
 * answered 403 FORBIDDEN "Message <id> is visible only to its sender, its recipients and auditors." (no next step),
 * while a missing id got 404 "not in this mailbox's log" (MCP's get_message alike). Reading it writes nothing and marks
 * nothing seen.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  auditor = (await server.register(['@aud'], 'auditor'))['@aud'];
});
afterAll(() => server.close());

test('the admin reads a message like an auditor: body and every receipt, nothing written, nothing seen', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'plan', body: 'the plan' },
  });
  expect(sent.status).toBe(201);
  const id = sent.body.messageId as string;
  expect((await server.call('POST', `/v1/messages/${id}/read`, { token: t['@b'] })).status).toBe(200);
  const before = await server.eventCount();

  const asAdmin = await server.call('GET', `/v1/messages/${id}`, { token: server.adminToken });
  expect(asAdmin.status).toBe(200);
  expect(asAdmin.body).toMatchObject({
    messageId: id,
    from: '@a',
    to: ['@b', '@c'],
    body: 'the plan',
    readAt: null, // the admin is no recipient
    archivedAt: null,
    receipts: [
      { recipient: '@b', readAt: expect.any(String), archivedAt: null },
      { recipient: '@c', readAt: null, archivedAt: null },
    ],
  });
  const asAuditor = await server.call('GET', `/v1/messages/${id}`, { token: auditor });
  expect(asAuditor.body).toEqual(asAdmin.body);
  // MCP's get_message with the admin token answers the same.
  const overMcp = await server.call('POST', '/mcp', {
    token: server.adminToken,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_message', arguments: { messageId: id } } },
  });
  expect(overMcp.body.result.structuredContent).toEqual(asAdmin.body);

  expect(await server.eventCount()).toBe(before);
  // @c has not been shown it: the admin's read is not @c's.
  const count = await server.call('GET', '/v1/inbox/count', { token: t['@c'] });
  expect(count.body).toMatchObject({ unreadCount: 1, unseenCount: 1 });
});

test('an agent not party to it still gets 404, the same as for a missing id (no existence oracle)', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'x' } });
  const { status, body } = await server.call('GET', `/v1/messages/${sent.body.messageId}`, { token: t['@c'] });
  expect([status, body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
});
