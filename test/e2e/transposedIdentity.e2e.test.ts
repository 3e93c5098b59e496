/**
 * A recipient typed with two adjacent letters swapped (`@alcie` for the registered `@alice`) was told only that it is
 * not a registered agent: the near-match measure counted a swap as two edits, over the budget of a five-letter name.
 * A swap now costs one edit, so the warning (and, under strictRecipients, the refusal) suggests `@alice`; never
 * substituted: the refused message is not written, the stored one stays addressed to `@alcie`.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let strict: TestServer;
let t: Record<string, string>;
let s: Record<string, string>;
const AGENTS = ['@alice', '@bob', '@carol'];

beforeAll(async () => {
  [server, strict] = await Promise.all([startTestServer(), startTestServer({ strictRecipients: true })]);
  [t, s] = await Promise.all([server.register(AGENTS), strict.register(AGENTS)]);
});
afterAll(() => Promise.all([server.close(), strict.close()]));

const message = (to: unknown) => ({ to, subject: 'review', body: 'please' });

test.each([
  ['@alcie', '@alice'],
  ['@bbo', '@bob'],
  ['@caorl', '@carol'],
])('strictRecipients refuses %s suggesting %s; nothing is written', async (typed, meant) => {
  const before = await strict.eventCount();
  const refused = await strict.call('POST', '/v1/messages', { token: s['@bob'], body: message(typed) });
  expect([refused.status, refused.body.code]).toEqual([404, 'UNKNOWN_RECIPIENT']);
  expect(refused.body.suggestions).toEqual([meant]);
  expect(await strict.eventCount()).toBe(before);
  // The positive signal: the suggestion as given is taken, and its recipient alone reads it.
  expect((await strict.call('POST', '/v1/messages', { token: s['@bob'], body: message(meant) })).status).toBe(201);
  const inbox = await strict.call('GET', '/v1/messages', { token: s[meant] });
  expect(inbox.body.messages.map((m: { to: string }) => m.to)).toEqual([meant]);
});

test('a list entry swapped is refused by its index with the suggestion; no one in the list gets it', async () => {
  const before = await strict.eventCount();
  const refused = await strict.call('POST', '/v1/messages', { token: s['@alice'], body: message(['@bob', '@caorl']) });
  expect(refused.body).toMatchObject({ code: 'UNKNOWN_RECIPIENT', index: 1, entry: '@caorl', suggestions: ['@carol'] });
  expect(await strict.eventCount()).toBe(before);
});

test('without strictRecipients the message is stored to the name as typed, with a warning suggesting @alice', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@bob'], body: message('@alcie') });
  expect(sent.status).toBe(201);
  expect(sent.body.warnings).toEqual([expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT', suggestions: ['@alice'] })]);
  const inbox = await server.call('GET', '/v1/messages', { token: t['@alice'] });
  expect(inbox.body.messages).toEqual([]);
});

test.each([
  ['DELETE', '/v1/agents/@alcie'],
  ['POST', '/v1/agents/@alcie/token'],
])('the admin naming @alcie (%s %s) is told of @alice and nothing is changed', async (method, path) => {
  const before = await server.eventCount();
  const refused = await server.call(method, path, { token: server.adminToken });
  expect([refused.status, refused.body.code]).toEqual([404, 'AGENT_NOT_FOUND']);
  expect(refused.body.suggestions).toEqual(['@alice']);
  expect(refused.body.message).toMatch(
    /^No agent @alcie is registered\. Did you mean @alice\? Nothing was changed; GET \/v1\/agents/,
  );
  expect(await server.eventCount()).toBe(before);
  // The positive signal: @alice's token still works, and she is listed active.
  const agents = await server.call('GET', '/v1/agents', { token: t['@alice'] });
  expect(agents.body.agents).toEqual(expect.arrayContaining([expect.objectContaining({ identity: '@alice', retired: false })]));
});
