/**
 * A model's natural first call often names a field by another word: update_task with `state` (its `to`), get_message
 * with `id`, add_message with `recipients`, `title` and `content`, list_messages with `pageSize`. Each was told only
 * "update_task does not accept 'state'; allowed fields: taskId, to, reason, note, artifacts." and had to guess which
 * allowed field was meant (`to` reads as a recipient). The refusal now names it: "'state' (did you mean 'to'?)", and
 * `suggestions`. Suggested, never taken in its place: the call is UNKNOWN_FIELD and writes nothing, over MCP (HTTP and
 * stdio) and HTTP /v1 alike (one validation).
 */
import { ADMIN_TOKEN } from '../support/fixtures';
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('unknown-field-meant-e2e');
let taskId: string;
beforeAll(async () => {
  taskId = await mcp.sendAs('@a', { to: '@b', subject: 'review', body: 'please', task: {} });
});

/** [tool, arguments, the unknown field, the fields suggested for it]. */
const GUESSES = (): Array<[string, Record<string, unknown>, string, string[]]> => [
  ['update_task', { taskId, state: 'Working' }, 'state', ['to']],
  ['update_task', { taskId, status: 'completed' }, 'status', ['to']],
  ['update_task', { taskId, to: 'Working', comment: 'on it' }, 'comment', ['note']],
  // A2A parts, as a sender gives input or a holder output: the note (text) or the artifacts ([{parts}]).
  ['update_task', { taskId, to: 'Working', parts: [{ kind: 'text', text: 'main' }] }, 'parts', ['note', 'artifacts']],
  ['claim_task', { id: taskId }, 'id', ['taskId']],
  ['get_message', { id: taskId }, 'id', ['messageId']],
  // A task's id is the messageId of the message that carried it: each name, sent to the tools of the other, was told
  // only "claim_task does not accept 'messageId'; allowed fields: taskId, leaseSeconds.", without the one meant.
  ['claim_task', { messageId: taskId }, 'messageId', ['taskId']],
  ['update_task', { message_id: taskId, to: 'Working' }, 'message_id', ['taskId']],
  ['get_task', { messageId: taskId }, 'messageId', ['taskId']],
  ['get_message', { taskId }, 'taskId', ['messageId']],
  ['archive_message', { task_id: taskId }, 'task_id', ['messageId']],
  ['mark_read', { message_id: taskId }, 'message_id', ['messageId', 'messageIds']],
  ['add_message', { recipients: ['@b', '@c'], subject: 's', body: 'b' }, 'recipients', ['to']],
  ['add_message', { to: '@c', subject: 's', body: 'b', reply_to: taskId }, 'reply_to', ['inReplyTo']],
  ['add_message', { to: '@c', subjet: 's', body: 'b' }, 'subjet', ['subject']],
  ['add_message', { to: '@c', subject: 's', body: 'b', task: { parts: [{ kind: 'text', text: 'x' }] } }, 'task.parts', ['input']],
  ['list_messages', { pageSize: 10 }, 'pageSize', ['limit']],
  ['list_messages', { unread: true }, 'unread', ['status']],
  ['get_delivery', { messageId: taskId, cursor: '@b' }, 'cursor', ['after']],
];

test.each(['http', 'stdio'])('over MCP (%s), an unknown field is told the one meant; nothing is written', async (via) => {
  const b = via === 'http' ? await mcp.clients.http(mcp.t['@b']) : await mcp.clients.stdio(mcp.t['@b']);
  for (const [tool, args, field, suggestions] of GUESSES()) {
    const before = await mcp.server.eventCount();
    const result = (await b.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([tool, field, result.isError]).toEqual([tool, field, true]);
    expect([tool, result.structuredContent]).toMatchObject([tool, { code: 'UNKNOWN_FIELD', field, suggestions }]);
    const meant = suggestions.map((s) => `'${s}'`).join(' or ');
    expect(result.structuredContent.message).toContain(`${tool} does not accept '${field}' (did you mean ${meant}?); allowed`);
    expect(await mcp.server.eventCount()).toBe(before);
  }
  // Two at once, each with its own; a name near nothing is named alone, without suggestions.
  const two = (await b.callTool({
    name: 'add_message',
    arguments: { to: '@c', title: 's', content: 'b' },
  })) as ToolResult;
  expect(two.structuredContent).toMatchObject({ code: 'UNKNOWN_FIELD', suggestions: ['subject', 'body'] });
  expect(two.structuredContent.message).toContain(
    "add_message does not accept 'title' (did you mean 'subject'?), 'content' (did you mean 'body'?); allowed fields:",
  );
  const none = (await b.callTool({ name: 'list_messages', arguments: { since: '2026-01-01T00:00:00Z' } })) as ToolResult;
  expect(none.structuredContent).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'since' });
  expect(none.structuredContent).not.toHaveProperty('suggestions');
  // `cc` beside a `to`: no field to suggest (it sent `to`), but where the recipients go.
  const cc = (await b.callTool({
    name: 'add_message',
    arguments: { to: '@c', cc: ['@a'], subject: 's', body: 'b' },
  })) as ToolResult;
  expect(cc.structuredContent).not.toHaveProperty('suggestions');
  expect(cc.structuredContent.message).toMatch(
    /does not accept 'cc'; allowed .* Every recipient goes in 'to': one @identity, AGENT:\*, or a list such as \["@b", "@c"\]\.$/,
  );
  // The positive signal: the task is still Submitted (no `state` moved it), @c's inbox holds nothing, and the call
  // as suggested works.
  const task = (await b.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult;
  expect(task.structuredContent.mailbox.state).toBe('Submitted');
  const c = await mcp.clients.http(mcp.t['@c']);
  const inbox = (await c.callTool({ name: 'list_messages', arguments: {} })) as ToolResult;
  expect(inbox.structuredContent.messages).toEqual([]);
  const listed = (await b.callTool({ name: 'list_messages', arguments: { limit: 10 } })) as ToolResult;
  expect(listed.isError ?? false).toBe(false);
});

test('over HTTP /v1, the same refusals name the same fields; nothing is written', async () => {
  const before = await mcp.server.eventCount();
  const send = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { recipient: '@b', subject: 's', body: 'b' },
  });
  expect(send.status).toBe(400);
  expect(send.body).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'recipient', suggestions: ['to'] });
  expect(send.body.message).toContain("add_message does not accept 'recipient' (did you mean 'to'?); allowed fields:");
  const list = await mcp.server.call('GET', '/v1/messages?page_size=3', { token: mcp.t['@b'] });
  expect(list.status).toBe(400);
  expect(list.body).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'page_size', suggestions: ['limit'] });
  expect(await mcp.server.eventCount()).toBe(before);
});

// An admin's first registration named the agent as most APIs do ({"name": "@d"}) and was told only "register_agent does
// not accept 'name'; allowed fields: identity, role.", with no suggestion. It is now told the one meant.
test.each([['name'], ['agent'], ['agent_id'], ['id']])(
  'POST /v1/agents with %j for the identity: told it is identity; nothing is written',
  async (field) => {
    const before = await mcp.server.eventCount();
    const refused = await mcp.server.call('POST', '/v1/agents', { token: ADMIN_TOKEN, body: { [field]: '@d' } });
    expect([refused.status, refused.body]).toMatchObject([400, { code: 'UNKNOWN_FIELD', field, suggestions: ['identity'] }]);
    expect(refused.body.message).toContain(`register_agent does not accept '${field}' (did you mean 'identity'?); allowed`);
    expect(await mcp.server.eventCount()).toBe(before);
  },
);

// A2A's message shape, `parts` beside `to`: a send has no field near 'parts', so the refusal named it alone and left the
// model to guess. It now says where parts go (a task's input) and where the text goes (body). Nothing is written.
test("add_message with A2A's parts at the top level: told the text is 'body' and parts are task.input.parts (MCP and HTTP)", async () => {
  const c = await mcp.clients.http(mcp.t['@c']);
  const parts = [{ kind: 'text', text: 'please review' }];
  const HINT =
    "A message has no parts: its text goes in 'body' (Markdown); parts are a task's input, " +
    'task: {"input": {"parts": [{"kind": "text", "text": "..."}]}}.';
  const before = await mcp.server.eventCount();
  const viaMcp = (await c.callTool({ name: 'add_message', arguments: { to: '@a', subject: 's', parts } })) as ToolResult;
  expect(viaMcp.isError).toBe(true);
  expect(viaMcp.structuredContent).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'parts' });
  expect(viaMcp.structuredContent.message).toMatch(/^add_message does not accept 'parts'; allowed fields: /);
  expect(viaMcp.structuredContent.message.endsWith(HINT)).toBe(true);
  const viaHttp = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@b'],
    body: { to: '@a', subject: 's', body: 'b', parts },
  });
  expect([viaHttp.status, viaHttp.body.code]).toEqual([400, 'UNKNOWN_FIELD']);
  expect(viaHttp.body.message.endsWith(HINT)).toBe(true);
  expect(await mcp.server.eventCount()).toBe(before);
  // The form it teaches is taken: a task whose input holds the parts.
  const taught = (await c.callTool({
    name: 'add_message',
    arguments: { to: '@a', subject: 's', body: 'see the task', task: { input: { parts } } },
  })) as ToolResult;
  expect(taught.isError ?? false).toBe(false);
  expect(await mcp.server.eventCount()).toBe(before + 1);
});
