/**
 * Three agents over HTTP (sender A, recipients B and C): per-recipient read
 * state, who may read what, identity only from the token. Every rejection
 * proves that no event was written.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

const send = async (from: string, body: Record<string, unknown>) => {
  const sent = await server.call('POST', '/v1/messages', { token: t[from], body: { subject: 's', body: 'b', ...body } });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};
const unread = async (who: string) => (await server.call('GET', '/v1/messages?status=unread', { token: t[who] })).body;

async function expectRejected(request: Promise<{ status: number; body: any }>, status: number, code: string) {
  const before = await server.eventCount();
  const { status: actual, body } = await request;
  expect({ status: actual, code: body.code }).toEqual({ status, code });
  expect(body).toEqual(expect.objectContaining({ error: expect.any(String), message: expect.any(String) }));
  expect(await server.eventCount()).toBe(before);
  return body;
}

test('a broadcast is one message with independent read state per recipient', async () => {
  const id = await send('@a', { to: 'AGENT:*' });
  expect((await unread('@b')).messages.map((m: any) => m.messageId)).toContain(id);
  expect((await unread('@c')).messages.map((m: any) => m.messageId)).toContain(id);
  expect((await unread('@a')).messages.map((m: any) => m.messageId)).not.toContain(id);

  const read = await server.call('POST', `/v1/messages/${id}/read`, { token: t['@b'] });
  expect(read.status).toBe(200);
  expect(read.body).toEqual({ messageId: id, status: 'read', readAt: expect.any(String) });

  expect((await unread('@b')).messages.map((m: any) => m.messageId)).not.toContain(id);
  expect((await unread('@c')).messages.map((m: any) => m.messageId)).toContain(id);
  const asC = await server.call('GET', `/v1/messages/${id}`, { token: t['@c'] });
  expect(asC.body).toMatchObject({ messageId: id, from: '@a', to: 'AGENT:*', body: 'b', readAt: null });
  const asB = await server.call('GET', `/v1/messages/${id}`, { token: t['@b'] });
  expect(asB.body.readAt).toBe(read.body.readAt);

  // Reading twice keeps the first readAt and writes nothing.
  const before = await server.eventCount();
  const again = await server.call('POST', `/v1/messages/${id}/read`, { token: t['@b'] });
  expect(again.body.readAt).toBe(read.body.readAt);
  expect(await server.eventCount()).toBe(before);
});

test('get_message: sender and recipient may read a DM, a third agent gets 403', async () => {
  const id = await send('@a', { to: '@b', body: 'secret' });
  expect((await server.call('GET', `/v1/messages/${id}`, { token: t['@a'] })).body.body).toBe('secret');
  expect((await server.call('GET', `/v1/messages/${id}`, { token: t['@b'] })).body.body).toBe('secret');
  const refused = await expectRejected(server.call('GET', `/v1/messages/${id}`, { token: t['@c'] }), 404, 'MESSAGE_NOT_FOUND');
  expect(refused.body).toBeUndefined(); // no part of the message leaks
  expect(JSON.stringify(refused)).not.toContain('secret');
});

test('mark_read and archive by a non-party are 404 MESSAGE_NOT_FOUND, by the sender 403 NOT_A_RECIPIENT; nothing changes for the recipient', async () => {
  const id = await send('@a', { to: '@b' });
  await expectRejected(server.call('POST', `/v1/messages/${id}/read`, { token: t['@c'] }), 404, 'MESSAGE_NOT_FOUND');
  await expectRejected(server.call('POST', `/v1/messages/${id}/read`, { token: t['@a'] }), 403, 'NOT_A_RECIPIENT');
  await expectRejected(server.call('POST', `/v1/messages/${id}/archive`, { token: t['@c'] }), 404, 'MESSAGE_NOT_FOUND');
  expect((await unread('@b')).messages.map((m: any) => m.messageId)).toContain(id);
});

test('bulk mark_read reports per id, accepts a JSON-encoded array, and rejects other callers per id', async () => {
  const [one, two] = [await send('@a', { to: '@b' }), await send('@a', { to: '@b' })];
  const before = await server.eventCount();
  const byC = await server.call('POST', '/v1/messages/read', { token: t['@c'], body: { messageIds: [one] } });
  expect(await server.eventCount()).toBe(before);
  expect(byC.body.results).toEqual([
    { messageId: one, status: 'error', error: expect.objectContaining({ code: 'MESSAGE_NOT_FOUND' }) },
  ]);
  const byB = await server.call('POST', '/v1/messages/read', {
    token: t['@b'],
    body: { messageIds: JSON.stringify([one, two]) },
  });
  expect(byB.status).toBe(200);
  expect(byB.body.results.map((r: any) => [r.messageId, r.status])).toEqual([
    [one, 'read'],
    [two, 'read'],
  ]);
});

test('identity comes only from the token: from/sender/sentBy in the body are UNKNOWN_FIELD', async () => {
  for (const field of ['from', 'sender', 'sentBy']) {
    const body = await expectRejected(
      server.call('POST', '/v1/messages', {
        token: t['@a'],
        body: { to: '@c', subject: 's', body: 'b', [field]: '@someone-else' },
      }),
      400,
      'UNKNOWN_FIELD',
    );
    expect(body).toMatchObject({ field, allowed: expect.arrayContaining(['to', 'subject', 'body']) });
  }
});

test("A's token cannot act as B: it sees only A's inbox and cannot read or archive B's mail", async () => {
  const id = await send('@c', { to: '@b', subject: 'for b only' });
  const aInbox = await server.call('GET', '/v1/messages?status=all', { token: t['@a'] });
  expect(aInbox.body.messages.map((m: any) => m.messageId)).not.toContain(id);
  await expectRejected(server.call('GET', `/v1/messages/${id}`, { token: t['@a'] }), 404, 'MESSAGE_NOT_FOUND');
  await expectRejected(server.call('POST', `/v1/messages/${id}/archive`, { token: t['@a'] }), 404, 'MESSAGE_NOT_FOUND');
  // A list filter cannot switch identities either: `to` does not apply to the inbox.
  await expectRejected(server.call('GET', '/v1/messages?to=@b', { token: t['@a'] }), 400, 'FILTER_NOT_APPLICABLE');
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@c', subject: 'x', body: 'y' } });
  expect((await server.call('GET', `/v1/messages/${sent.body.messageId}`, { token: t['@c'] })).body.from).toBe('@a');
});

test('archive hides a message from its recipient only', async () => {
  const id = await send('@a', { to: 'AGENT:*' });
  const archived = await server.call('POST', `/v1/messages/${id}/archive`, { token: t['@b'] });
  expect(archived.body).toEqual({ messageId: id, status: 'archived', archivedAt: expect.any(String), changed: true });
  // Again: the same answer said it archived it again; now it says nothing changed, and nothing is written.
  const before = await server.eventCount();
  const again = await server.call('POST', `/v1/messages/${id}/archive`, { token: t['@b'] });
  expect(again.body).toEqual({ ...archived.body, changed: false });
  expect(await server.eventCount()).toBe(before);
  expect(
    (await server.call('GET', '/v1/messages?status=all', { token: t['@b'] })).body.messages.map((m: any) => m.messageId),
  ).not.toContain(id);
  expect((await unread('@c')).messages.map((m: any) => m.messageId)).toContain(id);
});
