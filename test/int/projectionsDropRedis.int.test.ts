/**
 * `mailbox projections drop <generation>` on Redis views: a generation kept by `rebuild --keep-previous` (or a take-over
 * at start) stayed in Redis for good, listed nowhere (`status` said keptGenerations for the SQLite views file only), and
 * `drop` refused every Redis generation, pointing at redis-cli. Now `status` lists it and `drop` deletes its keys
 * (exit 0); it refuses the active generation and one a rebuild is building (exit 2) and a name Redis does not hold
 * (exit 1), each in one line naming the generations it can drop, nothing changed. Real redis-server; @a, @b, @c.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { runDropCommand, runRebuildCommand, runStatusCommand } from '../../src/cli/commands/projections';
import { projectStored } from '../../src/projections/projector';
import { snapshotViews } from '../contract/projectionStore.contract';
import { threeAgentsDataDir } from '../support/fixtures';
import { runProjections, theOneLine } from '../support/projectionsCli';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedis, type TestRedis } from '../support/redisServer';

let redis: TestRedis;
let admin: Redis;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

const keysOf = (prefix: string): Promise<string[]> => admin.keys(`${prefix}*`);

const storeOn = async (ns: string) =>
  new RedisProjectionStore(await connectRedis(redis.url, { name: `drop-${ns}`, timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
    namespace: ns,
  });

/** What the active Redis views serve: every agent's listings and counts. */
async function served(ns: string) {
  const store = await storeOn(ns);
  try {
    return await snapshotViews(store);
  } finally {
    await store.close();
  }
}

test('a Redis generation kept by rebuild --keep-previous: status lists it, drop deletes its keys; the active one, one being built and a wrong name are refused, nothing changed', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-redis-drop-');
  const ns = `drop${process.pid}`;
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: ns, ...REDIS_TEST_TIMEOUT_ENV };
  const rebuild = (flags: Record<string, unknown> = {}) =>
    runProjections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0', ...flags }), env);
  const status = async (): Promise<Record<string, unknown>> =>
    JSON.parse((await runProjections((io) => runStatusCommand(io), env)).out);
  const drop = (generation: string) => runProjections((io) => runDropCommand(io, generation), env);
  const [v2, v3, v4] = [2, 3, 4].map((n) => `${ns}:v${n}:`);

  expect((await rebuild()).code).toBe(0); // v2 served
  const kept = await rebuild({ keepPrevious: true });
  expect(kept.out.trim().split('\n').at(-1)).toMatch(new RegExp(`; previous generation ${v2} kept$`));
  // A rebuild running now builds v4 (its mark alive).
  const building = await storeOn(ns);
  const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'), undefined, { readOnly: true });
  try {
    const generation = await building.generations().create(await log.logIdentity());
    await generation.applyBatch((await log.readAll(null, 3)).map(projectStored));
    expect(generation.name).toBe(v4);
  } finally {
    await log.close();
  }
  const views = await served(ns);
  const keptKeys = (await keysOf(v2)).length;
  expect(keptKeys).toBeGreaterThan(0);

  try {
    expect(await status()).toMatchObject({ activeGeneration: v3, upToDate: true, keptGenerations: [v2] });
    const refusals = {
      active: theOneLine(await drop(v3), 2),
      building: theOneLine(await drop(v4), 2),
      unknown: theOneLine(await drop(`${ns}:v9:`), 1),
    };
    const said = { activeGeneration: v3, droppable: [v2] };
    expect(refusals).toEqual({
      active: {
        error: 'Generation not dropped',
        code: 'VALIDATION_FAILED',
        message:
          `Generation ${v3} is the active one, the views served: it is never dropped (\`mailbox projections rebuild\` ` +
          `replaces it with a new one); it can drop ${v2}. Nothing was changed.`,
        generation: v3,
        ...said,
      },
      building: {
        error: 'Generation not dropped',
        code: 'VALIDATION_FAILED',
        message:
          `Generation ${v4} is being built by a rebuild running now: stop that rebuild (Ctrl-C: it drops its generation ` +
          `itself) rather than drop it under it; it can drop ${v2}. Nothing was changed.`,
        generation: v4,
        ...said,
      },
      unknown: {
        error: 'No such generation',
        code: 'NOT_FOUND',
        message:
          `Redis namespace '${ns}' holds no generation '${ns}:v9:' to drop (a rebuild that switched away from one ` +
          `deletes it itself after its grace); besides the active one (${v3}), it can drop ${v2}. Nothing was changed.`,
        generation: `${ns}:v9:`,
        ...said,
      },
    });
    expect((await keysOf(v2)).length).toBe(keptKeys);

    expect(await drop(v2)).toEqual({
      code: 0,
      out: `dropped generation ${v2} from Redis namespace '${ns}'; the active views (${v3}) are unchanged\n`,
      err: '',
    });
    expect(await keysOf(v2)).toEqual([]);
    expect((await keysOf(v4)).length).toBeGreaterThan(0); // the one being built is untouched
  } finally {
    await building.close();
  }
  const after = await status();
  expect(after).toMatchObject({ activeGeneration: v3, upToDate: true });
  expect(after).not.toHaveProperty('keptGenerations');
  expect(await served(ns)).toEqual(views); // @a, @b, @c's views as they were
  expect(Object.keys(views.views)).toEqual(expect.arrayContaining(['@a', '@b', '@c']));
});
