/**
 * A broadcast sent while no other agent is active (the others retired, or auditors only) reached nobody, and was
 * answered as any other: {status: "sent", recipients: []}, no word of it, though agents registered later never get it
 * (a broadcast's audience is the active agents at the send). A message is still stored (kept for audit) and now says
 * so (warning NO_AUDIENCE); a task, which nobody could ever claim, is refused (VALIDATION_FAILED, field to) and
 * nothing is written. Over MCP and HTTP; @a sends, @b is retired, @aud is an auditor.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('broadcast-no-audience-e2e', ['@a', '@b']);

test('a broadcast with nobody to reach says so; its task is refused', async () => {
  await mcp.server.register(['@aud'], 'auditor');
  expect((await mcp.server.call('DELETE', '/v1/agents/@b', { token: mcp.server.adminToken })).status).toBe(200);
  const a = await mcp.clients.http(mcp.t['@a']);

  const before = await mcp.server.eventCount();
  const task = (await a.callTool({
    name: 'add_message',
    arguments: { to: 'AGENT:*', subject: 'who takes it?', body: 'x', task: {} },
  })) as ToolResult;
  expect(task.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'to' });
  expect(task.structuredContent.message).toContain('no other agent is active now');
  const http = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@a'],
    body: { to: 'AGENT:*', subject: 'who takes it?', body: 'x', task: {} },
  });
  expect([http.status, http.body.code, http.body.field]).toEqual([400, 'VALIDATION_FAILED', 'to']);
  expect(await mcp.server.eventCount()).toBe(before);

  const said = (await a.callTool({
    name: 'add_message',
    arguments: { to: 'AGENT:*', subject: 'hello all', body: 'x' },
  })) as ToolResult;
  expect(said.structuredContent).toMatchObject({ status: 'sent', recipients: [] });
  expect(said.structuredContent.warnings).toEqual([expect.objectContaining({ code: 'NO_AUDIENCE' })]);
  expect(said.structuredContent.warnings[0].message).toContain('nobody received it');
  expect(await mcp.server.eventCount()).toBe(before + 1);
});
