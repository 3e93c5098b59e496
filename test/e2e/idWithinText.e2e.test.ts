/**
 * A message id copied with something around it (a space or a line break at its end, quotes or angle brackets, "id: "
 * before it) was told "'<id> ' is not one": the model compared it with the id it had printed and saw no difference. The
 * refusal now names the id it holds: "did you mean '<id>'? (the id alone, without the whitespace around it)" (or
 * "without what surrounds it"). Suggested, never taken: refused, nothing written, over MCP (HTTP and stdio) and HTTP
 * /v1 alike. An array given for one id shows the array too.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('id-within-text-e2e', ['@alice', '@bob', '@carol']);
let id: string;
let taskId: string;
beforeAll(async () => {
  id = await mcp.sendAs('@alice', { to: ['@bob', '@carol'], subject: 'plan', body: 'b' });
  taskId = await mcp.sendAs('@alice', { to: ['@bob', '@carol'], subject: 'task', body: 'b', task: {} });
});

const FORM =
  'must be a message id: a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86, as a send returns it and a listing ' +
  "shows it (list_messages' messageId, list_tasks' taskId)";
const meant = (sent: string, meantId: string, around: string) =>
  `${FORM}; '${sent}' is not one: did you mean '${meantId}'? (the id alone, without ${around})`;

test.each(['http', 'stdio'])('over MCP (%s), the id within the text is suggested; nothing is written', async (via) => {
  const bob = via === 'http' ? await mcp.clients.http(mcp.t['@bob']) : await mcp.clients.stdio(mcp.t['@bob']);
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['get_message', { messageId: `${id} ` }, 'messageId', meant(`${id} `, id, 'the whitespace around it')],
    ['archive_message', { messageId: `${id}\n` }, 'messageId', meant(`${id}\n`, id, 'the whitespace around it')],
    ['mark_read', { messageIds: [id, `"${id}"`] }, 'messageIds.1', meant(`"${id}"`, id, 'what surrounds it')],
    ['claim_task', { taskId: `<${taskId}>` }, 'taskId', meant(`<${taskId}>`, taskId, 'what surrounds it')],
    [
      'add_message',
      { to: '@alice', subject: 're', body: 'x', inReplyTo: `id: ${id}` },
      'inReplyTo',
      meant(`id: ${id}`, id, 'what surrounds it'),
    ],
    [
      'get_message',
      { messageId: [id] },
      'messageId',
      `must be one message id, a UUID string, as returned by a send; got an array ["${id}"]`,
    ],
    ['get_message', { messageId: id.slice(0, 8) }, 'messageId', `${FORM}; '${id.slice(0, 8)}' is not one`],
  ];
  for (const [tool, args, field, message] of cases) {
    const before = await mcp.server.eventCount();
    const result = (await bob.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([tool, result.isError]).toEqual([tool, true]);
    expect(result.structuredContent).toMatchObject({
      code: 'VALIDATION_FAILED',
      field,
      message: `${tool}: '${field}' ${message}`,
    });
    expect(await mcp.server.eventCount()).toBe(before);
  }
  // The positive signal: the id as suggested names the message, still unread and not archived.
  const got = (await bob.callTool({ name: 'get_message', arguments: { messageId: id } })) as ToolResult;
  expect(got.structuredContent).toMatchObject({ messageId: id, readAt: null, archivedAt: null });
});

test('over HTTP /v1 the same, in a path too', async () => {
  const before = await mcp.server.eventCount();
  const got = await mcp.server.call('GET', `/v1/messages/${id}%20`, { token: mcp.t['@carol'] });
  expect(got.status).toBe(400);
  expect(got.body.message).toBe(`get_message: 'messageId' ${meant(`${id} `, id, 'the whitespace around it')}`);
  const claimed = await mcp.server.call('POST', `/v1/tasks/%3C${taskId}%3E/claim`, { token: mcp.t['@carol'] });
  expect(claimed.status).toBe(400);
  expect(claimed.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'taskId' });
  expect(claimed.body.message).toContain(`did you mean '${taskId}'? (the id alone, without what surrounds it)`);
  expect(await mcp.server.eventCount()).toBe(before);
});
