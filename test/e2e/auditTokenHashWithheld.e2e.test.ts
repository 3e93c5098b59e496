/**
 * AgentRegistered and AgentTokenRotated store the SHA-256 of the agent's token, and GET /v1/audit/events (so `mailbox
 * audit replay`, over --url or from the log itself) handed it to every auditor: not the token, but a credential
 * verifier no auditor needs. What auditors read now says '<the token hash, not shown>' in its place (the field stays,
 * so the events keep their shape); the log itself keeps the hash (tokens work as before), and `audit verify` still
 * finds the views equal to the log. A real server on the embedded default (SQLite log and views file).
 */
import { hashToken } from '../../src/application/tokenHash';
import { TOKEN_HASH_WITHHELD } from '../../src/support/tokenHashWithheld';
import { runAuditCli as audit } from '../support/auditCli';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { apiCaller } from '../support/apiCalls';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

let server: ClockedApiServer;
const dataDir = tempDir('mailbox-token-hash-withheld-');
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(), { eventStoreUrl: undefined, dataDir });
});
afterAll(() => server.close());

const call = apiCaller(() => server.url);

test('no token hash reaches an auditor: not in GET /v1/audit/events, nor audit replay; verify still agrees', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c'])
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  const auditor = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@aud', role: 'auditor' })).body.token;
  const rotated = await call('POST', '/v1/agents/@b/token', ADMIN_TOKEN);
  expect(rotated.status).toBe(201);
  const newB: string = rotated.body.token;
  expect((await call('POST', '/v1/messages', newB, { to: ['@a', '@c'], subject: 's', body: 'b' })).status).toBe(201);
  const hashes = [...Object.values(tokens), auditor, newB].map(hashToken);
  expect(new Set(hashes).size).toBe(5);

  // The raw body, as an auditor reads it.
  const response = await fetch(`${server.url}/v1/audit/events?limit=1000`, { headers: { authorization: `Bearer ${auditor}` } });
  expect(response.status).toBe(200);
  const raw = await response.text();
  for (const hash of hashes) expect(raw).not.toContain(hash);
  const events: Array<{ type: string; data: Record<string, unknown> }> = JSON.parse(raw).events;
  const withHash = events.filter((event) => 'tokenHash' in event.data);
  expect(withHash.map((event) => [event.type, event.data.identity, event.data.tokenHash])).toEqual([
    ['AgentRegistered', '@a', TOKEN_HASH_WITHHELD],
    ['AgentRegistered', '@b', TOKEN_HASH_WITHHELD],
    ['AgentRegistered', '@c', TOKEN_HASH_WITHHELD],
    ['AgentRegistered', '@aud', TOKEN_HASH_WITHHELD],
    ['AgentTokenRotated', '@b', TOKEN_HASH_WITHHELD],
  ]);

  // audit replay, from the log itself and over --url: the same lines, one per event, and no hash in them.
  const local = await audit(['replay', '--json', '--no-progress'], { MAILBOX_DATA_DIR: dataDir });
  const remote = await audit(['replay', '--json', '--no-progress', '--url', server.url], { MAILBOX_AUDIT_TOKEN: auditor });
  expect([local.code, remote.code]).toEqual([0, 0]);
  for (const hash of hashes) expect(local.stdout + remote.stdout).not.toContain(hash);
  expect(local.stdout).toBe(remote.stdout);
  expect(
    local.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line)),
  ).toEqual(events);

  // The log still holds the hashes: the new token works, the old one is told it was replaced.
  expect((await call('GET', '/v1/inbox/count', newB)).status).toBe(200);
  const old = await call('GET', '/v1/inbox/count', tokens['@b']);
  expect([old.status, old.body.message]).toEqual([401, expect.stringContaining('was replaced by a rotation')]);

  // audit verify reads the stores themselves: every view still equal to the log.
  await server.mailbox.runner.waitFor((await server.mailbox.eventStore.headPosition())!, 10_000);
  const verified = await audit(['verify', '--json', '--no-progress'], { MAILBOX_DATA_DIR: dataDir });
  expect(verified.code).toBe(0);
  expect(JSON.parse(verified.stdout)).toMatchObject({
    ok: true,
    eventsRebuilt: events.length,
    agentsCompared: 4,
    entriesCompared: 5,
    differences: [],
  });
});
