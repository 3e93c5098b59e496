/**
 * Issue 13 over HTTP, with A (sender), B and C (recipients) and D (neither): several recipients in one
 * message, unarchive and the archived view. Every rejection proves that no event was written.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c', '@d']);
});
afterAll(() => server.close());

const ids = async (who: string, query = '') =>
  (await server.call('GET', `/v1/messages${query}`, { token: t[who] })).body.messages.map((m: any) => m.messageId);

async function expectRejected(request: Promise<{ status: number; body: any }>, status: number, code: string) {
  const before = await server.eventCount();
  const { status: actual, body } = await request;
  expect({ status: actual, code: body.code }).toEqual({ status, code });
  expect(await server.eventCount()).toBe(before);
  return body;
}

test('to: ["@b", "@c"] is one message to both; D sees nothing; a list entry of the wrong shape is refused by index', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: ['@b', '@c'], subject: 's', body: 'b' } });
  expect(sent.status).toBe(201);
  expect(sent.body).toMatchObject({ to: ['@b', '@c'], recipients: ['@b', '@c'] });
  expect(await ids('@b', '?status=unread')).toContain(sent.body.messageId);
  expect(await ids('@c', '?status=unread')).toContain(sent.body.messageId);
  expect(await ids('@d')).not.toContain(sent.body.messageId);
  const wrong = await expectRejected(
    server.call('POST', '/v1/messages', { token: t['@a'], body: { to: ['@b', 'AGENT:gpt'], subject: 's', body: 'b' } }),
    400,
    'INVALID_RECIPIENT_SHAPE',
  );
  expect(wrong).toMatchObject({ index: 1, entry: 'AGENT:gpt' });
});

test('POST /v1/messages/{id}/unarchive brings it back to the inbox and the count; status=archived lists archived ones', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'b' } });
  const id = sent.body.messageId as string;
  const count = async () => (await server.call('GET', '/v1/inbox/count', { token: t['@b'] })).body.unreadCount as number;
  const before = await count();
  expect((await server.call('POST', `/v1/messages/${id}/archive`, { token: t['@b'] })).status).toBe(200);
  expect(await count()).toBe(before - 1);
  expect(await ids('@b', '?status=archived')).toEqual([id]);
  const back = await server.call('POST', `/v1/messages/${id}/unarchive`, { token: t['@b'] });
  expect(back).toMatchObject({ status: 200, body: { messageId: id, status: 'inbox', readAt: null, changed: true } });
  expect(await count()).toBe(before);
  expect(await ids('@b', '?status=archived')).toEqual([]);
  expect(await ids('@b', '?status=unread')).toContain(id);
  await expectRejected(server.call('POST', `/v1/messages/${id}/unarchive`, { token: t['@a'] }), 403, 'NOT_A_RECIPIENT');
  await expectRejected(server.call('POST', `/v1/messages/${id}/unarchive`, { token: t['@d'] }), 404, 'MESSAGE_NOT_FOUND');
});

test('seen over HTTP: the first listing shows seenAt null and writes the mark afterwards; counts report unseenCount', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@c', subject: 'seen?', body: 'b' } });
  const id = sent.body.messageId as string;
  const count = async () => (await server.call('GET', '/v1/inbox/count', { token: t['@c'] })).body;
  const before = await count();
  expect(before.unseenCount).toBeGreaterThanOrEqual(1);
  const first = await server.call('GET', '/v1/messages?status=unread', { token: t['@c'] });
  expect(first.body.messages.find((m: any) => m.messageId === id)).toMatchObject({ seenAt: null, readAt: null });
  // The mark is written off the request path: wait for the positive signal, a listing that shows it.
  let seenAt: string | null = null;
  for (let attempt = 0; attempt < 200 && seenAt === null; attempt++) {
    const page = await server.call('GET', '/v1/messages?status=unread', { token: t['@c'] });
    seenAt = page.body.messages.find((m: any) => m.messageId === id).seenAt;
    if (seenAt === null) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(seenAt).toEqual(expect.any(String));
  expect(await count()).toMatchObject({ unreadCount: before.unreadCount, unseenCount: 0 });
});

test('POST /v1/messages/read {all: true}: seen ones marked, unseen withheld and counted; again: nothing changes', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@d', subject: 'x', body: 'b' } });
  const first = await server.call('POST', '/v1/messages/read', { token: t['@d'], body: { all: true } });
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ all: true, status: 'read', changed: 0, withheldUnseenCount: 1, readAt: null });
  await server.call('GET', '/v1/messages', { token: t['@d'] }); // returned: seen
  const second = await server.call('POST', '/v1/messages/read', { token: t['@d'], body: { all: true } });
  expect(second.body).toMatchObject({ changed: 1, messageIds: [sent.body.messageId], withheldUnseenCount: 0 });
  const before = await server.eventCount();
  const third = await server.call('POST', '/v1/messages/read', { token: t['@d'], body: { all: true, includeUnseen: true } });
  expect(third.body).toMatchObject({ changed: 0, withheldUnseenCount: 0 });
  expect(await server.eventCount()).toBe(before);
});
