/**
 * Token re-issue: POST /v1/agents/{identity}/token (admin) and `mailbox agent token @x` give a
 * new token; the old one is refused at once (401), the agent keeps its identity, mail and
 * receipts; a retired or unknown agent, or a non-admin caller, is refused with zero events written.
 */
import { buildProgram } from '../../src/cli/main';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import type { AgentDirectory } from '../../src/application/agentDirectory';
import { TOKENS } from '../../src/tokens';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const inbox = (token: string) => server.call('GET', '/v1/messages', { token });

test('the new token works, the old one is refused at once, identity and mail are kept; others are untouched', async () => {
  const tokens = await server.register(['@alice', '@bob', '@carol']);
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@alice'],
    body: { to: '@bob', subject: 'before', body: 'x' },
  });
  expect(sent.status).toBe(201);
  const before = await server.eventCount();

  const rotated = await server.call('POST', '/v1/agents/@bob/token', { token: server.adminToken });
  expect(rotated.status).toBe(201);
  expect(rotated.body).toEqual({ identity: '@bob', token: expect.stringMatching(/^mbx_/), rotatedAt: expect.any(String) });
  expect(rotated.body.token).not.toBe(tokens['@bob']);
  const events = (await server.mailbox.eventStore.readAll(null, 1000)).slice(before);
  expect(events.map((e) => [e.type, e.data])).toEqual([
    ['AgentTokenRotated', { identity: '@bob', tokenHash: expect.any(String), rotatedAt: rotated.body.rotatedAt }],
  ]);
  expect(JSON.stringify(events[0].data)).not.toContain(rotated.body.token); // the hash only

  const old = await inbox(tokens['@bob']);
  expect(old.status).toBe(401);
  expect(old.body.code).toBe('UNAUTHENTICATED');
  // Its holder is told what happened to it (it said "not valid; ask an admin to register you", a registration it has).
  expect(old.body.message).toBe(
    `This token of @bob was replaced by a rotation at ${rotated.body.rotatedAt} and no longer works; use the new one ` +
      '(an admin rotated it with POST /v1/agents/@bob/token or `mailbox agent token`).',
  );
  // A token this mailbox never issued (mistyped, another mailbox's) names where each kind of token comes from.
  const unknown = await inbox('mbx_never_issued_by_this_mailbox_0123456789');
  expect([unknown.status, unknown.body.code]).toEqual([401, 'UNAUTHENTICATED']);
  expect(unknown.body.message).toContain("not valid for this mailbox (mistyped, or another mailbox's)");
  expect(unknown.body.message).toContain('MAILBOX_ADMIN_TOKEN or <data dir>/admin.token');
  const fresh = await inbox(rotated.body.token);
  expect(fresh.status).toBe(200);
  expect(fresh.body.messages.map((m: { subject: string }) => m.subject)).toEqual(['before']);
  // Mail sent to @bob after the rotation reaches the same identity; @carol's token is unaffected.
  expect(
    (await server.call('POST', '/v1/messages', { token: tokens['@carol'], body: { to: '@bob', subject: 'after', body: 'y' } }))
      .status,
  ).toBe(201);
  expect((await inbox(rotated.body.token)).body.messages.map((m: { subject: string }) => m.subject)).toEqual(['after', 'before']);
  expect(
    (
      await server.call('POST', '/v1/messages', {
        token: rotated.body.token,
        body: { to: '@alice', subject: 'me again', body: 'z' },
      })
    ).body.recipients,
  ).toEqual(['@alice']);
});

test('refusals write no event: retired agent (clear error), unknown agent, agent caller, a body', async () => {
  const tokens = await server.register(['@dan', '@erin', '@fay']);
  expect((await server.call('DELETE', '/v1/agents/@fay', { token: server.adminToken })).status).toBe(200);
  const before = await server.eventCount();

  const retired = await server.call('POST', '/v1/agents/@fay/token', { token: server.adminToken });
  expect(retired.status).toBe(403);
  expect(retired.body).toMatchObject({ code: 'FORBIDDEN', identity: '@fay' });
  expect(retired.body.message).toMatch(/was retired .*register a new identity/);
  const unknown = await server.call('POST', '/v1/agents/@nobody/token', { token: server.adminToken });
  expect(unknown.status).toBe(404);
  expect(unknown.body.code).toBe('AGENT_NOT_FOUND');
  const byAgent = await server.call('POST', '/v1/agents/@erin/token', { token: tokens['@dan'] });
  expect(byAgent.status).toBe(403);
  const bad = await server.call('POST', '/v1/agents/nobody/token', { token: server.adminToken });
  expect(bad.status).toBe(400);
  const withBody = await server.call('POST', '/v1/agents/@erin/token', { token: server.adminToken, body: { token: 'mine' } });
  expect(withBody.status).toBe(400);
  expect(withBody.body.code).toBe('UNKNOWN_FIELD');

  expect(await server.eventCount()).toBe(before);
  expect((await inbox(tokens['@erin'])).status).toBe(200); // nothing rotated
});

test('library and CLI: mailbox.asActor(admin).rotateToken and `mailbox agent token`; the revocation signal fires (open wake streams listen to it)', async () => {
  const tokens = await server.register(['@gus', '@hal', '@ivy']);
  const changes: Array<[string, string]> = [];
  const directory = server.mailbox.container.resolve<AgentDirectory>(TOKENS.AgentDirectory);
  const unsubscribe = directory.onRevoked((identity, reason) => changes.push([identity, reason]));

  const viaLibrary = await server.mailbox.asActor(ADMIN_ACTOR).rotateToken('@gus');
  await expect(server.mailbox.as(tokens['@gus'])).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  expect((await server.mailbox.as(viaLibrary.token)).actor.identity).toBe('@gus');

  const out: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'agent', 'token', '@hal', '--url', server.url, '--token', server.adminToken]);
  } finally {
    spy.mockRestore();
  }
  expect(out.join('')).toMatch(
    /^New token for @hal at \S+; the old one no longer works\.\nToken \(shown only now[^\n]*\n {2}mbx_\S+/,
  );
  const cliToken = /(mbx_\S+)/.exec(out.join(''))![1];
  expect((await inbox(cliToken)).status).toBe(200);
  expect((await inbox(tokens['@hal'])).status).toBe(401);
  expect((await inbox(tokens['@ivy'])).status).toBe(200);
  expect(changes).toEqual([
    ['@gus', 'token rotated'],
    ['@hal', 'token rotated'],
  ]);
  unsubscribe();
});
