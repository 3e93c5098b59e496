/**
 * A tag is 1-64 characters of printable text, as a thread id is (one rule, printableText.ts): a send whose tag holds a
 * control character, a line break, an invisible or bidi formatting character or whitespace at either end is 400
 * VALIDATION_FAILED naming the tag's index (`field: tags.1`) and the character, and nothing is written. The `tags`
 * filter (inbox and outbox, every form of the list, MCP too) takes exactly what a send takes. A tag that an older
 * version stored is still served.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { messageStream } from '../../src/events/streams';
import type { MessageSent, NewEvent, StoredEvent } from '../../src/events/types';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

let server: TestServer;
let t: Record<string, string>;
let mcp: Client;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  mcp = new Client({ name: 'tags-e2e', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@a']}` } },
    }),
  );
});
afterAll(async () => {
  await mcp.close();
  await server.close();
});

const send = (body: Record<string, unknown>) =>
  server.call('POST', '/v1/messages', { token: t['@a'], body: { to: ['@b', '@c'], subject: 'hello', body: 'x', ...body } });
const list = (who: string, query: string, box = 'inbox') =>
  server.call('GET', `/v1/messages?box=${box}&${query}`, { token: t[who] });
const ids = (page: { body: { messages: Array<{ messageId: string }> } }) => page.body.messages.map((m) => m.messageId);

const FORM = '1-64 characters of printable text';
const REFUSED: Array<[string, string, RegExp]> = [
  ['a line feed', 'tag\nfake', /'tags.1' holds U\+000A at index 3, which is not printable: a tag is 1-64 characters/],
  ['an escape sequence', '\u001b[2Jtag', /'tags.1' holds U\+001B at index 0/],
  ['a tab', 'ops\tdb', /'tags.1' holds U\+0009 at index 3/],
  ['a C1 control', 'ops\u0085', /'tags.1' holds U\+0085 at index 3/],
  ['a bidi override', 'ops\u202etxt', /'tags.1' holds U\+202E at index 3/],
  ['a zero-width space', 'o\u200bps', /'tags.1' holds U\+200B at index 1/],
  ['a byte order mark', '\ufeffops', /'tags.1' holds U\+FEFF at index 0/],
  ['a leading space', ' ops', /'tags.1' begins with whitespace \(U\+0020\): .* another tag than the one without it/],
  ['a trailing no-break space', 'ops\u00a0', /'tags.1' ends with whitespace \(U\+00A0\)/],
  ['only spaces', '  ', /'tags.1' begins with whitespace/],
];

test.each(REFUSED)(
  'a send whose second tag has %s is 400 VALIDATION_FAILED naming tags.1 and the character; nothing is written',
  async (_, tag, why) => {
    const before = await server.eventCount();
    for (const tags of [['ok', tag], JSON.stringify(['ok', tag])]) {
      const refused = await send({ tags });
      expect(refused).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.1' } });
      expect(refused.body.message).toMatch(why);
      expect(refused.body.message).toContain(FORM);
    }
    expect(await server.eventCount()).toBe(before);
  },
);

test.each(REFUSED)(
  'the filter tags= with %s is refused the same way, inbox and outbox, each form of the list',
  async (_, tag, why) => {
    const encoded = encodeURIComponent(tag);
    for (const [who, box] of [
      ['@b', 'inbox'],
      ['@a', 'outbox'],
    ]) {
      for (const query of [`tags=ok&tags=${encoded}`, `tags=${encodeURIComponent(JSON.stringify(['ok', tag]))}`]) {
        const refused = await list(who, query, box);
        expect(refused).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.1' } });
        expect(refused.body.message).toMatch(why);
      }
    }
  },
);

test('a tag over 64 characters is refused by the send and the filter alike', async () => {
  const long = 'x'.repeat(65);
  const sent = await send({ tags: [long] });
  expect(sent).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.0' } });
  expect(sent.body.message).toContain('at most 64 characters');
  const listed = await list('@b', `tags=${long}`);
  expect(listed).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', field: 'tags.0' } });
  expect(listed.body.message).toContain('at most 64 characters');
});

test('MCP: add_message and list_messages refuse the same tag with the same envelope; nothing is written', async () => {
  const before = await server.eventCount();
  for (const [name, args] of [
    ['add_message', { to: '@b', subject: 's', body: 'x', tags: ['ok', 'tag\nfake'] }],
    ['list_messages', { box: 'outbox', tags: ['ok', 'tag\nfake'] }],
  ] as const) {
    const result = (await mcp.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'tags.1' });
    expect(result.structuredContent!.message).toMatch(/holds U\+000A at index 3/);
  }
  expect(await server.eventCount()).toBe(before);
});

test('what a send takes, the filter takes and finds: words, any script, punctuation, 64 characters', async () => {
  for (const tag of ['review', 'two words', 'café ☕', '两个', 'p1:urgent/ops', 'x'.repeat(64)]) {
    const sent = await send({ tags: [tag, 'common'] });
    expect(sent.status).toBe(201);
    for (const who of ['@b', '@c']) {
      const inbox = await list(who, `tags=${encodeURIComponent(JSON.stringify([tag]))}`);
      expect(inbox.status).toBe(200);
      expect(ids(inbox)).toEqual([sent.body.messageId]);
    }
    const read = await server.call('GET', `/v1/messages/${sent.body.messageId}`, { token: t['@c'] });
    expect(read.body.tags).toEqual([tag, 'common']);
  }
});

test('a tag an older version stored (a line feed in it) is still served to each recipient', async () => {
  const sent = await send({ tags: ['ok'], subject: 'template' });
  const events = (await server.mailbox.eventStore.readAll(null, 1000)) as StoredEvent[];
  const original = events.find(
    (e) => e.type === 'MessageSent' && e.data.messageId === sent.body.messageId,
  ) as StoredEvent<MessageSent>;
  const olderId = randomUUID();
  const older: NewEvent<MessageSent> = {
    eventId: randomUUID(),
    type: 'MessageSent',
    data: { ...original.data, messageId: olderId, threadId: olderId, tags: ['ok', 'tag\nfake'] },
    metadata: original.metadata,
  };
  await server.mailbox.eventStore.append(messageStream(olderId), [older], 'no_stream');
  for (const who of ['@b', '@c']) {
    await waitFor(async () => ids(await list(who, 'tags=ok')).includes(olderId), { what: `${who} listing the older message` });
    const page = await list(who, 'tags=ok');
    expect(page.body.messages.find((m: { messageId: string }) => m.messageId === olderId).tags).toEqual(['ok', 'tag\nfake']);
    const read = await server.call('GET', `/v1/messages/${olderId}`, { token: t[who] });
    expect(read).toMatchObject({ status: 200, body: { tags: ['ok', 'tag\nfake'] } });
  }
});

test('comma-separated tags may have spaces around the commas: `tags=ops, db` is the list ops, db', async () => {
  const both = await send({ tags: ['ops', 'db'] });
  const opsOnly = await send({ tags: ['ops'] });
  expect([both.status, opsOnly.status]).toEqual([201, 201]);
  for (const who of ['@b', '@c']) {
    const spaced = await list(who, `tags=${encodeURIComponent('ops, db')}`);
    const plain = await list(who, 'tags=ops,db');
    expect([spaced.status, plain.status]).toEqual([200, 200]);
    expect(ids(spaced)).toContain(both.body.messageId);
    expect(ids(spaced)).toEqual(ids(plain));
  }
});
