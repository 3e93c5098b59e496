/**
 * An idempotency key is matched exactly, and one copied with a space at its end ('review-12 ', a retry a model wrote
 * out again) was another key: the retry sent the message a second time. The same key in the Idempotency-Key header
 * loses that space on the way (HTTP trims a header's value), so header and body disagreed on one key. A key is now
 * held to the rule of a thread id: printable text, no whitespace at either end, no control or invisible characters;
 * refused naming the character, nothing sent, over MCP (HTTP and stdio) and HTTP /v1 alike.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('idempotency-key-edges-e2e', ['@alice', '@bob', '@carol']);

const FORM =
  'a key is 1-200 characters of printable text, e.g. "review-12" (no control characters, line breaks, invisible or ' +
  'bidi formatting characters, nor whitespace at either end)';
const send = (idempotencyKey: string) => ({ to: ['@bob', '@carol'], subject: 'deploy', body: 'b', idempotencyKey });

test.each(['http', 'stdio'])('over MCP (%s), a key with whitespace at an end is refused; the key itself replays', async (via) => {
  const alice = via === 'http' ? await mcp.clients.http(mcp.t['@alice']) : await mcp.clients.stdio(mcp.t['@alice']);
  const key = `review-${via}`;
  const first = (await alice.callTool({ name: 'add_message', arguments: send(key) })) as ToolResult;
  expect(first.structuredContent).toMatchObject({ status: 'sent' });
  const cases: Array<[string, string]> = [
    [
      `${key} `,
      `ends with whitespace (U+0020): keys are matched exactly, so it would be another key than the one without it; ${FORM}`,
    ],
    [`\t${key}`, `holds U+0009 at index 0, which is not printable: ${FORM}`],
    [`${key}\u200b`, `holds U+200B at index ${key.length}, which is not printable: ${FORM}`],
  ];
  for (const [sent, says] of cases) {
    const before = await mcp.server.eventCount();
    const result = (await alice.callTool({ name: 'add_message', arguments: send(sent) })) as ToolResult;
    expect([sent, result.isError]).toEqual([sent, true]);
    expect(result.structuredContent).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'idempotencyKey',
      message: `add_message: 'idempotencyKey' ${says}`,
    });
    expect(await mcp.server.eventCount()).toBe(before);
  }
  // The key as first sent is a retry: the first result, nothing sent again.
  const before = await mcp.server.eventCount();
  const again = (await alice.callTool({ name: 'add_message', arguments: send(key) })) as ToolResult;
  expect(again.structuredContent.messageId).toBe(first.structuredContent.messageId);
  expect(again._meta).toEqual({ 'agent-mailbox/replayed': true });
  expect(await mcp.server.eventCount()).toBe(before);
});

test('over HTTP /v1, the body field is refused alike; the header, trimmed by HTTP, is the key itself', async () => {
  const first = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@carol'], body: send('deploy-7') });
  expect(first.status).toBe(201);
  const before = await mcp.server.eventCount();
  const body = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@carol'], body: send(' deploy-7') });
  expect(body.status).toBe(400);
  expect(body.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'idempotencyKey' });
  expect(body.body.message).toContain("'idempotencyKey' begins with whitespace (U+0020)");
  const { idempotencyKey: _key, ...unkeyed } = send('');
  const header = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@carol'],
    body: unkeyed,
    headers: { 'idempotency-key': 'deploy-7 ' },
  });
  expect([header.status, header.body.messageId]).toEqual([201, first.body.messageId]);
  expect(await mcp.server.eventCount()).toBe(before);
});
