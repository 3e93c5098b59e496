/**
 * A retry under a used Idempotency-Key whose only change is expectsReplyBy (a model that retried with "2h" for "1h",
 * or added the deadline it forgot) was refused with changedFields [] and "this request differs": no field named, so
 * it could not tell what to send back unchanged. The field is now named, over MCP and HTTP /v1 alike, and a retry
 * whose duration is the first one's (read from the first send's time) is no change; nothing is written either way.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('idempotency-retry-fields-e2e', ['@alice', '@bob', '@carol']);

const send = (idempotencyKey: string, more: Record<string, unknown> = {}) => ({
  to: ['@bob', '@carol'],
  subject: 'review',
  body: 'b',
  expectsReplyBy: '1h',
  idempotencyKey,
  ...more,
});

test('over MCP, a retry that changed only expectsReplyBy names it; the same duration replays', async () => {
  const alice = await mcp.clients.http(mcp.t['@alice']);
  const first = (await alice.callTool({ name: 'add_message', arguments: send('k-mcp') })) as ToolResult;
  expect(first.structuredContent).toMatchObject({ status: 'sent' });
  const before = await mcp.server.eventCount();
  for (const more of [{ expectsReplyBy: '2h' }, { expectsReplyBy: undefined }, { expectsReplyBy: '60m' }]) {
    const retry = (await alice.callTool({ name: 'add_message', arguments: send('k-mcp', more) })) as ToolResult;
    expect([more, retry.isError]).toEqual([more, true]);
    expect(retry.structuredContent).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', changedFields: ['expectsReplyBy'] });
    expect(retry.structuredContent.message).toContain("(this request's expectsReplyBy differs from that message's)");
  }
  expect(await mcp.server.eventCount()).toBe(before);
  // The positive signal: the first request as sent replays its result.
  const again = (await alice.callTool({ name: 'add_message', arguments: send('k-mcp') })) as ToolResult;
  expect(again.structuredContent.messageId).toBe(first.structuredContent.messageId);
  expect(await mcp.server.eventCount()).toBe(before);
});

test('over HTTP /v1 alike, and a retry that also changed the body names the body alone', async () => {
  const first = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@carol'], body: send('k-http') });
  expect(first.status).toBe(201);
  const before = await mcp.server.eventCount();
  const added = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@carol'],
    body: send('k-http', { expectsReplyBy: '2025-01-01T00:00:00Z' }),
  });
  expect([added.status, added.body.code, added.body.changedFields]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED', ['expectsReplyBy']]);
  const body = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@carol'], body: send('k-http', { body: 'c' }) });
  expect([body.status, body.body.changedFields]).toEqual([422, ['body']]);
  expect(await mcp.server.eventCount()).toBe(before);
});
