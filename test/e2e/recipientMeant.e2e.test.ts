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

// A recipient wrapped in quotes or brackets: the JSON encoding of one ('"@bob"'), the broadcast as the refusals' own
// prose quotes it ("to: 'AGENT:*'"), '<@carol>'. Refused with the two shapes alone, and no suggestion: a model saw its
// @bob and the shape agree, and could not tell what was wrong. The refusal now names the recipient it holds (never
// taken for it), over MCP as over HTTP, and still writes nothing.
test.each([
  ['"@bob"', 'Did you mean @bob? A recipient is written alone, without quotes or brackets around it.', ['@bob']],
  ['<@dave>', 'Did you mean @dave? A recipient is written alone, without quotes or brackets around it.', ['@dave']],
  ["'AGENT:*'", 'Did you mean AGENT:*, the broadcast? It is written exactly so', ['AGENT:*']],
  ['"@all"', 'Did you mean AGENT:*, the broadcast?', ['AGENT:*']],
  [
    ['@bob', '`@carol`'],
    'Did you mean @carol? A recipient is written alone, without quotes or brackets around it. Nothing was sent.',
    ['@carol'],
  ],
  [['"AGENT:*"'], "For every agent, send to: 'AGENT:*' on its own (not in a list)", ['AGENT:*']],
])('to %j: refused naming the recipient it wraps, over MCP as over HTTP; nothing written', async (to, said, suggestions) => {
  const alice = await mcp.clients.http(mcp.t['@alice']);
  const before = await mcp.server.eventCount();
  const overMcp = await callTool(alice, 'add_message', send(to));
  expect([overMcp.isError, overMcp.body.code, overMcp.body.suggestions]).toEqual([true, 'INVALID_RECIPIENT_SHAPE', suggestions]);
  expect(overMcp.body.message).toContain(said);
  const overHttp = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@alice'], body: send(to) });
  expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.body]);
  expect(await mcp.server.eventCount()).toBe(before);
});

// An identity's own fault: the refusal named the form alone ("1-64 of A-Z a-z 0-9 _ -"), leaving a model to find the
// '.' of '@bob.smith' or to count the characters of a long name itself. It now says what is wrong, and where.
test.each([
  ['@bob.smith', "It holds '.' at index 4, which no identifier takes."],
  [`@${'b'.repeat(70)}`, 'It has 70 characters after the @; an identifier has at most 64.'],
  ['@', 'Nothing follows the @: an identifier is 1-64 characters.'],
  ['@caf\u00e9', "It holds '\u00e9' (U+00E9) at index 4, which no identifier takes."],
  [['@bob', '@carol smith'], 'It holds a space at index 6, which no identifier takes. Nothing was sent.'],
])('to %j: refused saying what is wrong with the identity, over MCP as over HTTP; nothing written', async (to, said) => {
  const alice = await mcp.clients.http(mcp.t['@alice']);
  const before = await mcp.server.eventCount();
  const overMcp = await callTool(alice, 'add_message', send(to));
  expect([overMcp.isError, overMcp.body.code]).toEqual([true, 'INVALID_RECIPIENT_SHAPE']);
  expect(overMcp.body.message).toContain(said);
  const overHttp = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@alice'], body: send(to) });
  expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.body]);
  expect(await mcp.server.eventCount()).toBe(before);
});

// A long wrong recipient was repeated whole in the message beside 'to': a 100,000-character one came back twice (a
// list's entry three times). The message now shows its first 80 characters and its length; 'to' still holds it all.
test.each([
  ['a string', `@${'b'.repeat(50_000)}.x`, `Recipient '@${'b'.repeat(79)}...' (50003 characters, the first 80 shown)`],
  [
    'a list entry',
    ['@bob', `@${'c'.repeat(50_000)} x`],
    `Recipient to[1] is '@${'c'.repeat(79)}...' (50003 characters, the first 80 shown)`,
  ],
])(
  '%s 50,000 characters long: the message shows its first 80 and its length, to holds it whole; nothing written',
  async (_kind, to, said) => {
    const before = await mcp.server.eventCount();
    const refused = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@alice'], body: send(to) });
    expect([refused.status, refused.body.code, refused.body.to]).toEqual([400, 'INVALID_RECIPIENT_SHAPE', to]);
    expect(refused.body.message).toContain(said);
    expect(refused.body.message.length).toBeLessThan(1_000);
    expect(await mcp.server.eventCount()).toBe(before);
  },
);

// A long list entry was in the answer whole twice beside the cut message: in 'to' (the request's own field, kept whole
// as DESIGN's envelope keeps a single recipient's) and again in 'entry'. 'entry' is now cut as the message cuts it, with
// its length; a short one (and one that is no string) is still whole.
test.each([
  ['a string', `@${'c'.repeat(50_000)} x`, { entry: `@${'c'.repeat(79)}...`, entryLength: 50_003 }],
  ['an object', { name: 'd'.repeat(50_000) }, { entry: `{"name":"${'d'.repeat(71)}...`, entryLength: 50_011 }],
  ['a short string', 'AGENT:gpt', { entry: 'AGENT:gpt' }],
  ['a number', 42, { entry: 42 }],
])(
  'a list entry that is %s: entry holds it as the message shows it, to holds it whole; nothing written',
  async (_kind, entry, said) => {
    const alice = await mcp.clients.http(mcp.t['@alice']);
    const before = await mcp.server.eventCount();
    const to = ['@bob', entry, '@carol'];
    const overMcp = await callTool(alice, 'add_message', send(to));
    expect(overMcp.isError).toBe(true);
    expect(overMcp.body).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to, index: 1, ...said });
    expect(overMcp.body.entryLength).toBe((said as { entryLength?: number }).entryLength);
    const overHttp = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@alice'], body: send(to) });
    expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.body]);
    expect(JSON.stringify(overHttp.body).length).toBeLessThan(JSON.stringify(to).length + 2_000);
    expect(await mcp.server.eventCount()).toBe(before);
  },
);

test('a filter given a wrong identity says what is wrong with it too', async () => {
  const bob = await mcp.clients.http(mcp.t['@bob']);
  const listed = await callTool(bob, 'list_messages', { from: '@alice.a' });
  expect([listed.isError, listed.body.code, listed.body.field]).toEqual([true, 'VALIDATION_FAILED', 'from']);
  expect(listed.body.message).toContain(`"@alice.a" is not one: it holds '.' at index 6, which no identifier takes`);
  const quoted = await callTool(bob, 'list_messages', { from: '"@alice"' });
  expect([quoted.isError, quoted.body.code, quoted.body.field]).toEqual([true, 'VALIDATION_FAILED', 'from']);
  expect(quoted.body.message).toContain(`is not one: did you mean "@alice"? (an identity is written alone, without quotes`);
});

// A send to an unregistered identity near a registered one (@bobb, @carl) is stored with a warning whose suggestions
// named @bob, but whose message did not: "@bobb is not a registered agent: it will see this message only if an agent
// registers under that name; list_agents ...". A model read the message and went on. It now ends "did you mean @bob?".
test.each([
  ['@bobb', '@bob'],
  [['@alice', '@carl'], '@carol'],
])('to %j: stored, the warning saying in words the agent meant (MCP and HTTP)', async (to, meant) => {
  const alice = await mcp.clients.http(mcp.t['@alice']);
  const overMcp = await callTool(alice, 'add_message', send(to));
  expect(overMcp.isError ?? false).toBe(false);
  const [warning] = overMcp.body.warnings.filter((w: { code: string }) => w.code === 'UNREGISTERED_RECIPIENT');
  expect(warning).toMatchObject({ suggestions: [meant] });
  expect(warning.message).toMatch(new RegExp(`list_agents \\(GET /v1/agents\\) lists the agents; did you mean ${meant}\\?$`));
  const overHttp = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@alice'], body: send(to) });
  expect(overHttp.status).toBe(201);
  expect(overHttp.body.warnings).toContainEqual(warning);
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
