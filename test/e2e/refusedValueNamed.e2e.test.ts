/**
 * A value refused is named beside the valid form: `limit: 1000` was told "'limit' takes a whole number from 1 to 200
 * (default 50)", `box: "sent"` "'box' must be one of "inbox", "outbox"", `priority: "urgent"` "must be one of "low",
 * "normal", "high"": a model that computed or guessed the value did not see which one it sent, nor the value its word
 * means. Each now ends ", not 1000", ", not "sent": did you mean "outbox"?". Over MCP and HTTP /v1 alike; nothing is
 * written.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('refused-value-named-e2e');
let taskId: string;
beforeAll(async () => {
  taskId = await mcp.sendAs('@a', { to: 'AGENT:*', subject: 'review', body: 'please', task: {} });
});

const RANGE = 'takes a whole number from 1 to 200 (default 50)';
const LEASE = 'takes a whole number of seconds from 1 to 604800, e.g. 300';
const send = { to: '@c', subject: 's', body: 'b' };

/** [tool, arguments, the field, its message]. */
const REFUSED = (): Array<[string, Record<string, unknown>, string, string]> => [
  ['list_messages', { limit: 1000 }, 'limit', `${RANGE}, not 1000`],
  ['list_messages', { limit: '500' }, 'limit', `${RANGE}, not 500`],
  ['list_messages', { limit: 0 }, 'limit', `${RANGE}, not 0`],
  ['list_messages', { limit: 2.5 }, 'limit', `${RANGE}, not 2.5`],
  ['list_tasks', { limit: -1 }, 'limit', `${RANGE}, not -1`],
  ['get_delivery', { messageId: taskId, limit: 5000 }, 'limit', 'takes a whole number from 1 to 1000 (default 100), not 5000'],
  ['claim_task', { taskId, leaseSeconds: 10_000_000 }, 'leaseSeconds', `${LEASE}, not 10000000`],
  // A duration in a deadline's forms was told only the digits' form: it now hears the seconds it stands for.
  ...(['5m', 'PT5M', '5 minutes', '300s'] as const).map((leaseSeconds): [string, Record<string, unknown>, string, string] => [
    'claim_task',
    { taskId, leaseSeconds },
    'leaseSeconds',
    `${LEASE}, written in plain decimal digits, not '${leaseSeconds}': did you mean 300?`,
  ]),
  [
    'claim_task',
    { taskId, leaseSeconds: '2h' },
    'leaseSeconds',
    `${LEASE}, written in plain decimal digits, not '2h': did you mean 7200?`,
  ],
  // Over the maximum: no number is suggested that would be refused in its turn.
  ['claim_task', { taskId, leaseSeconds: '30d' }, 'leaseSeconds', `${LEASE}, written in plain decimal digits, not '30d'`],
  ['list_messages', { box: 'sent' }, 'box', 'must be one of "inbox", "outbox", not "sent": did you mean "outbox"?'],
  // A status given as the box was told only the two boxes: it is now told the status that lists it.
  ...(['archived', 'unread'] as const).map((box): [string, Record<string, unknown>, string, string] => [
    'list_messages',
    { box },
    'box',
    `must be one of "inbox", "outbox", not "${box}": "${box}" is a status of the inbox, not a box: give status "${box}" (the box is inbox by default)`,
  ]),
  [
    'list_messages',
    { status: 'new' },
    'status',
    'must be one of "unread", "read", "all", "archived", not "new": did you mean "unread"?',
  ],
  ['list_messages', { status: 'pending' }, 'status', 'must be one of "unread", "read", "all", "archived", not "pending"'],
  [
    'list_tasks',
    { view: 'outbox' },
    'view',
    'must be one of "assigned", "claimable", "sent", not "outbox": did you mean "sent"?',
  ],
  [
    'add_message',
    { ...send, priority: 'urgent' },
    'priority',
    'must be one of "low", "normal", "high", not "urgent": did you mean "high"?',
  ],
  ['add_message', { ...send, priority: 3 }, 'priority', 'must be one of "low", "normal", "high", not 3'],
  // A value of the wrong type was told its kind alone ("must be true or false, not text"): the quotes a model added
  // around true went unseen. The value is shown (cut), and the JSON value its text stands for suggested.
  [
    'add_message',
    { ...send, wakeSuppressed: 'true' },
    'wakeSuppressed',
    'must be true or false, not text "true": did you mean true, unquoted?',
  ],
  ['add_message', { ...send, wakeSuppressed: 1 }, 'wakeSuppressed', 'must be true or false, not the number 1'],
  ['add_message', { ...send, priority: true }, 'priority', 'must be one of "low", "normal", "high", not true'],
  [
    'add_message',
    { ...send, threadId: { id: 'x'.repeat(80) } },
    'threadId',
    `must be text (a JSON string), not an object {"id":"${'x'.repeat(50)}...`,
  ],
  [
    'add_message',
    { ...send, task: { budget: { maxTokens: false } } },
    'task.budget.maxTokens',
    'takes a whole number of tokens, 1 or more, e.g. 300, not false',
  ],
  [
    'mark_read',
    { all: 'true' },
    'all',
    'is true or absent: {all: true} marks your unread messages that were seen, not text "true": did you mean true, unquoted?',
  ],
  ['mark_read', { all: true, includeUnseen: 'yes' }, 'includeUnseen', 'must be true or false, not text "yes"'],
  ['list_tasks', { view: ['sent'] }, 'view', 'must be one of "assigned", "claimable", "sent", not an array ["sent"]'],
];

test.each(['http', 'stdio'])('over MCP (%s), each refusal names the value refused; nothing is written', async (via) => {
  const b = via === 'http' ? await mcp.clients.http(mcp.t['@b']) : await mcp.clients.stdio(mcp.t['@b']);
  for (const [tool, args, field, message] of REFUSED()) {
    const before = await mcp.server.eventCount();
    const result = (await b.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([tool, result.isError]).toEqual([tool, true]);
    expect([tool, result.structuredContent]).toMatchObject([tool, { code: 'VALIDATION_FAILED', field }]);
    expect(result.structuredContent.message).toBe(`${tool}: '${field}' ${message}`);
    expect(await mcp.server.eventCount()).toBe(before);
  }
  // The positive signal: nothing reached @c, the task is unclaimed, and the values as suggested are taken.
  const c = await mcp.clients.http(mcp.t['@c']);
  const inbox = (await c.callTool({ name: 'list_messages', arguments: { limit: 200 } })) as ToolResult;
  expect(inbox.structuredContent.messages.map((m: { subject: string }) => m.subject)).toEqual(['review']);
  const task = (await c.callTool({ name: 'get_task', arguments: { taskId } })) as ToolResult;
  expect(task.structuredContent.mailbox.assignee).toBeNull();
  const outbox = (await b.callTool({ name: 'list_messages', arguments: { box: 'outbox' } })) as ToolResult;
  expect(outbox.isError ?? false).toBe(false);
});

test('over HTTP /v1, the same values are named', async () => {
  const before = await mcp.server.eventCount();
  const list = await mcp.server.call('GET', '/v1/messages?limit=1000&box=sent', { token: mcp.t['@b'] });
  expect(list.status).toBe(400);
  expect(list.body.issues).toEqual([
    { field: 'box', message: 'must be one of "inbox", "outbox", not "sent": did you mean "outbox"?' },
    { field: 'limit', message: `${RANGE}, not 1000` },
  ]);
  const archived = await mcp.server.call('GET', '/v1/messages?box=archived', { token: mcp.t['@b'] });
  expect([archived.status, archived.body.field]).toEqual([400, 'box']);
  expect(archived.body.message).toContain('"archived" is a status of the inbox, not a box: give status "archived"');
  expect((await mcp.server.call('GET', '/v1/messages?status=archived', { token: mcp.t['@b'] })).status).toBe(200);
  const quoted = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { ...send, wakeSuppressed: 'false' },
  });
  expect([quoted.status, quoted.body.message]).toEqual([
    400,
    'add_message: \'wakeSuppressed\' must be true or false, not text "false": did you mean false, unquoted?',
  ]);
  const claim = await mcp.server.call('POST', `/v1/tasks/${taskId}/claim`, { token: mcp.t['@b'], body: { leaseSeconds: '5m' } });
  expect([claim.status, claim.body.field]).toEqual([400, 'leaseSeconds']);
  expect(claim.body.message).toBe(
    `claim_task: 'leaseSeconds' ${LEASE}, written in plain decimal digits, not '5m': did you mean 300?`,
  );
  const sent = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@a'], body: { ...send, priority: 'urgent' } });
  expect(sent.status).toBe(400);
  expect(sent.body.message).toBe(
    'add_message: \'priority\' must be one of "low", "normal", "high", not "urgent": did you mean "high"?',
  );
  expect(await mcp.server.eventCount()).toBe(before);
});

test('over MCP, text or a list too long is told how long it is; nothing is written', async () => {
  // "'subject' must be at most 200 characters long" did not say by how much: a model cutting it down had to count.
  const a = await mcp.clients.http(mcp.t['@a']);
  const before = await mcp.server.eventCount();
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['add_message', { ...send, subject: 'x'.repeat(243) }, 'subject', 'must be at most 200 characters long (it has 243)'],
    [
      'add_message',
      { ...send, tags: Array.from({ length: 40 }, (_, i) => `t${i}`) },
      'tags',
      'must hold at most 32 items (it has 40)',
    ],
    [
      'add_message',
      { ...send, idempotencyKey: 'k'.repeat(201) },
      'idempotencyKey',
      'must be at most 200 characters long (it has 201)',
    ],
    [
      'update_task',
      { taskId, to: 'Rejected', reason: 'r'.repeat(2001) },
      'reason',
      'must be at most 2000 characters long (it has 2001)',
    ],
  ];
  for (const [tool, args, field, message] of cases) {
    const result = (await a.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([tool, field, result.structuredContent]).toMatchObject([
      tool,
      field,
      { code: 'VALIDATION_FAILED', field, message: `${tool}: '${field}' ${message}` },
    ]);
  }
  expect(await mcp.server.eventCount()).toBe(before);
});
