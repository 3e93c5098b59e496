/**
 * The SQLite views are proven equal to the pure read model on seeded random
 * logs, delivered as an at-least-once subscription might, with crashes that
 * roll a transaction back half-way. A failure prints its seed;
 * READ_MODEL_DIFF_SEED=<seed> npx jest test/contract/readModelDifferential.sqlite replays it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkLogAgainst, seedsToCheck, sqliteSubject } from './readModelDifferential';

const LOGS = Number(process.env.READ_MODEL_DIFF_LOGS ?? 40);
const MAX_EVENTS = 400;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'views-diff-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it(`the SQLite views equal the pure read model on ${LOGS} random logs of up to ${MAX_EVENTS} events`, async () => {
  let events = 0;
  let views = 0;
  const seeds = seedsToCheck(LOGS, Number(process.env.READ_MODEL_DIFF_FIRST ?? 1));
  for (const seed of seeds) {
    const outcome = await checkLogAgainst(seed, MAX_EVENTS, async (_identities, random) => [
      sqliteSubject(
        path.join(dir, `views-${seed}.sqlite`),
        [1, 7, 64, 1000][Math.floor(random() * 4)],
        random() < 0.5 ? 0 : undefined, // half the logs with transactions cut short by their time budget
      ),
    ]);
    events += outcome.events;
    views += outcome.viewsCompared;
  }
  expect(events).toBeGreaterThan(seeds.length * 10); // the logs were not empty
  expect(views).toBeGreaterThan(seeds.length * 50);
}, 300_000); // a fixed amount of work: 50 s on a moderately loaded CI machine, 122 s once at load 9
