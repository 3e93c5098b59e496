/**
 * A thread id given on a send is 1-200 characters of printable text (a message id, or a name such as
 * "deploy-2030-05"): control characters, line breaks, invisible or bidi formatting characters and whitespace at
 * either end are refused with 400 VALIDATION_FAILED teaching the form, and nothing is written. The inbox and outbox
 * filter `threadId=` and mark_read's take exactly what a send takes. A thread id is a label of each inbox: naming
 * another conversation's thread is allowed (the message shows who sent it), as a named thread is shared by design.
 */
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
