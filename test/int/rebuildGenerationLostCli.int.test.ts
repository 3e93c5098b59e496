/**
 * `mailbox projections rebuild` while Redis loses its data (flushed) before the rebuilt generation is switched to: the
 * switch finds the generation gone (GenerationLost). The CLI printed {"error":"Projections command failed","code":
 * "INTERNAL",...} naming no remedy; it now prints one line saying to run it again, exit code 2 (as its help says).
 * So it does when the loss is found by the copy (Redis unavailable, and empty once it answers again), not the switch.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { RedisGenerations } from '../../src/adapters/projections/redisGenerations';
import { unavailable } from '../../src/errors';
import { runRebuildCommand } from '../../src/cli/commands/projections';
import { appendLog, generateLog } from '../contract/projectionStoreLog';
import { scratchBase, tempDir } from '../support/fixtures';
import { runProjections, theOneLine, type ProjectionsRun } from '../support/projectionsCli';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_ENV } from '../support/redisDeadline';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(async () => {
  jest.restoreAllMocks();
  await redis.stop();
});

/** `mailbox projections rebuild` of the log in `file` into Redis `namespace`, in process: what it printed, its exit code. */
const rebuildOnRedis = (file: string, namespace: string): Promise<ProjectionsRun> =>
  runProjections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '50', json: true }), {
    MAILBOX_EVENTSTORE_URL: `sqlite:${file}`,
    MAILBOX_REDIS_URL: redis.url,
    MAILBOX_REDIS_NAMESPACE: namespace,
    ...REDIS_TEST_TIMEOUT_ENV,
  });

test('Redis flushed before the switch: one line naming the remedy (run it again), exit code 2, no stack', async () => {
  const file = path.join(tempDir('mailbox-rebuild-lost-', scratchBase()), 'events.sqlite');
  const log = SqliteEventStore.open(file);
  await appendLog(log, generateLog(300, 7));
  await log.close();
  const namespace = `rebuildlost${process.pid}`;

  // Held at a known point: the generation is built, its switch not yet made; Redis is flushed there.
  const activate = RedisGenerations.prototype.activate;
  let flushed = 0;
  jest.spyOn(RedisGenerations.prototype, 'activate').mockImplementation(async function (this: RedisGenerations, ...args) {
    const admin = new Redis(redis.url);
    try {
      expect(await admin.flushall()).toBe('OK');
      flushed++;
    } finally {
      admin.disconnect();
    }
    return activate.apply(this, args);
  });

  const text = await rebuildOnRedis(file, namespace);

  expect(flushed).toBe(1);
  const envelope = theOneLine(text, 2);
  expect(envelope).toEqual({
    error: 'Rebuild lost its views',
    code: 'UNAVAILABLE',
    message: expect.stringContaining('Run `mailbox projections rebuild` again.'),
    generation: expect.stringMatching(new RegExp(`^${namespace}:`)),
  });
  expect(envelope.message).toContain('Redis restarted empty or flushed');
  expect(text.out).not.toContain('switched the active views');
});

test('Redis restarted empty while the copy waited it out: the same line (run it again), exit code 2, no stack', async () => {
  const file = path.join(tempDir('mailbox-rebuild-lost-', scratchBase()), 'events.sqlite');
  const log = SqliteEventStore.open(file);
  await appendLog(log, generateLog(2_100, 7)); // two pages of the rebuild's 2,000 events: the first goes in
  await log.close();
  const namespace = `rebuildlostcopy${process.pid}`;

  // The second page's apply meets Redis restarting empty: refused (unavailable), and the first page is gone when it
  // answers again. The rebuild waits, reads where its generation stands (nothing) and stops.
  const create = RedisGenerations.prototype.create;
  let flushed = 0;
  jest.spyOn(RedisGenerations.prototype, 'create').mockImplementation(async function (this: RedisGenerations, ...args) {
    const generation = await create.apply(this, args);
    const applyBatch = generation.applyBatch.bind(generation);
    let calls = 0;
    let first: Promise<void> = Promise.resolve();
    generation.applyBatch = async (batch, follows) => {
      if (++calls === 1) return (first = applyBatch(batch, follows));
      if (calls > 2) return applyBatch(batch, follows);
      await first.catch(() => undefined); // the first page went in before Redis lost it
      const admin = new Redis(redis.url);
      try {
        expect(await admin.flushall()).toBe('OK');
        flushed++;
      } finally {
        admin.disconnect();
      }
      throw unavailable('Redis projections (apply)', new Error('Connection is closed.'));
    };
    return generation;
  });

  const text = await rebuildOnRedis(file, namespace);

  expect(flushed).toBe(1);
  const envelope = theOneLine(text, 2);
  // Before: {"error":"Projections command failed","code":"INTERNAL","message":"The views being rebuilt lost what they held ..."}
  expect(envelope).toEqual({
    error: 'Rebuild lost its views',
    code: 'UNAVAILABLE',
    message: expect.stringContaining('Run `mailbox projections rebuild` again.'),
    generation: expect.stringMatching(new RegExp(`^${namespace}:`)),
  });
  expect(envelope.message).toContain('Redis restarted empty or flushed');
  expect(text.out).toContain('could not copy'); // it waited the outage out first, as for any blip
  expect(text.out).not.toContain('switched the active views');
});
