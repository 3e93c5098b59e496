/**
 * The Redis Lua fast path is proven equal to the pure read model on seeded
 * random logs (both layouts: one script per chunk, one per hash tag; and a rebuild
 * of a new generation, batches failing part-way, then live applies on it). A short
 * run; the long one is bench/redis/differential.bench.ts. A failure prints its
 * seed; READ_MODEL_DIFF_SEED=<seed> npx jest test/contract/readModelDifferential replays it.
 */
import { startRedis, type TestRedis } from '../support/redisServer';
import { checkLog, seedsToCheck } from './readModelDifferential';

const LOGS = 60;
const MAX_EVENTS = 400;

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

it(`the Redis projections equal the pure read model on ${LOGS} random logs of up to ${MAX_EVENTS} events`, async () => {
  let events = 0;
  let views = 0;
  const seeds = seedsToCheck(LOGS, 1);
  for (const seed of seeds) {
    const outcome = await checkLog(redis.url, seed, MAX_EVENTS);
    events += outcome.events;
    views += outcome.viewsCompared;
  }
  expect(events).toBeGreaterThan(seeds.length * 10); // the logs were not empty
  expect(views).toBeGreaterThan(seeds.length * 50);
}, 300_000); // a fixed amount of work: 50 s on a moderately loaded CI machine, 122 s once at load 9
