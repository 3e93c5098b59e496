/**
 * The rejection log (GET /v1/audit/rejections, the console's Rejections panel) held refused commands only: a listing
 * refused for its filter, a request to a route that does not exist (404, 405) and a call of an MCP tool that does not
 * exist were nowhere, so an operator could not see the agent that kept asking for GET /v1/mesages or calling
 * add_mesage. They are now recorded, with the caller's identity when its token is valid (never the token), and no
 * event is written for any of them. A command refused over MCP is recorded once.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('rejections-logged');

/** The newest `count` records, newest first. */
async function newest(count: number): Promise<Array<Record<string, unknown>>> {
  const { status, body } = await mcp.server.call('GET', `/v1/audit/rejections?limit=${count}`, { token: mcp.server.adminToken });
  expect(status).toBe(200);
  return body.rejections;
}

test('a read refused over HTTP is recorded with its tool, its route and the caller', async () => {
  const before = await mcp.server.eventCount();
  const refused = await mcp.server.call('GET', '/v1/messages?box=sent', { token: mcp.t['@a'] });
  expect([refused.status, refused.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  expect(await newest(1)).toEqual([
    expect.objectContaining({
      agent: '@a',
      role: 'agent',
      command: 'list_messages',
      route: 'GET /v1/messages',
      surface: 'http',
      code: 'VALIDATION_FAILED',
      status: 400,
      field: 'box',
      message: refused.body.message,
    }),
  ]);
  expect(await mcp.server.eventCount()).toBe(before);
});

test('unknown routes are recorded as asked (path without its query), with the identity only when the token is valid', async () => {
  const before = await mcp.server.eventCount();
  const typo = await mcp.server.call('GET', '/v1/mesages?status=unread', { token: mcp.t['@b'] });
  expect([typo.status, typo.body.code]).toEqual([404, 'NOT_FOUND']);
  const method = await mcp.server.call('DELETE', '/v1/messages', { token: mcp.t['@c'] });
  expect([method.status, method.body.code]).toEqual([405, 'METHOD_NOT_ALLOWED']);
  const forged = 'not-a-token-0123456789abcdef';
  expect((await mcp.server.call('POST', '/v1/mesages', { token: forged, body: { to: '@a' } })).status).toBe(404);
  expect((await mcp.server.call('GET', `/v1/${'x'.repeat(600)}`)).status).toBe(404);

  const [long, unknownToken, wrongMethod, misspelt] = await newest(4);
  expect(misspelt).toMatchObject({
    agent: '@b',
    role: 'agent',
    command: 'GET /v1/mesages',
    route: 'GET /v1/mesages',
    surface: 'http',
    code: 'NOT_FOUND',
  });
  expect(misspelt.suggestions).toEqual(['GET /v1/messages']);
  expect(wrongMethod).toMatchObject({ agent: '@c', command: 'DELETE /v1/messages', code: 'METHOD_NOT_ALLOWED', status: 405 });
  expect(unknownToken).toMatchObject({ agent: null, role: null, command: 'POST /v1/mesages', code: 'NOT_FOUND' });
  expect(JSON.stringify(unknownToken)).not.toContain(forged);
  expect(long).toMatchObject({ agent: null, code: 'NOT_FOUND' });
  expect((long.command as string).length).toBeLessThanOrEqual(200);
  expect(await mcp.server.eventCount()).toBe(before);
});

test('over MCP, a refused read and an unknown tool are recorded; a refused command once', async () => {
  const c = await mcp.clients.http(mcp.t['@c']);
  const before = await mcp.server.eventCount();
  const list = (await c.callTool({ name: 'list_messages', arguments: { box: 'sent' } })) as ToolResult;
  expect(list.structuredContent.code).toBe('VALIDATION_FAILED');
  const unknown = (await c.callTool({ name: 'add_mesage', arguments: { to: '@a' } })) as ToolResult;
  expect(unknown.structuredContent).toMatchObject({ code: 'NOT_FOUND', suggestions: ['add_message'] });
  const send = (await c.callTool({ name: 'add_message', arguments: { to: '@a', subjct: 's', body: 'b' } })) as ToolResult;
  expect(send.structuredContent.code).toBe('UNKNOWN_FIELD');
  const claim = (await c.callTool({
    name: 'claim_task',
    arguments: { taskId: '0a8d3f4e-1111-4c1e-9a55-000000000001' },
  })) as ToolResult;
  expect(claim.isError).toBe(true);

  // The claim's record is the positive signal that everything before it was recorded: each of the four once, in order.
  const records = await newest(5);
  expect(records.slice(0, 4).map((r) => [r.agent, r.surface, r.command, r.code])).toEqual([
    ['@c', 'mcp', 'claim_task', claim.structuredContent.code],
    ['@c', 'mcp', 'send', 'UNKNOWN_FIELD'],
    ['@c', 'mcp', 'add_mesage', 'NOT_FOUND'],
    ['@c', 'mcp', 'list_messages', 'VALIDATION_FAILED'],
  ]);
  expect(records[1]).toMatchObject({ field: 'subjct', suggestions: ['subject'] });
  expect(records[2]).toMatchObject({ suggestions: ['add_message'] });
  expect(records[4]).not.toMatchObject({ surface: 'mcp', agent: '@c' });
  expect(await mcp.server.eventCount()).toBe(before);
});

// A token pasted where something else goes (another agent's token given as the recipient, as a message id, in a
// path, in a tool's argument) was kept as sent in the record's `to`, message and route: every auditor reading the
// rejections (GET /v1/audit/rejections, the console) could take it and act as that agent. Each record still says what
// was refused, with the token replaced.
test('a token pasted into a refused request is never kept in its record', async () => {
  const leaked = mcp.t['@b'];
  const before = await mcp.server.eventCount();
  const send = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: ['@c', leaked], subject: 's', body: 'b' },
  });
  expect([send.status, send.body.code]).toEqual([400, 'INVALID_RECIPIENT_SHAPE']);
  expect((await mcp.server.call('GET', `/v1/messages/${leaked}`, { token: mcp.t['@a'] })).status).toBe(400);
  expect((await mcp.server.call('GET', `/v1/mesages/${leaked}`, { token: mcp.t['@a'] })).status).toBe(404);
  const c = await mcp.clients.http(mcp.t['@c']);
  const read = (await c.callTool({ name: 'get_message', arguments: { messageId: leaked } })) as ToolResult;
  expect(read.structuredContent.code).toBe('VALIDATION_FAILED');

  const records = await newest(4);
  expect(records.map((r) => [r.agent, r.command, r.code])).toEqual([
    ['@c', 'get_message', 'VALIDATION_FAILED'],
    ['@a', 'GET /v1/mesages/mbx_<a token, not shown>', 'NOT_FOUND'],
    ['@a', 'get_message', 'VALIDATION_FAILED'],
    ['@a', 'send', 'INVALID_RECIPIENT_SHAPE'],
  ]);
  expect(records[3]).toMatchObject({ to: '@c, mbx_<a token, not shown>', route: 'POST /v1/messages' });
  expect(records[1].route).toBe('GET /v1/mesages/mbx_<a token, not shown>');
  for (const record of records) expect(JSON.stringify(record)).not.toContain(leaked.slice(4, 24));
  expect(JSON.stringify(records)).toContain('not shown');
  expect(await mcp.server.eventCount()).toBe(before);
});

// A refused read was named by its route on HTTP (GET /v1/messages/:id) and by its tool on MCP (get_message): an auditor
// could not group the same refusal across transports. Both now read get_message, the route beside it on HTTP.
test('the same refused read over HTTP and MCP is recorded under one name, the route beside it on HTTP', async () => {
  const before = await mcp.server.eventCount();
  const missing = '0a8d3f4e-1111-4c1e-9a55-000000000002';
  expect((await mcp.server.call('GET', `/v1/messages/${missing}`, { token: mcp.t['@a'] })).body.code).toBe('MESSAGE_NOT_FOUND');
  expect((await mcp.server.call('GET', `/v1/tasks/${missing}`, { token: mcp.t['@a'] })).body.code).toBe('TASK_NOT_FOUND');
  expect((await mcp.server.call('GET', '/v1/tasks?state=open', { token: mcp.t['@a'] })).status).toBe(400);
  const b = await mcp.clients.http(mcp.t['@b']);
  for (const [name, args] of [
    ['get_message', { messageId: missing }],
    ['get_task', { taskId: missing }],
    ['list_tasks', { state: 'open' }],
  ] as const)
    expect(((await b.callTool({ name, arguments: args })) as ToolResult).isError).toBe(true);

  const records = await newest(6);
  expect(records.map((r) => [r.surface, r.command, r.route, r.code])).toEqual([
    ['mcp', 'list_tasks', undefined, 'VALIDATION_FAILED'],
    ['mcp', 'get_task', undefined, 'TASK_NOT_FOUND'],
    ['mcp', 'get_message', undefined, 'MESSAGE_NOT_FOUND'],
    ['http', 'list_tasks', 'GET /v1/tasks', 'VALIDATION_FAILED'],
    ['http', 'get_task', 'GET /v1/tasks/:id', 'TASK_NOT_FOUND'],
    ['http', 'get_message', 'GET /v1/messages/:id', 'MESSAGE_NOT_FOUND'],
  ]);
  expect(await mcp.server.eventCount()).toBe(before);
});
