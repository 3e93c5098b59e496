/**
 * Identities that differ only in case (`@alice`, `@Alice`, `@ALICE`) are a mix-up waiting to happen in a swarm
 * (models re-case names): registering a case variant of an existing identity, retired ones too, is 409 AGENT_EXISTS
 * naming the existing one; a send to a case variant of a registered identity is 404 UNKNOWN_RECIPIENT suggesting it,
 * in the default (permissive) mode too, never re-cased; retiring or rotating the token of a case variant is 404
 * AGENT_NOT_FOUND suggesting it, never applied to it (HTTP and CLI). Nothing is written by a refusal. A log that already holds
 * case variants (written before) stays readable and usable: each variant keeps its inbox.
 */
import { buildProgram } from '../../src/cli/main';
import { AGENT_REGISTRY_STREAM } from '../../src/events/streams';
import { hashToken } from '../../src/application/tokenHash';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer(); // MAILBOX_STRICT_RECIPIENTS off: unregistered identities are otherwise accepted
  t = await server.register(['@alice', '@bob', '@carol', '@dave']);
});
afterAll(async () => {
  await server.close();
});

const register = (identity: string) => server.call('POST', '/v1/agents', { token: server.adminToken, body: { identity } });
const send = (from: string, to: unknown) =>
  server.call('POST', '/v1/messages', { token: t[from], body: { to, subject: 'hello', body: 'x' } });

/** `attempt` refused with `status` and `code`, and nothing written. */
async function refusedWithoutEvents(attempt: () => Promise<{ status: number; body: any }>, status: number, code: string) {
  const before = await server.eventCount();
  const answer = await attempt();
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
  expect(await server.eventCount()).toBe(before);
  return answer.body;
}

test('registering a case variant of a registered identity is 409 AGENT_EXISTS naming it; of a retired one too', async () => {
  for (const variant of ['@Alice', '@ALICE', '@aLiCe']) {
    const refused = await refusedWithoutEvents(() => register(variant), 409, 'AGENT_EXISTS');
    expect(refused).toMatchObject({ identity: variant, existing: '@alice' });
    expect(refused.message).toContain(`Agent @alice is already registered, and ${variant} differs from it only in case`);
  }
  expect((await server.call('DELETE', '/v1/agents/@dave', { token: server.adminToken })).status).toBe(200);
  const retired = await refusedWithoutEvents(() => register('@Dave'), 409, 'AGENT_EXISTS');
  expect(retired).toMatchObject({ identity: '@Dave', existing: '@dave' });
  expect(retired.message).toContain('Agent @dave is already registered (retired; identities are never reused)');
  expect((await register('@alice-2')).status).toBe(201); // more than case: a new identity
  const agents = (await server.call('GET', '/v1/agents', { token: t['@bob'] })).body.agents.map((a: any) => a.identity);
  expect(agents.filter((identity: string) => identity.toLowerCase() === '@alice')).toEqual(['@alice']);
});

test('a send to a case variant of a registered identity is 404 UNKNOWN_RECIPIENT suggesting it, never re-cased', async () => {
  const direct = await refusedWithoutEvents(() => send('@bob', '@ALICE'), 404, 'UNKNOWN_RECIPIENT');
  expect(direct).toMatchObject({ to: '@ALICE', suggestions: ['@alice'] });
  expect(direct.message).toMatch(
    /^@ALICE is not registered, and never can be: @alice is, which differs only in case .* Did you mean @alice\? Nothing was sent\.$/,
  );
  const listed = await refusedWithoutEvents(() => send('@bob', ['@carol', '@Alice']), 404, 'UNKNOWN_RECIPIENT');
  expect(listed).toMatchObject({ index: 1, entry: '@Alice', suggestions: ['@alice'] });
  expect(listed.message).toContain('Nothing was sent to any of the list (to[1]).');
  const retired = await refusedWithoutEvents(() => send('@bob', '@DAVE'), 404, 'UNKNOWN_RECIPIENT');
  expect(retired.message).toContain('@DAVE is not registered, and never can be: @dave (retired) is');
  expect(retired.suggestions).toBeUndefined();

  // The identity as registered is delivered to, and another unregistered identity is still accepted with a warning.
  const sent = await send('@bob', '@alice');
  expect(sent.status).toBe(201);
  const inbox = await server.call('GET', '/v1/messages', { token: t['@alice'] });
  expect(inbox.body.messages.map((m: any) => m.messageId)).toContain(sent.body.messageId);
  const stranger = await send('@bob', '@erin');
  expect(stranger).toMatchObject({ status: 201, body: { warnings: [{ code: 'UNREGISTERED_RECIPIENT' }] } });
});

test('a log that already holds case variants stays readable: each keeps its inbox; a third variant is refused', async () => {
  // As a version before this rule wrote it: @Carol registered beside @carol.
  const token = 'mbx_case-variant-written-before-the-rule-0000000';
  const at = new Date().toISOString();
  const id = 'legacy-carol-variant';
  await server.mailbox.eventStore.append(
    AGENT_REGISTRY_STREAM,
    [
      {
        eventId: '00000000-0000-4000-8000-00000000ca01',
        type: 'AgentRegistered',
        data: { identity: '@Carol', role: 'agent', tokenHash: hashToken(token), registeredAt: at },
        metadata: { commandId: id, correlationId: id, causationId: id, actor: 'admin', at, schemaVersion: 1 },
      },
    ],
    'any',
  );
  t['@Carol'] = token;
  const until = Date.now() + 10_000;
  let listed: string[] = [];
  while (!listed.includes('@Carol') && Date.now() < until) {
    listed = (await server.call('GET', '/v1/agents', { token: t['@bob'] })).body.agents.map((a: any) => a.identity);
    if (!listed.includes('@Carol')) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(listed).toEqual(expect.arrayContaining(['@carol', '@Carol']));

  const toVariant = await send('@bob', '@Carol');
  expect(toVariant.status).toBe(201);
  expect(toVariant.body.warnings).toBeUndefined();
  const toFirst = await send('@bob', '@carol');
  expect(toFirst.status).toBe(201);
  const inboxOf = async (who: string) =>
    (await server.call('GET', '/v1/messages', { token: t[who] })).body.messages.map((m: any) => m.messageId);
  expect(await inboxOf('@Carol')).toEqual([toVariant.body.messageId]);
  expect(await inboxOf('@carol')).toEqual([toFirst.body.messageId]);

  const third = await refusedWithoutEvents(() => send('@bob', '@CAROL'), 404, 'UNKNOWN_RECIPIENT');
  expect(third.suggestions).toEqual(['@carol', '@Carol']);
  expect((await refusedWithoutEvents(() => register('@CAROL'), 409, 'AGENT_EXISTS')).existing).toBe('@carol');
});

test('retiring or rotating a case variant is 404 AGENT_NOT_FOUND suggesting the registered identity, never acting on it', async () => {
  const admin = { token: server.adminToken };
  const variantOfAlice =
    /^No agent @A[lL][iI][cC][eE] is registered: @alice is, which differs only in case \(identities are case-sensitive; none is (retired|given a new token) in place of another\)\. Did you mean @alice\? Nothing was changed\.$/;
  for (const [method, path] of [
    ['DELETE', '/v1/agents/@ALICE'],
    ['POST', '/v1/agents/@Alice/token'],
  ]) {
    const refused = await refusedWithoutEvents(() => server.call(method, path, admin), 404, 'AGENT_NOT_FOUND');
    expect(refused).toMatchObject({ identity: path.split('/')[3], suggestions: ['@alice'] });
    expect(refused.message).toMatch(variantOfAlice);
  }
  // @alice was neither retired nor given a new token: its token still works, and it still receives.
  const sent = await send('@bob', '@alice');
  expect(sent).toMatchObject({ status: 201, body: { recipients: ['@alice'] } });
  const inbox = await server.call('GET', '/v1/messages', { token: t['@alice'] });
  expect(inbox.body.messages.map((m: any) => m.messageId)).toContain(sent.body.messageId);

  // A retired variant is named as such, not suggested; several variants (a log from before) are all suggested.
  const retired = await refusedWithoutEvents(() => server.call('DELETE', '/v1/agents/@DAVE', admin), 404, 'AGENT_NOT_FOUND');
  expect(retired.message).toContain('No agent @DAVE is registered: @dave (retired) is, which differs only in case');
  expect(retired.message).toMatch(/Nothing was changed\.$/);
  expect(retired.suggestions).toBeUndefined();
  const two = await refusedWithoutEvents(() => server.call('POST', '/v1/agents/@CAROL/token', admin), 404, 'AGENT_NOT_FOUND');
  expect(two.suggestions).toEqual(['@carol', '@Carol']);
  expect(two.message).toContain('@carol and @Carol are, which differ only in case');
  expect(two.message).toContain('Did you mean @carol or @Carol?');
  // No variant: the message as before, no suggestions.
  const nobody = await refusedWithoutEvents(() => server.call('DELETE', '/v1/agents/@zed', admin), 404, 'AGENT_NOT_FOUND');
  expect(nobody.message).toBe('No agent @zed is registered; GET /v1/agents lists the registered ones.');
  expect(nobody.suggestions).toBeUndefined();
});

test.each([['retire'], ['token']])(
  'mailbox agent %s @ALICE: the error and "did you mean: @alice", exit 1, nothing written',
  async (verb) => {
    const err: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
    const before = await server.eventCount();
    try {
      process.exitCode = undefined;
      await buildProgram()
        .exitOverride()
        .parseAsync(['node', 'mailbox', 'agent', verb, '@ALICE', '--url', server.url, '--token', server.adminToken]);
      expect(process.exitCode).toBe(1);
    } finally {
      process.exitCode = undefined;
      jest.restoreAllMocks();
    }
    expect(err.join('')).toContain('error: No agent @ALICE is registered: @alice is, which differs only in case');
    expect(err.join('')).toContain('(AGENT_NOT_FOUND)\n  did you mean: @alice\n');
    expect(await server.eventCount()).toBe(before);
    expect((await server.call('GET', '/v1/messages', { token: t['@alice'] })).status).toBe(200);
  },
);

test('a listing filtered by a case variant of a registered identity says so (it answered "no messages"); MCP and CLI alike', async () => {
  // @bob writes to @alice; @alice lists from=@Bob, @bob lists his outbox to=@ALICE: neither can ever match (no agent can
  // be registered as @Bob beside @bob), and each was an empty page, as if @bob had never written.
  expect((await send('@bob', '@alice')).status).toBe(201);
  const list = (who: string, query: string) => server.call('GET', `/v1/messages?${query}`, { token: t[who] });
  const from = await refusedWithoutEvents(() => list('@alice', 'from=@Bob'), 400, 'VALIDATION_FAILED');
  expect(from).toMatchObject({ field: 'from', suggestions: ['@bob'] });
  expect(from.message).toContain("'from' is @Bob, which is no agent: @bob is registered, differing only in case");
  expect(from.message).toContain('Did you mean from=@bob?');
  const to = await refusedWithoutEvents(() => list('@bob', 'box=outbox&to=@ALICE'), 400, 'VALIDATION_FAILED');
  expect(to).toMatchObject({ field: 'to', suggestions: ['@alice'] });

  // The filters as written still list: the registered identity, one nobody registered (mail may come later), and a
  // case variant registered before the rule (@Carol beside @carol, above) each answer their page, empty or not.
  expect((await list('@alice', 'from=@bob')).body.messages.length).toBeGreaterThan(0);
  expect((await list('@alice', 'from=@nobody-yet')).body).toMatchObject({ messages: [] });
  expect((await list('@alice', 'from=@Carol')).status).toBe(200);
  expect((await list('@alice', 'from=@carol')).status).toBe(200);

  // Marking all read from @Bob answered changed 0; from @bob marks what @alice has seen of it.
  const readAll = (fromWhom: string) =>
    server.call('POST', '/v1/messages/read', { token: t['@alice'], body: { all: true, from: fromWhom, includeUnseen: true } });
  const all = await refusedWithoutEvents(() => readAll('@Bob'), 400, 'VALIDATION_FAILED');
  expect(all).toMatchObject({ field: 'from', suggestions: ['@bob'] });
  expect(all.message).toContain("mark_read: 'from' is @Bob, which is no agent");
  expect((await readAll('@bob')).body.changed).toBeGreaterThan(0);
  expect((await readAll('@bob')).body).toMatchObject({ changed: 0 }); // nothing left: still an answer, not a refusal

  const mcp = await server.call('POST', '/mcp', {
    token: t['@alice'],
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_messages', arguments: { from: '@BOB' } } },
  });
  expect(mcp.body.result).toMatchObject({
    isError: true,
    structuredContent: { code: 'VALIDATION_FAILED', suggestions: ['@bob'] },
  });

  const err: string[] = [];
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  try {
    process.exitCode = undefined;
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'inbox', '--from', '@Bob', '--url', server.url, '--token', t['@alice']]);
    expect(process.exitCode).toBe(1);
  } finally {
    process.exitCode = undefined;
    jest.restoreAllMocks();
  }
  // In the CLI's words: the command and its flag, not list_messages and from=@bob.
  expect(err.join('')).toContain("error: mailbox inbox: '--from' is @Bob, which is no agent: @bob is registered");
  expect(err.join('')).toContain('Did you mean --from @bob? (VALIDATION_FAILED)');
  expect(err.join('')).toContain('did you mean: @bob');
});
