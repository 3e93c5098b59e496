/**
 * A thread id given on a send is 1-200 characters of printable text (a message id, or a name such as
 * "deploy-2030-05"): control characters, line breaks, invisible or bidi formatting characters and whitespace at
 * either end are refused with 400 VALIDATION_FAILED teaching the form, and nothing is written. The inbox and outbox
 * filter `threadId=` and mark_read's take exactly what a send takes. A thread id is a label of each inbox: naming
 * another conversation's thread is allowed (the message shows who sent it), as a named thread is shared by design.
 */
import { deliveryLedgerSchema } from '../../src/application/deliveryResponseSchemas';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  await server.close();
});

const send = (from: string, body: Record<string, unknown>) =>
  server.call('POST', '/v1/messages', { token: t[from], body: { to: '@b', subject: 'hello', body: 'x', ...body } });
const list = (who: string, threadId: string, box = 'inbox') =>
  server.call('GET', `/v1/messages?box=${box}&threadId=${encodeURIComponent(threadId)}`, { token: t[who] });

const REFUSED: Array<[string, string, RegExp]> = [
  ['empty', '', /'threadId' must not be empty/],
  ['201 characters', 'x'.repeat(201), /at most 200 characters/],
  ['10 KB', 'x'.repeat(10_240), /at most 200 characters/],
  ['a line feed', 'deploy\nnotes', /holds U\+000A at index 6, which is not printable/],
  ['an escape sequence', '\u001b[2Jdeploy', /holds U\+001B at index 0/],
  ['a tab', 'deploy\t2030', /holds U\+0009 at index 6/],
  ['DEL', 'deploy\u007f', /holds U\+007F/],
  ['a C1 control', 'deploy\u0085', /holds U\+0085/],
  ['a line separator', 'deploy\u2028x', /holds U\+2028/],
  ['a bidi override', 'deploy\u202eolpmet', /holds U\+202E/],
  ['a zero-width space', 'dep\u200bloy', /holds U\+200B/],
  ['a byte order mark', '\ufeffdeploy', /holds U\+FEFF/],
  ['only spaces', '   ', /begins with whitespace \(U\+0020\)/],
  ['a leading space', ' deploy', /begins with whitespace .* another thread than the one without it/],
  ['a trailing space', 'deploy ', /ends with whitespace/],
  ['a trailing no-break space', 'deploy\u00a0', /ends with whitespace \(U\+00A0\)/],
];

test.each(REFUSED)(
  'a send whose threadId has %s is 400 VALIDATION_FAILED teaching the form; nothing is written',
  async (_, threadId, why) => {
    const before = await server.eventCount();
    const refused = await send('@a', { threadId });
    expect(refused).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'threadId' } });
    expect(refused.body.message).toMatch(why);
    if (threadId.length > 0 && threadId.length <= 200)
      expect(refused.body.message).toContain('1-200 characters of printable text');
    expect(await server.eventCount()).toBe(before);
  },
);

test.each(REFUSED)(
  'the filter threadId= with %s is refused the same way, inbox, outbox and mark_read',
  async (_, threadId, why) => {
    for (const [who, box] of [
      ['@b', 'inbox'],
      ['@a', 'outbox'],
    ]) {
      const refused = await list(who, threadId, box);
      expect(refused).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'threadId' } });
      expect(refused.body.message).toMatch(why);
    }
    const before = await server.eventCount();
    const marked = await server.call('POST', '/v1/messages/read', { token: t['@b'], body: { all: true, threadId } });
    expect(marked).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'threadId' } });
    expect(await server.eventCount()).toBe(before);
  },
);

test('what a send takes, the filter takes and finds: names, words, any script, a message id, 200 characters', async () => {
  const first = await send('@a', {});
  expect(first.status).toBe(201);
  for (const threadId of ['deploy-2030-05', 'review #12 — café ☕', '两个 words', 'x'.repeat(200), first.body.messageId]) {
    const sent = await send('@a', { threadId });
    expect(sent).toMatchObject({ status: 201, body: { threadId } });
    const inbox = await list('@b', threadId);
    expect(inbox.status).toBe(200);
    expect(inbox.body.messages.map((m: { messageId: string }) => m.messageId)).toContain(sent.body.messageId);
    expect(inbox.body.messages.every((m: { threadId: string }) => m.threadId === threadId)).toBe(true);
    expect((await list('@a', threadId, 'outbox')).status).toBe(200);
  }
});

test("naming another conversation's thread is allowed: each recipient's copy shows who sent it", async () => {
  const theirs = await send('@a', { subject: 'a to b' });
  const joined = await send('@c', { threadId: theirs.body.threadId, subject: 'c joins' });
  expect(joined).toMatchObject({ status: 201, body: { threadId: theirs.body.threadId } });
  const thread = await list('@b', theirs.body.threadId);
  expect(thread.body.messages.map((m: { from: string; subject: string }) => [m.from, m.subject])).toEqual([
    ['@c', 'c joins'],
    ['@a', 'a to b'],
  ]);
});

describe('a thread id of the form of a message id is that message id, in any case', () => {
  const threadOf = (page: { body: { messages: Array<{ messageId: string; threadId: string }> } }) =>
    page.body.messages.map((m) => [m.messageId, m.threadId]);

  test('a message id is case-insensitive: GET /v1/messages/<ID IN UPPER CASE> reads it', async () => {
    const sent = await send('@a', { subject: 'upper get' });
    const read = await server.call('GET', `/v1/messages/${sent.body.messageId.toUpperCase()}`, { token: t['@b'] });
    expect(read).toMatchObject({ status: 200, body: { messageId: sent.body.messageId } });
  });

  test('threadId = a message id in upper case joins its thread (stored lower case); the filter finds it in either case', async () => {
    const first = await send('@a', { subject: 'the thread' });
    const id = first.body.messageId as string;
    const joined = await send('@c', { subject: 'joined in upper case', threadId: id.toUpperCase() });
    expect(joined).toMatchObject({ status: 201, body: { threadId: id } });
    const mixed = await send('@a', { subject: 'joined in mixed case', threadId: id.slice(0, 18).toUpperCase() + id.slice(18) });
    expect(mixed).toMatchObject({ status: 201, body: { threadId: id } });
    const expected = [
      [mixed.body.messageId, id],
      [joined.body.messageId, id],
      [first.body.messageId, id],
    ];
    for (const form of [id, id.toUpperCase()]) {
      expect(threadOf(await list('@b', form))).toEqual(expected);
      expect(threadOf(await list('@c', form, 'outbox'))).toEqual([[joined.body.messageId, id]]);
    }
    const read = await server.call('GET', `/v1/messages/${joined.body.messageId}`, { token: t['@b'] });
    expect(read.body.threadId).toBe(id);
    // mark_read's filter canonicalises the same way: all three, seen by the listing above, are marked.
    const marked = await server.call('POST', '/v1/messages/read', {
      token: t['@b'],
      body: { all: true, threadId: id.toUpperCase() },
    });
    expect(marked).toMatchObject({ status: 200, body: { changed: 3 } });
    expect([...marked.body.messageIds].sort()).toEqual(expected.map(([messageId]) => messageId).sort());
  });

  test('the upper-case form of a message id no one sent is lower-cased too (the form decides, not the existence)', async () => {
    const unknown = 'A0B1C2D3-E4F5-4A6B-8C7D-8E9F0A1B2C3D';
    const sent = await send('@a', { threadId: unknown });
    expect(sent).toMatchObject({ status: 201, body: { threadId: unknown.toLowerCase() } });
    expect(threadOf(await list('@b', unknown.toLowerCase()))).toEqual([[sent.body.messageId, unknown.toLowerCase()]]);
  });

  test('any other thread name is kept and matched as typed, case included', async () => {
    const notAnId = 'ABCDEF12-3456-0789-A123-456789ABCDEF'; // version 0: not the form of a message id
    for (const name of ['Deploy-Case', notAnId]) {
      const sent = await send('@a', { threadId: name });
      expect(sent).toMatchObject({ status: 201, body: { threadId: name } });
      expect(threadOf(await list('@b', name))).toEqual([[sent.body.messageId, name]]);
      const other = name.toLowerCase();
      expect((await list('@b', other)).body.messages).toEqual([]);
    }
  });

  test('replies inherit their parent thread as before; inReplyTo and threadId in upper case agree with it', async () => {
    const parent = await send('@a', { subject: 'parent' });
    const id = parent.body.messageId as string;
    const reply = await server.call('POST', '/v1/messages', {
      token: t['@b'],
      body: { to: '@a', subject: 're', body: 'x', inReplyTo: id.toUpperCase() },
    });
    expect(reply).toMatchObject({ status: 201, body: { threadId: id } });
    const both = await server.call('POST', '/v1/messages', {
      token: t['@b'],
      body: { to: '@a', subject: 're 2', body: 'x', inReplyTo: id, threadId: id.toUpperCase() },
    });
    expect(both).toMatchObject({ status: 201, body: { threadId: id } });
    const named = await send('@a', { subject: 'named', threadId: 'Release-Notes' });
    const namedReply = await server.call('POST', '/v1/messages', {
      token: t['@b'],
      body: { to: '@a', subject: 're named', body: 'x', inReplyTo: named.body.messageId },
    });
    expect(namedReply).toMatchObject({ status: 201, body: { threadId: 'Release-Notes' } });
    expect(threadOf(await list('@a', id))).toEqual([
      [both.body.messageId, id],
      [reply.body.messageId, id],
    ]);
  });
});

test("a named thread's delivery ledger matches its documented answer (threadId is any thread id, not only a message id)", async () => {
  const sent = await send('@a', { threadId: 'deploy-2030-05' });
  expect(sent.status).toBe(201);
  const delivery = await server.call('GET', `/v1/messages/${sent.body.messageId}/delivery`, { token: t['@a'] });
  expect(delivery.status).toBe(200);
  expect(delivery.body.threadId).toBe('deploy-2030-05');
  // The schema the OpenAPI document and get_delivery's outputSchema are made of: it said format uuid.
  expect(deliveryLedgerSchema.safeParse(delivery.body).error?.issues ?? []).toEqual([]);
});
