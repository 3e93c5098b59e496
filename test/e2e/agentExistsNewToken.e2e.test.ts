/**
 * An operator who runs a setup script a second time (the README's walkthrough says so) registers agents that exist:
 * 409 AGENT_EXISTS. It said only "choose another identity", though what that operator wants is the agent's token back,
 * which a new token gives without losing the identity and its mail. The refusal now says how, in each surface's
 * words: the route over HTTP, `mailbox agent token @alice` in the CLI, rotateToken in the library. A retired identity
 * gets no new token, and is told only to choose another. Nothing is written by any of these refusals.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { ensureBuilt, runCli } from '../support/builtCli';

let server: TestServer;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  await server.register(['@alice', '@bob', '@carol']);
  expect((await server.call('DELETE', '/v1/agents/@carol', { token: server.adminToken })).status).toBe(200);
}, 120_000); // a stale dist is built first
afterAll(async () => {
  await server.close();
});

/** `attempt`'s refusal, checked to write nothing. */
async function refusedWithoutEvents<T>(attempt: () => Promise<T>): Promise<T> {
  const before = await server.eventCount();
  const answer = await attempt();
  expect(await server.eventCount()).toBe(before);
  return answer;
}

test('HTTP: registering @alice again is 409 AGENT_EXISTS naming the route that gives it a new token', async () => {
  const again = await refusedWithoutEvents(() =>
    server.call('POST', '/v1/agents', { token: server.adminToken, body: { identity: '@alice' } }),
  );
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ code: 'AGENT_EXISTS', identity: '@alice' });
  expect(again.body.message).toBe(
    'Agent @alice is already registered; choose another identity, or, to act as it again without its token, give it a ' +
      'new one (the old one stops working): POST /v1/agents/@alice/token or `mailbox agent token`. Nothing was written.',
  );
});

test('the CLI: `mailbox agent add @bob` again names `mailbox agent token @bob`, exit code 1', async () => {
  const run = await refusedWithoutEvents(() =>
    runCli(['agent', 'add', '@bob'], { MAILBOX_URL: server.url, MAILBOX_TOKEN: server.adminToken }),
  );
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toBe(
    'error: Agent @bob is already registered; choose another identity, or, to act as it again without its token, give ' +
      'it a new one (the old one stops working): `mailbox agent token @bob`. Nothing was written. (AGENT_EXISTS)\n',
  );
});

test('the library: registerAgent of @alice again names rotateToken, never a route or a command', async () => {
  const admin = await server.mailbox.as(server.adminToken);
  const refusal = await refusedWithoutEvents(() => admin.registerAgent({ identity: '@alice' }).catch((error) => error));
  expect(refusal.code).toBe('AGENT_EXISTS');
  expect(refusal.message).toContain('give it a new one (the old one stops working): rotateToken.');
  expect(refusal.message).not.toMatch(/\/v1\/|mailbox agent/);
});

test('a retired identity is told to choose another, and offered no new token (a retired agent gets none)', async () => {
  const again = await refusedWithoutEvents(() =>
    server.call('POST', '/v1/agents', { token: server.adminToken, body: { identity: '@carol' } }),
  );
  expect(again.status).toBe(409);
  expect(again.body.message).toBe(
    'Agent @carol is already registered (retired; identities are never reused); choose another identity. Nothing was written.',
  );
});
