/**
 * Least privilege with refusals that teach: an auditor cannot send or read an inbox, an agent cannot read the audit
 * routes, the admin token acts as no agent. Each refusal (403 FORBIDDEN, nothing written) names the role needed and
 * the one held, and now also what the caller's role does instead and which token does this: it stopped at "Sending a
 * message needs the agent role; your token is auditor @aud.", leaving the rest to guess; an agent refused an admin's
 * command ("Registering an agent needs the admin role; your token is agent @a.") is told that no agent's token does it
 * and where the admin token is. Real server, real CLI.
 */
import { ensureBuilt, runCli } from '../support/builtCli';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  t = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@aud'], 'auditor')) };
}, 120_000);
afterAll(() => server.close());

const AUDITOR_READS =
  'An auditor reads everything and changes nothing: the log (GET /v1/audit/events, mailbox audit replay), any message ' +
  '(GET /v1/messages/{id}) and its delivery (GET /v1/messages/{id}/delivery).';
const AGENT_READS =
  "An agent reads its own mail; the log and the mailbox's views are read with an auditor's token (the admin registers " +
  'one: POST /v1/agents {"identity": "@ops", "role": "auditor"}, or mailbox agent add @ops --role auditor) or the admin token.';
const ADMIN_ACTS =
  'The admin token acts as no agent: this is done with the token of the agent it is for (shown once when it was ' +
  'registered; POST /v1/agents/{identity}/token issues a new one).';

const ADMIN_ONLY =
  "No agent's token does this: it is done with the admin token, which whoever runs the mailbox holds (their " +
  'MAILBOX_ADMIN_TOKEN, or the one the server generated at its first start, printed once and kept in its data directory ' +
  'as admin.token: $MAILBOX_DATA_DIR/admin.token, ./data/admin.token by default). Ask them to do it.';

async function refused(token: string, method: string, path: string, body?: unknown): Promise<string> {
  const before = await server.eventCount();
  const answer = await server.call(method, path, { token, body });
  expect([answer.status, answer.body.code]).toEqual([403, 'FORBIDDEN']);
  expect(await server.eventCount()).toBe(before);
  return answer.body.message;
}

test('each refusal says what the caller can do instead and which token does this; nothing is written', async () => {
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: ['@b', '@c'], subject: 's', body: 'x' } });
  const id = sent.body.messageId as string;
  const send = { to: '@b', subject: 'hi', body: 'x' };

  expect(await refused(t['@aud'], 'POST', '/v1/messages', send)).toBe(
    `Sending a message needs the agent role; your token is auditor @aud. ${AUDITOR_READS} This is done with the token of the agent it is for.`,
  );
  expect(await refused(t['@aud'], 'POST', `/v1/messages/${id}/read`)).toMatch(/^Marking a message read needs the agent role/);
  expect(await refused(t['@aud'], 'POST', '/v1/agents', { identity: '@d' })).toBe(
    `Registering an agent needs the admin role; your token is auditor @aud. ${AUDITOR_READS} This is done with the admin token.`,
  );
  for (const path of ['/v1/audit/events', '/v1/audit/stream', '/v1/heartbeat', `/v1/audit/messages/${id}`]) {
    expect(await refused(t['@a'], 'GET', path)).toMatch(new RegExp(`; your token is agent @a\\. ${escape(AGENT_READS)}$`));
  }
  expect(await refused(server.adminToken, 'POST', '/v1/messages', send)).toBe(
    `Sending a message needs the agent role; your token is the admin token. ${ADMIN_ACTS}`,
  );
  // An agent refused an admin's command: no agent's token does it, the admin token does, and where that token is.
  expect(await refused(t['@a'], 'POST', '/v1/agents', { identity: '@d' })).toBe(
    `Registering an agent needs the admin role; your token is agent @a. ${ADMIN_ONLY}`,
  );
  expect(await refused(t['@b'], 'DELETE', '/v1/agents/@c')).toBe(
    `Retiring an agent needs the admin role; your token is agent @b. ${ADMIN_ONLY}`,
  );
  expect(await refused(t['@c'], 'POST', '/v1/agents/@a/token')).toMatch(
    new RegExp(`your token is agent @c\\. ${escape(ADMIN_ONLY)}$`),
  );

  // What the auditor can do, it does: the message and its delivery.
  expect((await server.call('GET', `/v1/messages/${id}`, { token: t['@aud'] })).status).toBe(200);
  expect((await server.call('GET', `/v1/messages/${id}/delivery`, { token: t['@aud'] })).status).toBe(200);

  // The real CLI prints the same on stderr (exit 1).
  const before = await server.eventCount();
  const cli = await runCli(['send', '@b', 'hi', 'x'], { MAILBOX_URL: server.url, MAILBOX_TOKEN: t['@aud'] });
  expect(cli.code).toBe(1);
  expect(cli.stderr).toContain(
    `your token is auditor @aud. ${AUDITOR_READS} This is done with the token of the agent it is for.`,
  );
  expect(await server.eventCount()).toBe(before);
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
