/**
 * A task's content has a size limit of its own, 64 KiB as JSON: the envelope of a send (its input parts above all)
 * and the artifacts of a completion. It was bounded only by the HTTP request limit (a 300 KB data part was sent, 201)
 * and, through the library, by nothing. Over it: 400 VALIDATION_FAILED naming the field, the size, the limit and where
 * the bulk is, on every surface, and no event written. At the limit: accepted.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isMailboxError } from '../../src/errors';
import { MAX_TASK_BYTES } from '../../src/commands/jsonSize';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b']);
});
afterAll(() => server.close());

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** A task whose one data part holds `filler`, sized to `bytes` bytes of JSON in all. */
function taskOf(bytes: number) {
  const shape = (filler: string) => ({ input: { parts: [{ kind: 'data' as const, data: { x: filler } }] } });
  return shape('y'.repeat(bytes - bytesOf(shape(''))));
}

/** Artifacts holding one text part, sized to `bytes` bytes of JSON in all. */
function artifactsOf(bytes: number) {
  const shape = (text: string) => [{ name: 'report', parts: [{ kind: 'text', text }] }];
  return shape('y'.repeat(bytes - bytesOf(shape(''))));
}

const send = (task: unknown) =>
  server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 'work', body: 'see the task', task } });

describe('a send', () => {
  test('the probe: a 300 KB data part is 400 VALIDATION_FAILED naming the field, size, limit and bulk; no event', async () => {
    const before = await server.eventCount();
    const task = { input: { parts: [{ kind: 'data', data: { x: 'y'.repeat(300_000) } }] } };
    const { status, body } = await send(task);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task' });
    expect(body.message).toBe(
      `add_message: 'task' is ${bytesOf(task)} bytes as JSON; the limit is 65536 bytes (64 KiB), most of it in ` +
        `'task.input.parts.0.data.x' (300002 bytes): shorten it, or put the content elsewhere and link to it (a file part's uri).`,
    );
    expect(await server.eventCount()).toBe(before);
  });

  test('a task of exactly the limit is sent; one byte more is refused, as its JSON encoding is', async () => {
    expect(bytesOf(taskOf(MAX_TASK_BYTES))).toBe(65536);
    expect((await send(taskOf(MAX_TASK_BYTES))).status).toBe(201);
    const before = await server.eventCount();
    const over = await send(taskOf(MAX_TASK_BYTES + 1));
    expect([over.status, over.body.code, over.body.message]).toEqual([
      400,
      'VALIDATION_FAILED',
      expect.stringContaining("'task' is 65537 bytes as JSON; the limit is 65536 bytes"),
    ]);
    const encoded = await send(JSON.stringify(taskOf(MAX_TASK_BYTES + 1)));
    expect([encoded.status, encoded.body.field]).toEqual([400, 'task']);
    expect(await server.eventCount()).toBe(before);
  });

  test('every part of the envelope counts (metadata too), not the input alone', async () => {
    const before = await server.eventCount();
    const { status, body } = await send({ metadata: { sessionId: 's'.repeat(MAX_TASK_BYTES) } });
    expect([status, body.field]).toEqual([400, 'task']);
    expect(body.message).toContain("most of it in 'task.metadata.sessionId'");
    expect(await server.eventCount()).toBe(before);
  });

  test('through the library (createMailbox(...).as(token).send): the same refusal, no event', async () => {
    const before = await server.eventCount();
    const a = await server.mailbox.as(t['@a']);
    const error = await a.send({ to: '@b', subject: 'work', body: 'b', task: taskOf(MAX_TASK_BYTES + 1) }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(isMailboxError(error) && error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task' });
    expect(await server.eventCount()).toBe(before);
  });

  test('through MCP (add_message): the same refusal as a tool error, no event', async () => {
    const client = new Client({ name: 'task-size-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t['@a']}` } },
      }),
    );
    try {
      const before = await server.eventCount();
      const result = await client.request(
        {
          method: 'tools/call',
          params: {
            name: 'add_message',
            arguments: { to: '@b', subject: 'work', body: 'b', task: taskOf(MAX_TASK_BYTES + 1) },
          },
        },
        CallToolResultSchema,
      );
      expect(result).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_FAILED', field: 'task' } });
      expect(await server.eventCount()).toBe(before);
    } finally {
      await client.close();
    }
  });
});

describe("a completion's artifacts", () => {
  async function workingTask(): Promise<string> {
    const sent = await send({ input: { parts: [{ kind: 'text', text: 'do it' }] } });
    const taskId = sent.body.messageId as string;
    const accepted = await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'Working' } });
    expect(accepted.status).toBe(200);
    return taskId;
  }
  const complete = (taskId: string, artifacts: unknown) =>
    server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'Completed', artifacts } });

  test('over the limit: 400 naming artifacts, its size and the limit; the task stays Working, no event', async () => {
    const taskId = await workingTask();
    const before = await server.eventCount();
    const { status, body } = await complete(taskId, artifactsOf(MAX_TASK_BYTES + 1));
    expect([status, body.code, body.field]).toEqual([400, 'VALIDATION_FAILED', 'artifacts']);
    expect(body.message).toMatch(
      /^update_task: 'artifacts' is 65537 bytes as JSON; the limit is 65536 bytes \(64 KiB\), most of it in 'artifacts\.0\.parts\.0\.text'/,
    );
    expect(await server.eventCount()).toBe(before);
    const task = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@b'] });
    expect(task.body.status.state).toMatch(/working/i);
  });

  test('at the limit: completed', async () => {
    const taskId = await workingTask();
    const { status } = await complete(taskId, artifactsOf(MAX_TASK_BYTES));
    expect(status).toBe(200);
  });
});
