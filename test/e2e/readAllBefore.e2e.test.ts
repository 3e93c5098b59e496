/**
 * mark_read {all: true, before} is honored exactly when `before` is finer than a millisecond. The log's times are
 * whole milliseconds; `before` accepts any ISO 8601 fraction (as every time input does), and was compared after
 * Date.parse had cut it to milliseconds: `before: <sentAt>001` (a microsecond after the send) left the message
 * unread, as if it had not been sent before that time. Over HTTP and MCP, with the receipts each call wrote.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { allEvents } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let tokens: Record<string, string>;
let mcp: Client;

beforeAll(async () => {
  server = await startTestServer();
  tokens = await server.register(['@a', '@b', '@c']);
  mcp = new Client({ name: 'read-all-before', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${tokens['@c']}` } },
    }),
  );
});
afterAll(async () => {
  await mcp.close();
  await server.close();
});

/** `sentAt` (whole milliseconds) with more fraction digits: '...00.123Z' + '001' is '...00.123001Z'. */
const finer = (sentAt: string, digits: string) => sentAt.replace(/Z$/, `${digits}Z`);

const receipts = async () => (await allEvents(server.mailbox)).filter((event) => event.type === 'ReceiptRead');

async function send(to: string): Promise<{ messageId: string; sentAt: string }> {
  const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to, subject: 's', body: 'x' } });
  expect(sent.status).toBe(201);
  expect(sent.body.sentAt).toMatch(/\.\d{3}Z$/);
  return sent.body;
}

type ReadAll = { changed: number; messageIds: string[] };

const viaHttp = async (before: string): Promise<ReadAll> => {
  const answer = await server.call('POST', '/v1/messages/read', {
    token: tokens['@b'],
    body: { all: true, includeUnseen: true, before },
  });
  expect(answer.status).toBe(200);
  return answer.body;
};

const viaMcp = async (before: string): Promise<ReadAll> => {
  const result = (await mcp.callTool({ name: 'mark_read', arguments: { all: true, includeUnseen: true, before } })) as {
    isError?: boolean;
    content: Array<{ text: string }>;
  };
  expect(result.isError).toBeFalsy();
  return JSON.parse(result.content[0].text);
};

test.each([
  ['HTTP', '@b', viaHttp],
  ['MCP', '@c', viaMcp],
] as const)(
  '%s: a before finer than a millisecond is compared exactly, and writes exactly the receipts it reports',
  async (_surface, reader, readAll) => {
    const { messageId, sentAt } = await send(reader);

    // The very time of the send, written with more digits: the message was not sent before it. Nothing is written.
    let written = (await receipts()).length;
    expect(await readAll(finer(sentAt, '000000'))).toMatchObject({ changed: 0, messageIds: [] });
    expect(await receipts()).toHaveLength(written);

    // A microsecond after the send: it was sent before that, so it is marked, once.
    expect(await readAll(finer(sentAt, '000001'))).toMatchObject({ changed: 1, messageIds: [messageId] });
    const after = await receipts();
    expect(after).toHaveLength(written + 1);
    expect(after.at(-1)).toMatchObject({ streamName: `mailbox-message-${messageId}`, data: { reader } });

    // A nanosecond after the send, likewise.
    const next = await send(reader);
    written = after.length;
    expect(await readAll(finer(next.sentAt, '000000001'))).toMatchObject({ changed: 1, messageIds: [next.messageId] });
    expect(await receipts()).toHaveLength(written + 1);
  },
);
