/**
 * A model's first call often nests the tool's fields one level too deep: `add_message {"arguments": {"to": ...,
 * "subject": ..., "body": ...}}` (or under `input`, `params`, `message`). It was refused as UNKNOWN_FIELD naming the
 * key and the allowed fields, and `message` was even told "did you mean 'body'?", the wrong way out: the whole message
 * under `body`. The refusal now says the fields inside are the call's own and to give them at the top level, with
 * their form and no field suggested; over both MCP transports (the SDK's client) and HTTP alike, nothing written.
 * A wrapper holding anything the call does not take is refused as before.
 */
import { mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('wrapped-arguments', ['@alice', '@bob', '@carol']);

async function refusedWithoutEvents(call: () => Promise<any>): Promise<any> {
  const before = await mcp.server.eventCount();
  const envelope = await call();
  expect(await mcp.server.eventCount()).toBe(before);
  return envelope;
}

describe.each(['http', 'stdio'] as const)('MCP over %s', (via) => {
  const callTool = async (name: string, args: Record<string, unknown>) => {
    const client = via === 'http' ? await mcp.clients.http(mcp.t['@alice']) : await mcp.clients.stdio(mcp.t['@alice']);
    const result: any = await client.callTool({ name, arguments: args });
    expect(result.isError).toBe(true);
    return result.structuredContent;
  };

  test.each([
    [
      'arguments',
      'add_message',
      { to: ['@bob', '@carol'], subject: 'standup', body: '10:00' },
      '"to": ..., "subject": ..., "body": ...',
    ],
    ['message', 'add_message', { to: '@bob', subject: 'standup', body: '10:00' }, '"to": ..., "subject": ..., "body": ...'],
    ['params', 'list_messages', { status: 'unread' }, '"status": ...'],
    ['input', 'mark_read', { all: true }, '"all": ...'],
    // JSON-encoded in the wrapper, as a client encodes a filter (seed 003): told only that 'filters' is no field
    ['filters', 'list_messages', JSON.stringify({ status: 'unread', from: '@bob' }), '"status": ..., "from": ...'],
  ])("the fields wrapped in '%s' (%s) are told to go at the top level", async (wrapper, tool, fields, form) => {
    const envelope = await refusedWithoutEvents(() => callTool(tool, { [wrapper]: fields }));
    expect(envelope).toMatchObject({ code: 'UNKNOWN_FIELD', field: wrapper });
    expect(envelope.suggestions).toBeUndefined();
    const inside = typeof fields === 'string' ? JSON.parse(fields) : fields;
    expect(envelope.message).toContain(
      `The fields inside '${wrapper}' (${Object.keys(inside).join(', ')}) are ${tool}'s own: give them at the top ` +
        `level, {${form}}, not wrapped in '${wrapper}'. Nothing was done.`,
    );
  });

  test('a wrapper holding a field the tool does not take is refused as before, with no such advice', async () => {
    const envelope = await refusedWithoutEvents(() =>
      callTool('add_message', { input: { to: '@bob', subject: 's', body: 'b', from: '@alice' } }),
    );
    expect(envelope).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'input' });
    expect(envelope.message).not.toContain('top level');
  });
});

test('HTTP: POST /v1/messages with the message wrapped in "message" is told the same, not to put it in body', async () => {
  const posted = await refusedWithoutEvents(async () =>
    mcp.server.call('POST', '/v1/messages', {
      token: mcp.t['@alice'],
      body: { message: { to: '@bob', subject: 'standup', body: '10:00' } },
    }),
  );
  expect(posted.status).toBe(400);
  expect(posted.body).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'message' });
  expect(posted.body.suggestions).toBeUndefined();
  expect(posted.body.message).toContain(
    `The fields inside 'message' (to, subject, body) are add_message's own: give them at the top level, ` +
      `{"to": ..., "subject": ..., "body": ...}, not wrapped in 'message'. Nothing was done.`,
  );
  // once unwrapped, the same fields send
  const sent = await mcp.server.call('POST', '/v1/messages', {
    token: mcp.t['@alice'],
    body: { to: '@bob', subject: 'standup', body: '10:00' },
  });
  expect(sent.status).toBe(201);
});
