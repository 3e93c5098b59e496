/**
 * JSON nested deeper than the documented limit (32 levels) is refused before
 * validation, on every surface: 400 VALIDATION_FAILED naming the path and the
 * limit, zero events, nothing logged at error level. Used to be a 500 with a
 * stack overflow in the log.
 */
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HttpServer } from '../../src/adapters/http/httpServer';
import { buildApiServer } from '../../src/server';
import { MAX_JSON_DEPTH } from '../../src/commands/jsonDepth';
import type { Mailbox } from '../../src/mailbox';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { allEvents, memoryMailbox } from '../support/fixtures';

const logged: Array<{ level: number; msg: string }> = [];
const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
let mailbox: Mailbox;
let http: HttpServer;
let url: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  mailbox = await memoryMailbox({ rateLimitPerSecond: 0 });
  http = buildApiServer(mailbox, logger);
  url = await http.listen('127.0.0.1', 0);
  for (const identity of ['@a', '@b', '@c'])
    tokens[identity] = (await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity })).token;
});
afterAll(async () => {
  await http.close();
  await mailbox.close();
});

/** `{d: {d: ... {}}}` with `levels` objects. */
const nested = (levels: number): unknown => {
  let value: unknown = {};
  for (let i = 1; i < levels; i += 1) value = { d: value };
  return value;
};
/** The same as JSON text, built without recursion (JSON.stringify itself overflows the stack at such depths). */
const nestedText = (levels: number): string => `${'{"d":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
const withData = (data: unknown) => ({
  to: '@b',
  subject: 'deep',
  body: 'x',
  task: { input: { parts: [{ kind: 'data', data }] } },
});
const taskText = (dataText: string) => `{"input":{"parts":[{"kind":"data","data":${dataText}}]}}`;
const withDataText = (dataText: string) => `{"to":"@b","subject":"deep","body":"x","task":${taskText(dataText)}}`;
// Five levels hold the data part: body > task > input > parts > part; the data's own levels come after them.
const ABOVE_DATA = 5;

async function post(body: string, token = tokens['@a']) {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function expectRefused(body: string) {
  const before = (await allEvents(mailbox)).length;
  const errorsBefore = logged.filter((line) => line.level >= 50).length;
  const answer = await post(body);
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
  expect(answer.body.limit).toBe(MAX_JSON_DEPTH);
  expect(answer.body.message).toContain(`${MAX_JSON_DEPTH} levels`);
  expect((await allEvents(mailbox)).length).toBe(before);
  expect(logged.filter((line) => line.level >= 50).length).toBe(errorsBefore);
  return answer.body;
}

test('the limit is 32 levels', () => expect(MAX_JSON_DEPTH).toBe(32));

test('task data 6,000 levels deep (36 KB): 400 naming the path and the limit, no event, no error log', async () => {
  const body = await expectRefused(withDataText(nestedText(6000)));
  expect(body.field).toMatch(/^task\.input\.parts\.0\.data(\.d)+$/);
  expect(body.message).toContain(body.field);
});

test('one level over the limit is refused; exactly at the limit is accepted', async () => {
  await expectRefused(JSON.stringify(withData(nested(MAX_JSON_DEPTH - ABOVE_DATA + 1))));
  const accepted = await post(JSON.stringify(withData(nested(MAX_JSON_DEPTH - ABOVE_DATA))));
  expect(accepted.status).toBe(201);
});

test('deep arrays count too', async () => {
  await expectRefused(`{"to":"@b","subject":"s","body":"b","tags":${'['.repeat(5000)}${']'.repeat(5000)}}`);
});

test('a task sent as a JSON-encoded string is held to the same limit', async () => {
  const body = await expectRefused(JSON.stringify({ ...withData(null), task: taskText(nestedText(6000)) }));
  expect(body.field).toMatch(/^task/);
});

test('MCP add_message with deep task data: a VALIDATION_FAILED tool error, no event, no error log', async () => {
  const client = new Client({ name: 'depth-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${tokens['@a']}` } },
    }),
  );
  try {
    const before = (await allEvents(mailbox)).length;
    const errorsBefore = logged.filter((line) => line.level >= 50).length;
    const result = (await client.callTool({ name: 'add_message', arguments: withData(nested(1000)) })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(result.isError).toBe(true);
    const envelope = JSON.parse(result.content[0].text);
    expect(envelope).toMatchObject({ code: 'VALIDATION_FAILED', limit: MAX_JSON_DEPTH });
    expect(envelope.field).toMatch(/^task\.input\.parts\.0\.data/);
    expect((await allEvents(mailbox)).length).toBe(before);
    expect(logged.filter((line) => line.level >= 50).length).toBe(errorsBefore);
  } finally {
    await client.close();
  }
});
