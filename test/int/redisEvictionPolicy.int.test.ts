/**
 * A Redis that may evict keys (a memory limit with any maxmemory-policy but noeviction) drops inbox entries, counts,
 * checkpoints and leases when it is full, and the mailbox would serve what is left as whole views. It started on one
 * without a word; now it says so at start with the setting that prevents it. Redis's default (no limit, noeviction)
 * and a limit with noeviction are quiet.
 */
import type { ChildProcess } from 'node:child_process';
import { createProjectionAdapters } from '../../src/adapters/projectionFactory';
import { parseConfig } from '../../src/config';
import { freePort, spawnRedis, stopChild } from '../support/redisServer';
import { tempDir } from '../support/fixtures';
import { recordingLogger, type LogLine } from '../support/recordingLogger';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) await stopChild(child);
});

async function startsOn(extra: string[]): Promise<LogLine[]> {
  const port = await freePort();
  children.push(await spawnRedis(port, extra));
  const { logger, lines } = recordingLogger();
  const config = parseConfig({
    dataDir: tempDir('mailbox-eviction-'),
    redisUrl: `redis://127.0.0.1:${port}`,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
    adminToken: 'a'.repeat(32),
  });
  const { projectionStore, wakeBus, sharedLimits } = await createProjectionAdapters(config, logger);
  await sharedLimits?.close();
  await wakeBus.close();
  await projectionStore.close();
  // The positive signal that the start got past its look at Redis: the line naming the backend.
  expect(lines.map((l) => l.msg)).toContain('projections: Redis (checkpoint stored with the views); wake bus: Redis pub/sub');
  return lines;
}

test.each([['allkeys-lru'], ['volatile-lru'], ['allkeys-random']])(
  'a memory limit with maxmemory-policy %s: one warning at start naming the policy, the limit and the remedy',
  async (policy) => {
    const lines = await startsOn(['--maxmemory', '100mb', '--maxmemory-policy', policy]);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ policy, maxmemoryBytes: 100 * 1024 * 1024 });
    expect(warnings[0].msg).toBe(
      `projections: Redis may evict the mailbox's keys: maxmemory-policy is ${policy} with maxmemory 100 MB, so when ` +
        'Redis is full it drops keys (inbox entries, counts, checkpoints, leases) and the mailbox would serve what is ' +
        'left as if whole. Set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction; on ' +
        'a managed Redis, its parameter group): a full Redis then refuses writes, which the mailbox reports as ' +
        'unavailable until there is room',
    );
  },
);

test.each([
  ['Redis defaults (no memory limit)', []],
  ['a memory limit with noeviction', ['--maxmemory', '100mb', '--maxmemory-policy', 'noeviction']],
  ['an evicting policy without a memory limit', ['--maxmemory-policy', 'allkeys-lru']],
])('%s: no warning', async (_name, extra) => {
  const lines = await startsOn(extra as string[]);
  expect(lines.filter((l) => l.level >= 40)).toEqual([]);
});
