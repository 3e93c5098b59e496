/**
 * `mailbox serve` configured as docker-compose.scaled.yml configures its API nodes: Redis named by
 * MAILBOX_REDIS_SENTINELS and MAILBOX_REDIS_SENTINEL_NAME (a real Sentinel group: 1 master, 1 replica, 3 sentinels),
 * no MAILBOX_REDIS_URL. Found by a walk through the scaled deployment: every such node stopped at start, exit code 2,
 * "mailbox: MAILBOX_REDIS_URL and MAILBOX_REDIS_SENTINELS are both set: name Redis one way only ..." (serve parsed its
 * configuration twice, and the second parse took the URL the sentinels had been folded into for a MAILBOX_REDIS_URL).
 * `mailbox heartbeat`, `audit` and `projections` started on the same variables. Now two nodes start on them, share the
 * views through the Sentinel's master, and mail sent on one is read on the other, to three identities.
 */
import { ensureBuilt, startCli, type StartedCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { callUrl } from '../support/httpServer';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redisTopologies';
import { REDIS_TEST_TIMEOUT_ENV } from '../support/redisDeadline';

let sentinel: TestRedisSentinel;
const servers: StartedCli[] = [];

beforeAll(async () => {
  ensureBuilt();
  sentinel = await startRedisSentinel();
}, 60_000);
afterAll(async () => {
  for (const server of servers) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await sentinel?.stop();
});

async function listeningUrl(server: StartedCli): Promise<string> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    const listening = /"mailbox listening on (http:\/\/[^ ]+) /.exec(server.stdout());
    if (listening) return listening[1];
    if (server.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the server did not listen: exit ${server.child.exitCode}; ${server.stdout()} ${server.stderr()}`);
}

test('two `mailbox serve` nodes on MAILBOX_REDIS_SENTINELS + MAILBOX_REDIS_SENTINEL_NAME start and share the views', async () => {
  const log = `sqlite:${tempDir('mailbox-sentinel-vars-')}/events.sqlite`;
  const env = (node: string) => ({
    MAILBOX_EVENTSTORE_URL: log,
    MAILBOX_REDIS_SENTINELS: sentinel.sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
    MAILBOX_REDIS_SENTINEL_NAME: sentinel.masterName,
    MAILBOX_REDIS_NAMESPACE: 'sentinelvars',
    ...REDIS_TEST_TIMEOUT_ENV,
    MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILBOX_NODE_ID: node,
    MAILBOX_PORT: '0',
    MAILBOX_LOG_FORMAT: 'json',
    MAILBOX_DATA_DIR: tempDir('mailbox-sentinel-vars-node-'),
  });
  servers.push(startCli(['serve'], env('node-1')));
  const one = await listeningUrl(servers[0]); // it exited with code 2 here
  servers.push(startCli(['serve'], env('node-2')));
  const two = await listeningUrl(servers[1]);

  for (const url of [one, two]) {
    const ready = await callUrl(url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.projectionStore).toMatchObject({ ok: true, backend: 'redis' });
  }
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) {
    const registered = await callUrl(one, 'POST', '/v1/agents', { token: ADMIN_TOKEN, body: { identity } });
    expect(registered.status).toBe(201);
    tokens[identity] = registered.body.token;
  }
  const sent = await callUrl(one, 'POST', '/v1/messages', {
    token: tokens['@a'],
    body: { to: ['@b', '@c'], subject: 'through the sentinels', body: 'x' },
  });
  expect(sent.status).toBe(201);
  for (const identity of ['@b', '@c']) {
    const inbox = await callUrl(two, 'GET', '/v1/messages?status=unread', { token: tokens[identity] });
    expect(inbox.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([sent.body.messageId]);
  }
  expect((await callUrl(two, 'GET', '/v1/inbox/count', { token: tokens['@a'] })).body.unread).toBe(0);
}, 90_000);
