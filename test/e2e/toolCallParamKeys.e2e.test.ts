/**
 * A tools/call whose tool arguments sit under another key than `arguments` (`{"name": "list_messages", "input":
 * {"status": "unread"}}`, `args`, `parameters`), or whose params hold any other key, ran the tool without them: the SDK
 * ignored the key, so list_messages listed everything for the unread mail asked and mark_read was refused as if given
 * nothing. It is -32602 naming the key (`field: params.input`), the params a tools/call takes and where the arguments
 * go, with 'arguments' suggested when none were given, over POST /mcp and `mailbox mcp` alike; nothing is run.
 */
import { mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('tool-call-param-keys', ['@alice', '@bob', '@carol']);

const FORM = (tool: string) => `{"name": "${tool}", "arguments": {...}}`;

async function answer(via: 'http' | 'stdio', identity: string, id: number, params: object): Promise<any> {
  const message = { jsonrpc: '2.0', id, method: 'tools/call', params };
  if (via === 'http') {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const posted = await mcp.server.call('POST', '/mcp', { token: mcp.t[identity], rawBody: JSON.stringify(message), headers });
    expect(posted.status).toBe(200);
    return posted.body;
  }
  const stdio = await mcp.clients.rawStdio(mcp.t[identity]);
  stdio.write(message);
  return stdio.answerTo(id);
}

describe.each(['http', 'stdio'] as const)('over %s', (via) => {
  test.each([
    ['input', 'add_message', { to: '@bob', subject: 'never sent', body: 'b' }],
    ['args', 'add_message', { to: ['@bob', '@carol'], subject: 'never sent', body: 'b' }],
    ['parameters', 'mark_read', { all: true }],
  ])("arguments under '%s' are -32602 suggesting 'arguments'; %s runs not", async (key, tool, args) => {
    const before = await mcp.server.eventCount();
    const told = await answer(via, '@alice', 21, { name: tool, [key]: args });
    const message =
      `tools/call does not take 'params.${key}' (did you mean 'arguments'?): its params are name, arguments and _meta, ` +
      `and a tool's arguments go in "arguments": ${FORM(tool)}. Nothing was run.`;
    expect(told).toEqual({
      jsonrpc: '2.0',
      id: 21,
      error: {
        code: -32602,
        message: `MCP error -32602: ${message}`,
        data: {
          error: 'Unknown field',
          code: 'UNKNOWN_FIELD',
          message,
          field: `params.${key}`,
          fields: [`params.${key}`],
          allowed: ['name', 'arguments', '_meta'],
          suggestions: ['arguments'],
        },
      },
    });
    expect(await mcp.server.eventCount()).toBe(before);
  });

  test('another key beside the arguments is refused too, without a suggestion; nothing is sent', async () => {
    const before = await mcp.server.eventCount();
    const args = { to: '@bob', subject: 'never sent', body: 'b' };
    const told = await answer(via, '@alice', 22, { name: 'add_message', arguments: args, priority: 'high' });
    expect(told.error).toMatchObject({
      code: -32602,
      data: { code: 'UNKNOWN_FIELD', field: 'params.priority', allowed: ['name', 'arguments', '_meta'] },
    });
    expect(told.error.data.suggestions).toBeUndefined();
    expect(await mcp.server.eventCount()).toBe(before);
  });
});

test('the call as MCP writes it (name, arguments, _meta) is run: the positive signal', async () => {
  const told = await answer('http', '@alice', 23, {
    name: 'add_message',
    arguments: { to: '@bob', subject: 'sent', body: 'b' },
    _meta: { progressToken: 1 },
  });
  expect(told.result.structuredContent).toMatchObject({ status: 'sent', recipients: ['@bob'] });
  const listed = await mcp.server.call('GET', '/v1/messages', { token: mcp.t['@bob'] });
  expect(listed.body.messages.map((m: { subject: string }) => m.subject)).toEqual(['sent']);
});
