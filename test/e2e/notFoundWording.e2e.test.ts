/**
 * A message id that names no message is 404 MESSAGE_NOT_FOUND for everyone, worded for who asks: an agent is told it
 * is none of those it sent or received (the same answer as for a message it is not party to: no existence oracle); an
 * auditor or admin, who may look at every message, is told it is not in the log. They were told "among those you sent
 * or received", untrue for them (they send and receive none). Three agents, an auditor; nothing is written.
 */
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let tokens: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  tokens = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@aud'], 'auditor')) };
});
afterAll(async () => server.close());

const missing = randomUUID();

test.each([
  ['auditor', 'GET', `/v1/messages/${missing}`],
  ['auditor', 'GET', `/v1/audit/messages/${missing}`],
  ['auditor', 'GET', `/v1/messages/${missing}/delivery`],
  ['admin', 'GET', `/v1/audit/messages/${missing}`],
])('%s %s %s: not in the log', async (who, method, path) => {
  const before = await server.eventCount();
  const token = who === 'admin' ? server.adminToken : tokens['@aud'];
  const { status, body } = await server.call(method, path, { token });
  expect([status, body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
  expect(body.message).toBe(
    `No message ${missing} exists in this mailbox's log; check the id (GET /v1/audit/events lists every event).`,
  );
  expect(await server.eventCount()).toBe(before);
});

test("an agent: none of those it sent or received, for a missing message and for another's alike", async () => {
  const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 's', body: 'x' } });
  expect(sent.status).toBe(201);
  for (const id of [missing, sent.body.messageId as string]) {
    const { status, body } = await server.call('GET', `/v1/messages/${id}`, { token: tokens['@c'] });
    expect([status, body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
    expect(body.message).toBe(`No message ${id} exists among those you sent or received; check the id in your inbox or outbox.`);
  }
});
