/**
 * A message id that names no message is 404 MESSAGE_NOT_FOUND for everyone, worded for who asks: an agent is told it
 * is none of those it sent or received (the same answer as for a message it is not party to: no existence oracle); an
 * auditor or admin, who may look at every message, is told it is not in the log. They were told "among those you sent
 * or received", untrue for them (they send and receive none). Three agents, an auditor; nothing is written.
 */
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/httpServer';
import { McpSdkClients, type ToolResult } from '../support/mcpSdkClients';

const HISTORY_ENTRY =
  " An id from a task's history (get_task's history[].messageId or status.message.messageId) names an entry of that " +
  'task, not a message: read it with get_task {"taskId": "<the entry\'s taskId>"} (GET /v1/tasks/{taskId}).';

let server: TestServer;
let tokens: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  tokens = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@aud'], 'auditor')) };
});
const mcp = new McpSdkClients(() => server.url, 'not-found-wording');
afterAll(async () => {
  await mcp.closeAll();
  await server.close();
});

const missing = randomUUID();

test.each([
  ['auditor', 'GET', `/v1/messages/${missing}`],
  ['auditor', 'GET', `/v1/audit/messages/${missing}`],
  ['auditor', 'GET', `/v1/messages/${missing}/delivery`],
  ['admin', 'GET', `/v1/audit/messages/${missing}`],
])('%s %s %s: not in the log', async (who, method, path) => {
  const before = await server.eventCount();
  const token = who === 'admin' ? server.adminToken : tokens['@aud'];
  const { status, body } = await server.call(method, path, { token });
  expect([status, body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
  // get_message (GET /v1/messages/{id}) adds where an id of a task's history is read (below).
  const more = path === `/v1/messages/${missing}` ? HISTORY_ENTRY : '';
  expect(body.message).toBe(
    `No message ${missing} exists in this mailbox's log; check the id (GET /v1/audit/events lists every event).${more}`,
  );
  expect(await server.eventCount()).toBe(before);
});

test("an agent: none of those it sent or received, for a missing message and for another's alike", async () => {
  const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 's', body: 'x' } });
  expect(sent.status).toBe(201);
  for (const id of [missing, sent.body.messageId as string]) {
    const { status, body } = await server.call('GET', `/v1/messages/${id}`, { token: tokens['@c'] });
    expect([status, body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
    expect(body.message).toBe(
      `No message ${id} exists among those you sent or received; check the id in your inbox or outbox.${HISTORY_ENTRY}`,
    );
  }
});

/**
 * A task's history entry ids (get_task's history[].messageId, A2A) passed to get_message were a bare MESSAGE_NOT_FOUND:
 * the agent was not told that what it held names an entry of a task, nor which call reads it. Then every get_message
 * not-found said so, the same for every id ("<the entry's taskId>"): an agent that kept only the id could not find its
 * task. Where the log finds an event by its id (memory, SQLite; not EventStoreDB), the refusal now names the task to
 * those who may read it; an outsider is told what it is told for an id that names nothing.
 */
const findsEntries = process.env.MAILBOX_TEST_EVENTSTORE !== 'esdb-double';
test("a task's history entry id passed to get_message: told which task it is an entry of, and the call that reads it", async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@a'],
    body: { to: '@b', subject: 'port it', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  for (const body of [{ to: 'Working' }, { to: 'InputRequired', note: 'which branch?' }])
    expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: tokens['@b'], body })).status).toBe(200);
  const task = await server.call('GET', `/v1/tasks/${taskId}`, { token: tokens['@a'] });
  const entry = task.body.history.find((line: { parts: Array<{ text?: string }> }) => line.parts[0].text === 'which branch?');
  expect(entry).toMatchObject({ taskId });
  const before = await server.eventCount();

  const asked = await server.call('GET', `/v1/messages/${entry.messageId}`, { token: tokens['@a'] });
  expect([asked.status, asked.body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
  if (findsEntries) {
    expect(asked.body).toMatchObject({ messageId: entry.messageId, taskId });
    expect(asked.body.message).toContain(
      `is no message: it is an entry of the history of task ${taskId} (get_task's history[].messageId or ` +
        `status.message.messageId). Read the task with get_task {"taskId": "${taskId}"} (GET /v1/tasks/${taskId})`,
    );
  } else
    expect(asked.body.message).toContain(
      `names an entry of that task, not a message: read it with get_task {"taskId": "<the entry's taskId>"} (GET /v1/tasks/{taskId})`,
    );
  const client = await mcp.http(tokens['@b']);
  const overMcp = (await client.callTool({ name: 'get_message', arguments: { messageId: entry.messageId } })) as ToolResult;
  expect(overMcp.structuredContent).toMatchObject({ code: 'MESSAGE_NOT_FOUND', message: asked.body.message });
  // An outsider is told word for word what it is told for an id that names nothing.
  const outsider = await server.call('GET', `/v1/messages/${entry.messageId}`, { token: tokens['@c'] });
  const nothing = await server.call('GET', `/v1/messages/${missing}`, { token: tokens['@c'] });
  expect(outsider.body).toEqual({
    ...nothing.body,
    messageId: entry.messageId,
    message: nothing.body.message.replace(missing, entry.messageId),
  });
  expect(await server.eventCount()).toBe(before);

  // Passed to get_task as if a task's id: told where its task's id is (the same for every id, as above).
  const asTask = await server.call('GET', `/v1/tasks/${entry.messageId}`, { token: tokens['@a'] });
  expect([asTask.status, asTask.body.code]).toEqual([404, 'TASK_NOT_FOUND']);
  expect(asTask.body.message).toContain(
    findsEntries
      ? `is no task: it is an entry of the history of task ${taskId}`
      : "an entry of a task's history names its task in its taskId",
  );
  expect(await server.eventCount()).toBe(before);

  // Done as it says: the entry's task holds it.
  const read = await server.call('GET', `/v1/tasks/${entry.taskId}`, { token: tokens['@a'] });
  expect(read.body.history.map((line: { messageId: string }) => line.messageId)).toContain(entry.messageId);
});
