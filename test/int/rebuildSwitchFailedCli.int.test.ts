/**
 * `mailbox projections rebuild` into Redis when its switch (the atomic move of the active pointer to the rebuilt
 * generation) fails. It printed the store's refusal alone ({"error":"Service unavailable",...,"message":"Redis
 * projections is unavailable; retry later ..."}), saying neither whether the previous views were still served nor
 * what to do; and when the switch went through but its answer was lost (a deadline), it said the same of views it had
 * switched to, and the previous generation was never deleted. Now a switch refused is one line ('Operator action
 * needed') saying the previous views are still served and the rebuilt generation dropped, with the remedy, exit code 2;
 * a switch that went through is the switch: exit code 0, the previous generation deleted after the grace.
 *
 * Real redis-server; the switch's call is made to fail around the real one. The log: a generated log of @a, @b, @c and
 * seven more.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisGenerations } from '../../src/adapters/projections/redisGenerations';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { runRebuildCommand, runStatusCommand, type ProjectionsIo } from '../../src/cli/commands/projections';
import { unavailable } from '../../src/errors';
import { snapshotViews } from '../contract/projectionStore.contract';
import { appendLog, generateLog, projectAll } from '../contract/projectionStoreLog';
import { scratchBase, tempDir } from '../support/fixtures';
import { runProjections, theOneLine } from '../support/projectionsCli';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedis, type TestRedis } from '../support/redisServer';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(async () => {
  await redis.stop();
});

/** A `mailbox projections` command run in process on the log `file` and Redis `namespace`: its exit code and output. */
const cli = (run: (io: ProjectionsIo) => Promise<void>, file: string, namespace: string) =>
  runProjections(run, {
    MAILBOX_EVENTSTORE_URL: `sqlite:${file}`,
    MAILBOX_REDIS_URL: redis.url,
    MAILBOX_REDIS_NAMESPACE: namespace,
    ...REDIS_TEST_TIMEOUT_ENV,
  });

/** A log of 300 events and its views in Redis `namespace`, built by a first rebuild. */
async function built(namespace: string) {
  const file = path.join(tempDir('mailbox-rebuild-switch-', scratchBase()), 'events.sqlite');
  const log = SqliteEventStore.open(file);
  await appendLog(log, generateLog(300, 19));
  await log.close();
  const rebuild = () => cli((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0', json: true }), file, namespace);
  const status = async () => JSON.parse((await cli((io) => runStatusCommand(io), file, namespace)).out);
  expect((await rebuild()).code).toBe(0);
  const before = await status();
  expect(before).toMatchObject({ upToDate: true, viewsOfThisLog: true });
  return { rebuild, status, before, file };
}

/** The views served in `namespace` are a clean build of the whole log in `file`, and @a, @b and @c have mail listed. */
async function expectViewsOfTheWholeLog(file: string, namespace: string) {
  const log = SqliteEventStore.open(file, undefined, { readOnly: true });
  const clean = new MemoryProjectionStore(new InProcessWakeBus());
  const served = new RedisProjectionStore(await connectRedis(redis.url, { name: 'served', timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
    namespace,
  });
  try {
    await clean.applyBatch(projectAll(await log.readAll(null, 100_000)));
    const views = await snapshotViews(served);
    expect(views).toEqual(await snapshotViews(clean));
    for (const agent of ['@a', '@b', '@c'])
      expect({ agent, listed: (views.views[agent] as { all: unknown[] }).all.length > 0 }).toEqual({ agent, listed: true });
  } finally {
    await served.close();
    await log.close();
  }
}

/** How many keys a generation (a prefix) holds in Redis. */
async function keysOf(prefix: string): Promise<number> {
  const admin = new Redis(redis.url);
  try {
    return (await admin.keys(`${prefix}*`)).length;
  } finally {
    admin.disconnect();
  }
}

const timedOut = () => unavailable('Redis projections', new Error('Command timed out'));

test('the switch refused: the previous views are still served, the rebuilt generation dropped, run it again; exit code 2', async () => {
  const namespace = `switchrefused${process.pid}`;
  const { rebuild, status, before } = await built(namespace);
  let refused = 0;
  jest.spyOn(RedisGenerations.prototype, 'activate').mockImplementation(async () => {
    refused++;
    throw timedOut(); // before it reached Redis
  });

  const run = await rebuild();

  expect(refused).toBe(1);
  const envelope = theOneLine(run, 2);
  const rebuilt = envelope.generation as string;
  expect(rebuilt).toMatch(new RegExp(`^${namespace}:v[0-9]+:$`));
  expect(rebuilt).not.toBe(before.activeGeneration);
  // Before: {"error":"Service unavailable","code":"UNAVAILABLE","message":"Redis projections is unavailable; retry later (the request was not applied)."}
  expect(envelope).toEqual({
    error: 'Operator action needed',
    code: 'UNAVAILABLE',
    message:
      'The switch to the rebuilt views failed (Redis projections is unavailable; retry later (the request was not ' +
      `applied)): the previous views (${before.activeGeneration}) are still served, unchanged; the rebuilt ` +
      `generation ${rebuilt} was dropped.`,
    operatorAction: expect.stringMatching(/^run `mailbox projections rebuild` again once .+ can be written$/),
    generation: rebuilt,
    activeGeneration: before.activeGeneration,
  });
  expect(run.out).not.toContain('switched the active views');
  expect(await status()).toEqual(before);
  expect(await keysOf(rebuilt)).toBe(0);
});

test('the switch went through but its answer was lost: it is the switch, exit code 0, the previous generation deleted', async () => {
  const namespace = `switchanswerlost${process.pid}`;
  const { rebuild, status, before } = await built(namespace);
  const activate = RedisGenerations.prototype.activate;
  let lost = 0;
  jest.spyOn(RedisGenerations.prototype, 'activate').mockImplementation(async function (this: RedisGenerations, ...args) {
    const result = await activate.apply(this, args);
    if (result.outcome !== 'switched') return result;
    lost++;
    throw timedOut(); // Redis switched; its answer did not arrive in time
  });

  const run = await rebuild();

  expect(lost).toBe(1);
  // Before: exit code 2 with {"error":"Service unavailable",...}, the rebuilt views served, the previous kept for good.
  expect(run.err).toBe('');
  expect(run.code).toBe(0);
  expect(run.out).toContain('switched the active views to the rebuilt generation');
  expect(run.out).toContain(`previous generation ${before.activeGeneration} deleted after the 0 ms grace`);
  const after = await status();
  expect(after).toMatchObject({ upToDate: true, viewsOfThisLog: true, checkpoint: before.checkpoint });
  expect(after.activeGeneration).not.toBe(before.activeGeneration);
  expect(await keysOf(before.activeGeneration)).toBe(0);
});

test('the previous generation not deleted after the switch (Redis not answering): the switch stands, one warning line, exit code 0; the next rebuild deletes it', async () => {
  const namespace = `previouskept${process.pid}`;
  const { rebuild, status, before, file } = await built(namespace);
  const previous = before.activeGeneration as string;
  const drop = RedisGenerations.prototype.drop;
  let refused = 0;
  jest.spyOn(RedisGenerations.prototype, 'drop').mockImplementation(async function (this: RedisGenerations, name) {
    if (name !== previous) return drop.call(this, name);
    refused++;
    throw timedOut(); // before it reached Redis
  });

  const run = await rebuild();

  expect(refused).toBe(1);
  // Before: exit code 2, {"error":"Service unavailable",...} over views it had switched to; the previous kept for good.
  const warning = theOneLine(run, 0);
  const after = await status();
  const rebuilt = after.activeGeneration as string;
  expect(rebuilt).not.toBe(previous);
  expect(warning).toEqual({
    warning: 'Previous generation not deleted',
    message:
      `The switch went through: the rebuilt views (${rebuilt}) are served. The previous generation ${previous} could ` +
      'not be deleted after the 0 ms grace (Redis projections is unavailable; retry later (the request was not ' +
      `applied)); it stays in Redis namespace '${namespace}' until deleted.`,
    operatorAction:
      `nothing to rebuild now: \`mailbox projections status\` lists ${previous} in leftoverGenerations, and the next ` +
      '`mailbox projections rebuild` deletes it before it builds',
    generation: rebuilt,
    previousGeneration: previous,
  });
  expect(after).toEqual({ ...before, activeGeneration: rebuilt, leftoverGenerations: [previous] });
  expect(await keysOf(previous)).toBeGreaterThan(0);
  await expectViewsOfTheWholeLog(file, namespace);

  jest.restoreAllMocks();
  const again = await rebuild();
  expect(again.code).toBe(0);
  expect(again.err).toBe('');
  expect(again.out).toContain(
    `; dropped ${previous}: a generation left by a rebuild killed before it finished, or switched away from and not deleted`,
  );
  expect(await keysOf(previous)).toBe(0);
  expect(await status()).toMatchObject({ upToDate: true, viewsOfThisLog: true, checkpoint: before.checkpoint });
  expect(await status()).not.toHaveProperty('leftoverGenerations');
  await expectViewsOfTheWholeLog(file, namespace);
});
