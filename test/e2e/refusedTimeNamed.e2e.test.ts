/**
 * A date and time refused names the value, as every other refusal does (refusedValueNamed): `before: "yesterday"` was
 * told "'before' must be an ISO 8601 date and time with seconds and an offset ..." and `expectsReplyBy: "in 2 hours"`
 * "must be ... a duration from now: 90s, 30m, 2h, ...", without the value: a model that computed the time did not see
 * which one it sent. Each now ends ", not "yesterday"" (cut to 60 characters), and a near-miss is told what it nearly
 * is (`2026-12-01`: did you mean "2026-12-01T00:00:00Z" (UTC)?), suggested, never taken. MCP and HTTP alike; nothing is
 * written.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('refused-time-named-e2e');

const ISO = 'must be an ISO 8601 date and time with seconds and an offset (Z or +hh:mm), e.g. 2030-11-24T15:00:00Z';
const REPLY_BY =
  'must be an ISO 8601 time with an offset after now (e.g. 2030-11-24T15:00:00Z) or a duration from now: 90s, 30m, 2h, 1d, PT30M, P1DT2H';
const LONG = `next ${'very '.repeat(40)}long week`;
const send = (fields: Record<string, unknown>) => ({ to: ['@b', '@c'], subject: 's', body: 'b', ...fields });

/** [tool, arguments, the field, its message after the field's name]. */
const REFUSED: Array<[string, Record<string, unknown>, string, string]> = [
  ['mark_read', { all: true, before: 'yesterday' }, 'before', `${ISO}, not "yesterday"`],
  [
    'mark_read',
    { all: true, before: '2026-12-01' },
    'before',
    `${ISO}, not "2026-12-01": did you mean "2026-12-01T00:00:00Z" (UTC)?`,
  ],
  [
    'mark_read',
    { all: true, before: '2026-12-01T09:30+0200' },
    'before',
    `${ISO}, not "2026-12-01T09:30+0200": did you mean "2026-12-01T09:30:00+02:00"?`,
  ],
  ['mark_read', { all: true, before: '2026-13-01' }, 'before', `${ISO}, not "2026-13-01"`],
  ['add_message', send({ task: { expiresAt: LONG } }), 'task.expiresAt', `${ISO}, not ${JSON.stringify(LONG).slice(0, 57)}..."`],
  [
    'add_message',
    send({ task: { budget: { deadline: '2030-05-01 17:00' } } }),
    'task.budget.deadline',
    `${ISO}, not "2030-05-01 17:00": did you mean "2030-05-01T17:00:00Z" (UTC)?`,
  ],
  ['add_message', send({ expectsReplyBy: 'tomorrow' }), 'expectsReplyBy', `${REPLY_BY}, not "tomorrow"`],
  ['add_message', send({ expectsReplyBy: 'in 2 hours' }), 'expectsReplyBy', `${REPLY_BY}, not "in 2 hours": did you mean "2h"?`],
  ['add_message', send({ expectsReplyBy: '30 min' }), 'expectsReplyBy', `${REPLY_BY}, not "30 min": did you mean "30m"?`],
  [
    'add_message',
    send({ expectsReplyBy: '2030-05-01' }),
    'expectsReplyBy',
    `${REPLY_BY}, not "2030-05-01": did you mean "2030-05-01T00:00:00Z" (UTC)?`,
  ],
];

test.each(['http', 'stdio'])('over MCP (%s), each refused time names the value; nothing is written', async (via) => {
  const a = via === 'http' ? await mcp.clients.http(mcp.t['@a']) : await mcp.clients.stdio(mcp.t['@a']);
  for (const [tool, args, field, message] of REFUSED) {
    const before = await mcp.server.eventCount();
    const result = (await a.callTool({ name: tool, arguments: args })) as ToolResult;
    expect([tool, field, result.isError]).toEqual([tool, field, true]);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field });
    expect(result.structuredContent.message).toBe(`${tool}: '${field}' ${message}`);
    expect(await mcp.server.eventCount()).toBe(before);
  }
  // The positive signal: the value as suggested is taken, and it is the only message @b and @c have from this run.
  const sent = (await a.callTool({
    name: 'add_message',
    arguments: send({ subject: via, expectsReplyBy: '2h', task: { expiresAt: '2030-05-01T17:00:00Z' } }),
  })) as ToolResult;
  expect(sent.isError ?? false).toBe(false);
  for (const who of ['@b', '@c']) {
    const inbox = await mcp.server.call('GET', '/v1/messages', { token: mcp.t[who] });
    expect(inbox.body.messages[0]).toMatchObject({ messageId: sent.structuredContent.messageId, subject: via });
  }
});

test('over HTTP /v1, the same values are named; nothing is written', async () => {
  const before = await mcp.server.eventCount();
  for (const [tool, args, field, message] of REFUSED) {
    const path = tool === 'mark_read' ? '/v1/messages/read' : '/v1/messages';
    const refused = await mcp.server.call('POST', path, { token: mcp.t['@a'], body: args });
    expect([tool, field, refused.status]).toEqual([tool, field, 400]);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field, message: `${tool}: '${field}' ${message}` });
  }
  expect(await mcp.server.eventCount()).toBe(before);
  const marked = await mcp.server.call('POST', '/v1/messages/read', {
    token: mcp.t['@b'],
    body: { all: true, before: '2999-01-01T00:00:00Z' },
  });
  expect(marked.status).toBe(200);
});

// The time every refusal and the tools' schemas gave as the example, 2026-11-24T15:00:00Z, had passed: a model that
// wrote its expectsReplyBy (or a task's expiresAt) in the form shown, with that date, was refused "not after the send".
// The example is a time to come, and taken as given wherever a time is.
test('the example time a refusal gives is taken as given: expectsReplyBy, a task expiresAt and budget.deadline', async () => {
  const a = await mcp.clients.http(mcp.t['@a']);
  const refused = (await a.callTool({ name: 'add_message', arguments: send({ expectsReplyBy: 'tomorrow' }) })) as ToolResult;
  const example = /\(e\.g\. (\S+)\)/.exec(refused.structuredContent.message)![1]!;
  const tools = await a.listTools();
  const described = JSON.stringify(tools.tools.find((tool) => tool.name === 'add_message')!.inputSchema);
  expect(described).toContain(`(e.g. ${example})`);
  const before = await mcp.server.eventCount();
  const sent = (await a.callTool({
    name: 'add_message',
    arguments: send({ subject: 'example', expectsReplyBy: example, task: { expiresAt: example, budget: { deadline: example } } }),
  })) as ToolResult;
  expect([sent.isError ?? false, sent.structuredContent.code]).toEqual([false, undefined]);
  expect(await mcp.server.eventCount()).toBeGreaterThan(before);
});
