/**
 * `mailbox heartbeat` whose start fails once it has opened its stores: it says why in one line, exit code 2, and the
 * process exits (every connection it opened closed); nothing is written. With --projector on beside Redis views that
 * stand ahead of its log (a SQLite log restored from an older backup), its projector's start refused the views: the
 * daemon printed {"error":"Heartbeat failed","code":"INTERNAL",...} and then stayed up on its Redis connections, deaf
 * to SIGTERM ("signal during startup: stopping at its next step"), until killed.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Redis } from 'ioredis';
import { runAuditCli } from '../support/auditCli';
import { ensureBuilt, runCli, type CliRun } from '../support/builtCli';
import { tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { restoredLogBesideRedisViews } from '../support/restoredLog';

let redis: TestRedis;
const dirs: string[] = [];
beforeAll(async () => {
  ensureBuilt();
  redis = await startRedis();
}, 60_000);
afterAll(async () => {
  await redis.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A log restored from a backup taken after @a, @b and @c registered; the views on Redis also hold @d and @e. */
async function restoredLogBesideViewsAhead(): Promise<{ env: Record<string, string>; namespace: string }> {
  const dir = tempDir('mailbox-heartbeat-start-failures-');
  dirs.push(dir);
  const namespace = `hbstart-${randomUUID().slice(0, 8)}`;
  return { env: await restoredLogBesideRedisViews(dir, redis.url, namespace), namespace };
}

/** Every view key of the namespace with its serialized value (leases aside: a projector may look at its lease). */
async function viewsIn(namespace: string): Promise<Record<string, string>> {
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  try {
    const keys = (await client.keys(`${namespace}:*`)).filter((key) => !key.includes(':lease:')).sort();
    const dumps = await Promise.all(keys.map((key) => client.dumpBuffer(key)));
    return Object.fromEntries(keys.map((key, i) => [key, dumps[i]?.toString('base64') ?? '']));
  } finally {
    client.disconnect();
  }
}

async function logLines(env: Record<string, string>): Promise<string[]> {
  const run = await runAuditCli(['replay', '--json', '--no-progress'], env);
  expect(run.code).toBe(0);
  return run.stdout.trim().split('\n');
}

/** The last stderr line, once the run is shown to have exited 2 with it alone (bin/mailbox.js's "mailbox: ..."). */
function oneLine(run: CliRun): string {
  expect(run.code).toBe(2); // null: still up at the timeout, killed
  expect(run.stderr).not.toContain('    at ');
  const said = [...run.stdout.split('\n'), ...run.stderr.split('\n')].filter((line) => line && !line.startsWith('{"level"'));
  expect(said).toHaveLength(1);
  return said[0];
}

describe('--projector on beside Redis views ahead of its log: refused in one line, exit code 2, and the process exits', () => {
  test.each([
    ['the daemon', ['--metrics-port', 'off']],
    ['--once', ['--once']],
  ])(
    '%s',
    async (_what, args) => {
      const { env, namespace } = await restoredLogBesideViewsAhead();
      const log = await logLines(env);
      const views = await viewsIn(namespace);
      expect(log).toHaveLength(3);
      const run = await runCli(['heartbeat', '--projector', 'on', ...args], env, { timeoutMs: 30_000 });
      const line = oneLine(run);
      expect(line).toMatch(
        /^mailbox: The views in Redis namespace '[^']+' stand at log position 5, ahead of this event log's head \(3;/,
      );
      expect(await logLines(env)).toEqual(log); // nothing written to the log
      expect(await viewsIn(namespace)).toEqual(views); // nor to the views
    },
    90_000,
  );
});
