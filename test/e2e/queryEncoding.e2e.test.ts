/**
 * A query string that is not percent-encoded UTF-8 is refused, not read as written: fastify's parser kept what it
 * could not decode, so `GET /v1/messages?tags=caf%E9` ("café" in Latin-1) filtered on the tag 'caf%E9' and
 * answered an empty page with 200, as did `tags=%ZZ` and `tags=100%`. Now 400 VALIDATION_FAILED names the
 * parameter and the escape, and no event is written (a read with such a query marks nothing read); three agents,
 * so that the other recipient's copy is seen to stay untouched.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let messageId: string;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 's', body: 'b', tags: ['café', '100%'] },
  });
  expect(sent.status).toBe(201);
  messageId = sent.body.messageId;
});
afterAll(() => server.close());

async function refused(method: string, urlPath: string, token = t['@b']) {
  const before = await server.eventCount();
  const response = await server.call(method, urlPath, { token });
  expect([response.status, response.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  expect(Object.keys(response.body).sort()).toEqual(['code', 'error', 'field', 'message']);
  expect(await server.eventCount()).toBe(before);
  return response.body;
}

const tagsOfInbox = async (identity: string, query: string) => {
  const response = await server.call('GET', `/v1/messages?${query}`, { token: t[identity] });
  expect(response.status).toBe(200);
  return (response.body.messages as Array<{ messageId: string; readAt: string | null }>).map((m) => m.messageId);
};

test('a Latin-1 byte in a filter: 400 naming the parameter and the byte, not an empty page', async () => {
  expect(await refused('GET', '/v1/messages?tags=caf%E9')).toEqual({
    error: 'Validation failed',
    code: 'VALIDATION_FAILED',
    field: 'tags',
    message:
      "The value of the query parameter 'tags' is not percent-encoded UTF-8: byte 0xE9 at offset 3 of what it decodes to " +
      'is not part of a UTF-8 character; percent-encode the UTF-8 bytes of the text (é is %C3%A9, not %E9). Nothing was done.',
  });
  expect((await refused('GET', '/v1/messages?tags=caf%C3%A9&tags=caf%E9')).field).toBe('tags');
});

test.each([
  ['%ZZ', "'%ZZ' at character 0"],
  ['%', "'%' at character 0"],
  ['100%', "'%' at character 3"],
  ['a%2', "'%2' at character 1"],
])('a malformed escape (tags=%s) is refused, teaching %%25', async (value, where) => {
  const body = await refused('GET', `/v1/messages?tags=${value}`);
  expect(body.message).toBe(
    `The value of the query parameter 'tags' is not percent-encoded UTF-8: ${where} is not a percent escape ` +
      '(% and two hexadecimal digits); write a literal % as %25. Nothing was done.',
  );
});

test('a parameter name that does not decode is named as written', async () => {
  const body = await refused('GET', '/v1/messages?caf%E9=1');
  expect(body.field).toBe('caf%E9');
  expect(body.message).toContain("The query parameter name 'caf%E9' is not percent-encoded UTF-8");
});

test('a write with such a query changes nothing for either recipient', async () => {
  await refused('POST', `/v1/messages/${messageId}/read?note=%E9`);
  for (const identity of ['@b', '@c']) {
    const got = await server.call('GET', `/v1/messages?box=inbox&status=unread`, { token: t[identity] });
    expect(got.body.unreadCount).toBe(1);
  }
});

test('UTF-8 percent-encoded, a literal % as %25 and U+FFFD sent as such, are honored exactly', async () => {
  expect(await tagsOfInbox('@b', 'tags=caf%C3%A9')).toEqual([messageId]);
  expect(await tagsOfInbox('@c', 'tags=100%25')).toEqual([messageId]);
  expect(await tagsOfInbox('@c', 'ta%67s=caf%C3%A9')).toEqual([messageId]);
  expect(await tagsOfInbox('@b', 'tags=%EF%BF%BD')).toEqual([]);
});
