/**
 * A model's first add_message with a recipient written as it writes names: 'bob' (no @), ['@bob', 'carol'], a list
 * holding the broadcast's other spellings (['*'], ['all']), '@bob, carol'. Each was refused, writing nothing, with the
 * two valid shapes and nothing of the one meant: @bob sat in `suggestions` alone, a list's '*' was told only that a
 * list holds identities, and '@bob, carol' was not said to be a list. The refusal now says it, over MCP (the SDK
 * client) as over HTTP, and still writes nothing; the form it teaches is taken.
 */
import { callTool, mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('recipient-meant-e2e', ['@alice', '@bob', '@carol']);
const send = (to: unknown) => ({ to, subject: 'standup', body: 'at 10' });

test.each([
  ['bob', 'Did you mean @bob? The @ is part of the identity.', ['@bob']],
  [' carol', 'Did you mean @carol? The @ is part of the identity.', ['@carol']],
  ['dave', 'Did you mean @dave? The @ is part of the identity.', ['@dave']],
  ['@bob, carol', `To write to several identities, give 'to' as a list: ["@bob","@carol"] (text is never split).`, undefined],
  [['@bob', 'carol'], 'Did you mean @carol? The @ is part of the identity. Nothing was sent.', ['@carol']],
  [['*'], "For every agent, send to: 'AGENT:*' on its own (not in a list)", ['AGENT:*']],
  [['@bob', 'everyone'], "For every agent, send to: 'AGENT:*' on its own (not in a list)", ['AGENT:*']],
])('to %j: refused naming the recipient meant, over MCP as over HTTP; nothing written', async (to, said, suggestions) => {
  const alice = await mcp.clients.http(mcp.t['@alice']);
  const before = await mcp.server.eventCount();
  const overMcp = await callTool(alice, 'add_message', send(to));
  expect(overMcp.isError).toBe(true);
  expect(overMcp.body).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to });
  expect(overMcp.body.message).toContain(said);
  expect(overMcp.body.suggestions).toEqual(suggestions);
  const overHttp = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@alice'], body: send(to) });
  expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.body]);
  expect(await mcp.server.eventCount()).toBe(before);
});

test('the forms the refusals teach are taken: @bob, ["@bob", "@carol"], AGENT:*', async () => {
  const alice = await mcp.clients.http(mcp.t['@alice']);
  for (const to of ['@bob', ['@bob', '@carol'], 'AGENT:*']) {
    const sent = await callTool(alice, 'add_message', send(to));
    expect([to, sent.isError, sent.body.warnings]).toEqual([to, false, undefined]);
  }
  const inbox = await mcp.server.call('GET', '/v1/messages', { token: mcp.t['@carol'] });
  expect(inbox.body.messages.map((m: { to: unknown }) => m.to)).toEqual(['AGENT:*', ['@bob', '@carol']]);
});
