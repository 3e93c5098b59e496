/**
 * The projector_absent alarm with several `mailbox serve` nodes on one Redis namespace (one SQLite log file), as a
 * deployment runs them: the node that projects stopping while another keeps the views is no alarm (the stopping node
 * removes the live mark they share, and the other renews it within a second: the daemon looks again after 1.5 s), nor
 * exit code 1 of `mailbox heartbeat --once`; every node stopping is the alarm, and --once exits 1. A real redis-server,
 * real spawned servers and heartbeat.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { ensureBuilt, runCli, startCli, type StartedCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { callUrl } from '../support/httpServer';
import { freePort, startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_ENV } from '../support/redisDeadline';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let dataDir: string;
const children: StartedCli[] = [];
beforeAll(async () => {
  ensureBuilt();
  redis = await startRedis();
  dataDir = tempDir('mailbox-heartbeat-nodes-');
}, 120_000);
afterAll(async () => {
  for (const child of children) {
    child.child.kill('SIGKILL');
    await child.exited;
  }
  await redis.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface ServeNode {
  id: string;
  url: string;
  cli: StartedCli;
}

test('one node of two stopping is no projector_absent alarm (daemon nor --once); both stopping is, and --once exits 1', async () => {
  const namespace = `hbnodes-${randomUUID().slice(0, 8)}`;
  const env = {
    MAILBOX_DATA_DIR: dataDir,
    MAILBOX_REDIS_URL: redis.url,
    MAILBOX_REDIS_NAMESPACE: namespace,
    ...REDIS_TEST_TIMEOUT_ENV,
  };
  const serve = async (id: string): Promise<ServeNode> => {
    const port = await freePort();
    const cli = startCli(['serve'], {
      ...env,
      MAILBOX_PORT: String(port),
      MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
      MAILBOX_NODE_ID: id,
      MAILBOX_PROJECTOR_LEASE_MS: '1500',
      MAILBOX_LOG_FORMAT: 'json',
    });
    children.push(cli);
    await waitFor(() => cli.stdout().includes('mailbox listening on'), { timeoutMs: 30_000, what: `${id} listening` });
    return { id, url: `http://127.0.0.1:${port}`, cli };
  };
  const leadership = async (node: ServeNode): Promise<string | null> => {
    const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    if (response === null) return null;
    const body = (await response.json()) as any;
    return (body.projections ?? body.details?.checks?.projections)?.leadership?.role ?? null;
  };
  const stop = async (node: ServeNode) => {
    node.cli.child.kill('SIGTERM');
    expect((await node.cli.exited).code).toBe(0);
  };

  const first = await serve('node-1');
  const second = await serve('node-2');
  await waitFor(async () => (await leadership(first)) === 'leading' || (await leadership(second)) === 'leading', {
    timeoutMs: 30_000,
    what: 'one node projecting',
  });
  const [leader, other] = (await leadership(first)) === 'leading' ? [first, second] : [second, first];
  const token = (await callUrl(leader.url, 'POST', '/v1/agents', { token: ADMIN_TOKEN, body: { identity: '@a' } })).body
    .token as string;
  for (const identity of ['@b', '@c'])
    await callUrl(leader.url, 'POST', '/v1/agents', { token: ADMIN_TOKEN, body: { identity } });

  const port = await freePort();
  const daemon = startCli(['heartbeat', '--interval', '200ms', '--metrics-port', String(port)], env);
  children.push(daemon);
  type Status = {
    healthy: boolean;
    alarms: Array<{ alarm: string }>;
    lastTick: { at: string; pipeline: { projectorLive?: boolean; checkpoint: string | null } } | null;
  };
  const status = async (): Promise<(Status & { code: number }) | null> => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
    return response === null ? null : { code: response.status, ...((await response.json()) as Status) };
  };
  const absentLines = () =>
    daemon
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"alarm":"projector_absent"'));
  await waitFor(async () => (await status())?.lastTick?.pipeline.projectorLive === true, {
    timeoutMs: 30_000,
    what: 'a tick that saw a server keep the views',
  });

  // The node that projects stops cleanly (its shared live mark removed): the other takes the projector lease over.
  const stoppedAt = Date.now();
  await stop(leader);
  await waitFor(async () => (await leadership(other)) === 'leading', { timeoutMs: 30_000, what: `${other.id} projecting` });
  // Positive signals that the daemon watched long enough: a send through the remaining node reaches the views it reads,
  // and it has ticked past the 5 s in which an unrenewed mark lapses.
  const sent = await callUrl(other.url, 'POST', '/v1/messages', {
    token,
    body: { to: '@b', subject: 'still served', body: '.' },
  });
  expect(sent.status).toBe(201);
  const checkpointThen = (await status())!.lastTick!.pipeline.checkpoint;
  await waitFor(
    async () => {
      const now = await status();
      return (
        now?.lastTick !== null &&
        now !== null &&
        Date.parse(now.lastTick!.at) > stoppedAt + 6_000 &&
        now.lastTick!.pipeline.checkpoint !== checkpointThen
      );
    },
    { timeoutMs: 30_000, what: 'ticks past the mark lapse that saw the send applied' },
  );
  expect(await status()).toMatchObject({ code: 200, healthy: true, alarms: [], lastTick: { pipeline: { projectorLive: true } } });
  expect(absentLines()).toEqual([]);
  const withOne = await runCli(['heartbeat', '--once', '--wake-grace', '0'], env);
  expect(withOne.code).toBe(0);
  expect(JSON.parse(withOne.stdout).pipeline).toMatchObject({ projectorLive: true });

  // Every node stopped: the alarm (once), /healthz 503, and --once exits 1 naming it.
  await stop(other);
  await waitFor(async () => (await status())?.code === 503, { timeoutMs: 30_000, what: 'the daemon saying unhealthy' });
  expect(await status()).toMatchObject({ healthy: false, alarms: [{ alarm: 'projector_absent' }] });
  expect(absentLines().map((line) => (JSON.parse(line) as { level: number }).level)).toEqual([50]);
  const withNone = await runCli(['heartbeat', '--once', '--wake-grace', '0'], env);
  expect(withNone.code).toBe(1);
  expect(JSON.parse(withNone.stdout).pipeline).toMatchObject({ projectorLive: false, stalled: false });
  expect(withNone.stderr).toContain('"alarm":"projector_absent"');
}, 180_000);
