/**
 * A request body whose bytes are not UTF-8 is refused, not repaired: the server decoded bodies leniently, so a
 * send written in Latin-1 ("café" as 63 61 66 E9) was stored and delivered as "caf\uFFFD" with 201 Created. Now
 * it is 400 VALIDATION_FAILED naming the byte and its offset (and a non-UTF-8 charset the request declared), with
 * zero events; three agents, so that neither recipient receives anything. `mailbox send --body-file` is held to
 * the same rule on the client side, which read the file as 'utf8' and sent the replacement characters.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildProgram } from '../../src/cli/main';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());
afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
});

/** `text` as UTF-8 with `latin1` (one byte a character) where `{}` stands. */
const mixed = (text: string, latin1: string) => {
  const [before, after] = text.split('{}');
  return Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from(latin1, 'latin1'), Buffer.from(after, 'utf8')]);
};

const inboxOf = async (identity: string) =>
  (await server.call('GET', '/v1/messages', { token: t[identity] })).body.messages as Array<Record<string, unknown>>;

async function refused(urlPath: string, rawBody: Buffer, contentType = 'application/json') {
  const before = await server.eventCount();
  const response = await server.call('POST', urlPath, { token: t['@a'], rawBody, headers: { 'content-type': contentType } });
  // POST /mcp answers in JSON-RPC's shape: a Parse error whose data is the envelope.
  const envelope = urlPath.startsWith('/mcp') ? response.body.error.data : response.body;
  if (urlPath.startsWith('/mcp')) expect([response.body.error.code, response.body.id]).toEqual([-32700, null]);
  expect([response.status, envelope.code]).toEqual([400, 'VALIDATION_FAILED']);
  expect(await server.eventCount()).toBe(before);
  return envelope;
}

test('a send with a Latin-1 byte: 400 naming the byte and its offset, nothing sent to either recipient', async () => {
  const raw = mixed('{"to":["@b","@c"],"subject":"caf{}","body":"b"}', 'é');
  const body = await refused('/v1/messages', raw);
  const offset = raw.indexOf(0xe9);
  expect(body).toMatchObject({ field: 'body', offset });
  expect(body.message).toBe(
    `The request body is not valid UTF-8: byte 0xE9 at offset ${offset} is not part of a UTF-8 character; ` +
      'send the JSON encoded as UTF-8 (nothing was stored: invalid bytes are never replaced).',
  );
  expect(await inboxOf('@b')).toEqual([]);
  expect(await inboxOf('@c')).toEqual([]);
});

test('a charset other than UTF-8 in the Content-Type is named: JSON is read as UTF-8 only', async () => {
  const body = await refused(
    '/v1/messages',
    mixed('{"to":"@b","subject":"s","body":"na{}ve"}', 'ï'),
    'application/json; charset=ISO-8859-1',
  );
  expect(body.message).toContain('(the Content-Type says charset=ISO-8859-1; JSON is read as UTF-8 only)');
});

test('an MCP request over HTTP with an invalid byte is refused before any tool runs', async () => {
  const raw = mixed(
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_message",' +
      '"arguments":{"to":["@b","@c"],"subject":"s","body":"{}"}}}',
    '\xff',
  );
  const body = await refused('/mcp', raw);
  expect(body.offset).toBe(raw.indexOf(0xff));
});

test('UTF-8 text, a U+FFFD sent as such included, is stored exactly', async () => {
  const subject = 'café \uFFFD 😀 naïve';
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    rawBody: Buffer.from(JSON.stringify({ to: ['@b', '@c'], subject, body: 'ü' }), 'utf8'),
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  expect(sent.status).toBe(201);
  for (const recipient of ['@b', '@c']) {
    const got = await server.call('GET', `/v1/messages/${sent.body.messageId}`, { token: t[recipient] });
    expect([got.body.subject, got.body.body]).toEqual([subject, 'ü']);
  }
});

test('mailbox send --body-file with a Latin-1 file: refused naming the byte, exit code 1, nothing sent', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailbox-utf8-'));
  const file = path.join(dir, 'notes.txt');
  fs.writeFileSync(file, Buffer.from('caf\xe9 au lait', 'latin1'));
  const err: string[] = [];
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  const before = await server.eventCount();
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'send', '@b', '@c', 'notes', '--body-file', file, '--url', server.url, '--token', t['@a']]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  expect(process.exitCode).toBe(1);
  expect(err.join('')).toBe(
    `error: The body from '${file}' is not UTF-8: byte 0xE9 at offset 3 is not part of a UTF-8 character; ` +
      'convert it (e.g. iconv -f latin1 -t utf-8) and send again. Nothing was sent. (VALIDATION_FAILED)\n',
  );
  expect(await server.eventCount()).toBe(before);
});
