/**
 * The long run of the read model differential check (test/contract/readModelDifferential.ts):
 * the Redis Lua fast path, in both layouts and as a rebuild of a new generation then live, against the pure read model on
 * seeded random logs of up to 2,000 events, every view and wake compared.
 * Reports how many logs and events it checked; a failure names its seed
 * (replay: READ_MODEL_DIFF_SEED=<seed>). Run: `npm run bench -- redis/differential`.
 */
import 'reflect-metadata'; // before the stores (tsyringe)
import { checkLog, seedsToCheck } from '../../test/contract/readModelDifferential';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { nowMs } from '../lib/timing';
import { startBenchRedis } from './redisServer';

const LOGS = scaled(200, 20);
const MAX_EVENTS = 2_000;
const FIRST_SEED = 1_000; // the short run in npm test checks seeds 1..60

runBench('redis/differential', async (report) => {
  const redis = await startBenchRedis();
  try {
    const started = nowMs();
    let events = 0;
    let steps = 0;
    let crashes = 0;
    let views = 0;
    const seeds = seedsToCheck(LOGS, FIRST_SEED);
    for (const seed of seeds) {
      const outcome = await checkLog(redis.url, seed, MAX_EVENTS);
      events += outcome.events;
      steps += outcome.steps;
      crashes += outcome.crashes;
      views += outcome.viewsCompared;
      if ((seed - FIRST_SEED + 1) % 20 === 0) report.log(`  ${seed - FIRST_SEED + 1} logs checked (${events} events)`);
    }
    report.metric('logs checked, each equal in every view and wake', seeds.length, 'logs');
    report.metric('events checked', events, 'events');
    report.metric(
      'views compared (pages of every listing, counts, heartbeats, agents), both Redis layouts and a rebuild',
      views,
      'views',
    );
    report.note('deliveries', `${steps} batches (duplicates, redeliveries, shuffled boundaries), ${crashes} crashes mid-batch`);
    report.note('seeds', `${seeds[0]}..${seeds[seeds.length - 1]}, up to ${MAX_EVENTS} events each`);
    report.note('wall time', `${Math.round(nowMs() - started)} ms`);
  } finally {
    await redis.stop();
  }
});
