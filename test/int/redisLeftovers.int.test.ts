/**
 * Generations that Redis rebuilds killed outright (SIGKILL, a crash) left: partial copies of the views under
 * `<ns>:v<N>:*` that nothing deleted, one more per killed rebuild (each takes a new number), holding Redis memory
 * with no line anywhere saying so. A generation being built is listed with a mark its rebuild renews; once the mark
 * has expired the generation is a leftover: `projections status` lists it and the next rebuild drops it, saying so.
 * A generation a live rebuild is building is never one, nor one kept on purpose; `projections drop` deletes a kept
 * one. Real redis-server; three agents, a message to two of them, a read (the views are built from that log first).
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { runDropCommand, runRebuild, runRebuildCommand, runStatus, runStatusCommand } from '../../src/cli/commands/projections';
import { projectStored } from '../../src/projections/projector';
import { snapshotViews } from '../contract/projectionStore.contract';
import { threeAgentsDataDir } from '../support/fixtures';
import { runProjections, theOneLine } from '../support/projectionsCli';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let admin: Redis;
let namespaces = 0;
const namespace = () => `lo${process.pid}n${++namespaces}`;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

const keysOf = (prefix: string): Promise<string[]> => admin.keys(`${prefix}*`);

const io = (env: Record<string, string>) => {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk) => (out += chunk));
  return { io: { stdout, stderr: new PassThrough(), env }, out: () => out };
};

const storeOn = async (ns: string, buildingTtlMs?: number) =>
  new RedisProjectionStore(await connectRedis(redis.url, { name: `leftovers-${ns}`, timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
    namespace: ns,
    buildingTtlMs,
  });

/** Starts building a generation from the log's first events, as a rebuild does; returns its name. */
async function startBuilding(dataDir: string, store: RedisProjectionStore): Promise<string> {
  const log = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'), undefined, { readOnly: true });
  try {
    const generation = await store.generations().create(await log.logIdentity());
    await generation.applyBatch((await log.readAll(null, 3)).map(projectStored));
    return generation.name;
  } finally {
    await log.close();
  }
}

/** A data dir whose log's views are built into a fresh namespace (a first rebuild), and the CLI's environment for it. */
async function builtViews() {
  const dataDir = await threeAgentsDataDir('mailbox-redis-leftovers-');
  const ns = namespace();
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: ns, ...REDIS_TEST_TIMEOUT_ENV };
  expect(await runRebuild({ graceMs: '0', settleMs: '0' }, io(env).io)).toBe(0);
  process.exitCode = undefined; // the CLI runner set it; other suites in this worker expect none
  return { dataDir, ns, env };
}

test('a generation whose rebuild died is a leftover once its mark expires: status lists it, the next rebuild drops it and says so', async () => {
  const { dataDir, ns, env } = await builtViews();
  // A rebuild that dies: its generation holds part of the views, its mark stops being renewed (closed, as killed).
  const dying = await storeOn(ns, 300);
  const partial = await startBuilding(dataDir, dying);
  await dying.close();
  expect((await keysOf(partial)).length).toBeGreaterThan(0);

  const reader = await storeOn(ns);
  try {
    await waitFor(async () => (await reader.generations().leftovers!()).includes(partial), {
      timeoutMs: 10_000,
      what: 'the dead rebuild’s mark to expire',
    });
  } finally {
    await reader.close();
  }

  const status = io(env);
  expect(await runStatus(status.io)).toBe(0);
  expect(JSON.parse(status.out())).toMatchObject({ activeGeneration: `${ns}:v2:`, leftoverGenerations: [partial] });

  const rebuild = io(env);
  expect(await runRebuild({ graceMs: '0', settleMs: '0' }, rebuild.io)).toBe(0);
  expect(rebuild.out().trim().split('\n').at(-1)).toContain(
    `; dropped ${partial}: a generation left by a rebuild killed before it finished`,
  );
  expect(await keysOf(partial)).toEqual([]);
  const after = io(env);
  expect(await runStatus(after.io)).toBe(0);
  expect(JSON.parse(after.out())).toMatchObject({ upToDate: true });
  expect(JSON.parse(after.out())).not.toHaveProperty('leftoverGenerations');
  expect(await admin.hkeys(`${ns}:{${ns}}:building`)).toEqual([]); // nothing left listed either
  process.exitCode = undefined;
});

test('a generation a live rebuild is building is no leftover, however long it takes; nor the one it switched away from', async () => {
  const { dataDir, ns } = await builtViews();
  const building = await storeOn(ns, 300);
  const other = await storeOn(ns);
  try {
    const name = await startBuilding(dataDir, building);
    const mark = `${ns}:{${ns}}:building:${name}`;
    // The positive signal: the mark was renewed (its time to live went back up) twice, so more than its 300 ms passed.
    let renewals = 0;
    let last = await admin.pttl(mark);
    await waitFor(
      async () => {
        const now = await admin.pttl(mark);
        if (now > last) renewals++;
        last = now;
        return renewals >= 2;
      },
      { everyMs: 10, what: 'two renewals of the building mark' },
    );
    expect(await other.generations().leftovers!()).toEqual([]);

    // It finishes: switched to, and the generation it replaced (kept, never listed as building) is no leftover either.
    const generations = building.generations();
    const active = await generations.active();
    const generation = { name, applyBatch: async () => undefined, checkpoint: async () => null };
    expect(await generations.activate(generation, active.name, true)).toMatchObject({ outcome: 'switched' });
    expect(await admin.exists(mark)).toBe(0);
    expect(await other.generations().leftovers!()).toEqual([]);
    expect((await keysOf(active.name)).length).toBeGreaterThan(0); // the previous generation, kept
  } finally {
    await other.close();
    await building.close();
  }
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

// `mailbox projections drop` on Redis: a generation kept by `rebuild --keep-previous` (or a take-over at start) stayed
// for good, listed nowhere (status said keptGenerations for the SQLite views file only), and drop refused every Redis
// generation, pointing at redis-cli. Now status lists it and drop deletes its keys (exit 0); it refuses the active
// generation and one a rebuild is building (exit 2) and a name Redis does not hold (exit 1), nothing changed.
test('a Redis generation kept by rebuild --keep-previous: status lists it, drop deletes its keys; the active one, one being built and a wrong name are refused, nothing changed', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-redis-drop-');
  const ns = namespace();
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: ns, ...REDIS_TEST_TIMEOUT_ENV };
  const rebuild = (flags: Record<string, unknown> = {}) =>
    runProjections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0', json: true, ...flags }), env);
  const status = async (): Promise<Record<string, unknown>> =>
    JSON.parse((await runProjections((io) => runStatusCommand(io), env)).out);
  const drop = (generation: string) => runProjections((io) => runDropCommand(io, generation, { json: true }), env);
  const [v2, v3, v4] = [2, 3, 4].map((n) => `${ns}:v${n}:`);

  expect((await rebuild()).code).toBe(0); // v2 served
  const kept = await rebuild({ keepPrevious: true });
  expect(kept.out.trim().split('\n').at(-1)).toMatch(new RegExp(`; previous generation ${v2} kept$`));
  // A rebuild running now builds v4 (its mark alive).
  const building = await storeOn(ns);
  expect(await startBuilding(dataDir, building)).toBe(v4);
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
