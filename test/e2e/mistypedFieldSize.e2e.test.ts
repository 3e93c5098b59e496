/**
 * A field given a value of the wrong type is told its type, not a size of the wrong type: zod checks a list's item
 * count on a string's length and a string's length on an array, so artifacts sent as text were told "'artifacts' must be a list (a JSON array), not text; 'artifacts' must be at most 32 characters long" and a
 * subject sent as an array "'subject' must be text (a JSON string), not an array; 'subject' must hold at most 200
 * items": forms the field never takes. Over HTTP and MCP, nothing written. @s sends, @b holds, @c is refused too.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@s', '@b', '@c']);
});
afterAll(() => server.close());

/** Artifacts written as prose: text, not a list nor its JSON (artifactsEncoded.e2e: the JSON is taken). */
const ARTIFACTS_AS_TEXT = 'report: all green, every check passed, see the build log for the details of each suite';
const SHOWN_LIST = `an array [${'"a",'.repeat(14)}...`;
/** The refusal of that text: the form, the value shown cut to 60 characters, no size of a string. */
const TEXT_REFUSED =
  `'artifacts' must be a list of artifacts (an artifact is {"name"?: "...", "parts": [{"kind": "text", "text": "..."}, ...]}), ` +
  `e.g. "artifacts": [{"parts": [{"kind": "text", "text": "LGTM"}]}], or that array JSON-encoded as one string; ` +
  `the plain string "report: all green, every check passed, see the build log..." is not one (comma-separated text is not split).`;

const mcp = async (token: string) => {
  const client = new Client({ name: 'mistyped', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
};

test('artifacts given as text and a subject given as an array are told the type alone (HTTP)', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: '@b', subject: 's', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'Working' } })).status).toBe(
    200,
  );
  const before = await server.eventCount();

  const done = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: t['@b'],
    body: { to: 'Completed', artifacts: ARTIFACTS_AS_TEXT },
  });
  expect(done.status).toBe(400);
  expect(done.body).toMatchObject({
    code: 'VALIDATION_FAILED',
    field: 'artifacts',
    message: `update_task: ${TEXT_REFUSED}`,
    issues: [{ field: 'artifacts', message: TEXT_REFUSED.replace(/^'artifacts' /, '') }],
  });
  expect(done.body.issues).toHaveLength(1);

  for (const who of ['@s', '@c']) {
    const send = await server.call('POST', '/v1/messages', {
      token: t[who],
      body: { to: '@b', subject: Array.from({ length: 201 }, () => 'a'), body: 'x' },
    });
    expect(send.status).toBe(400);
    expect(send.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: `add_message: 'subject' must be text (a JSON string), not ${SHOWN_LIST}`,
      issues: [{ field: 'subject', message: `must be text (a JSON string), not ${SHOWN_LIST}` }],
    });
    expect(send.body.issues).toHaveLength(1);
  }
  // A list of the right type but too long is still told its size.
  const many = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: t['@b'],
    body: { to: 'Completed', artifacts: Array.from({ length: 33 }, () => ({ parts: [{ kind: 'text', text: 'a' }] })) },
  });
  expect(many.body).toMatchObject({
    code: 'VALIDATION_FAILED',
    message: "update_task: 'artifacts' must hold at most 32 items (it has 33)",
  });
  expect(await server.eventCount()).toBe(before);
});

test('update_task with artifacts as prose (MCP): the form alone, nothing written', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: '@b', subject: 's', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  const b = await mcp(t['@b']);
  try {
    await b.callTool({ name: 'update_task', arguments: { taskId, to: 'working' } });
    const before = await server.eventCount();
    const done = (await b.callTool({
      name: 'update_task',
      arguments: { taskId, to: 'completed', artifacts: ARTIFACTS_AS_TEXT },
    })) as { isError?: boolean; structuredContent?: { message: string; issues: unknown[] } };
    expect(done).toMatchObject({
      isError: true,
      structuredContent: {
        code: 'VALIDATION_FAILED',
        message: `update_task: ${TEXT_REFUSED}`,
      },
    });
    expect(done.structuredContent!.issues).toHaveLength(1);
    expect(await server.eventCount()).toBe(before);
  } finally {
    await b.close();
  }
});
