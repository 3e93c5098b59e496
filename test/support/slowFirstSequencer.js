/**
 * Runs the suite's longest files first, so that no worker is left running one alone at the end of the run.
 *
 * Why: jest orders files by how long they took last time, from its cache; on a fresh machine (CI clones and installs
 * anew every time) there is no cache, and jest falls back to file size. The seeded differential run
 * (readModelDifferential.int, ~100 s of work in a 1.3 KB file) then started ~13 minutes into the Node 20 run and ran
 * alone for its last ~85 s while the other two workers sat idle (jest --json of the whole suite, December 2026).
 * CI must stay under 20 minutes.
 *
 * The seconds below are what each file took in a whole-suite run on a 2-core machine (3 workers, December 2026); only
 * their order matters. A file not listed keeps jest's own order after these; a file listed that no longer exists is ignored
 * (slowFirstSequencer.unit checks the list names existing files). With a cache (a developer's second run), jest's
 * own figures of files not listed still order them.
 */
const Sequencer = require('@jest/test-sequencer').default;

/** Seconds a whole-suite run took per file (the longest, >= 15 s). */
const SECONDS = {
  'test/e2e/heartbeatOnce.e2e.test.ts': 92,
  'test/contract/readModelDifferential.int.test.ts': 61,
  'test/e2e/startupErrors.e2e.test.ts': 59,
  'test/e2e/startupInterrupted.e2e.test.ts': 39,
  'test/e2e/cli.e2e.test.ts': 37,
  'test/e2e/heartbeatServerStopped.e2e.test.ts': 34,
  'test/contract/projectionStore.cluster.int.test.ts': 31,
  'test/int/coreRejections.int.test.ts': 29,
  'test/e2e/consoleTimes.e2e.test.ts': 27,
  'test/contract/projectionStore.sqlite.int.test.ts': 26,
  'test/e2e/heartbeatOnceRefusals.e2e.test.ts': 25,
  'test/e2e/console.e2e.test.ts': 24,
  'test/e2e/consoleHealth.e2e.test.ts': 24,
  'test/e2e/fuzz.e2e.test.ts': 23,
  'test/e2e/backup.e2e.test.ts': 22,
  'test/e2e/readmeWalkthrough.e2e.test.ts': 22,
  'test/e2e/projectorLease.e2e.test.ts': 22,
  'test/e2e/logPageDamaged.e2e.test.ts': 22,
  'test/int/redisRecovery.int.test.ts': 21,
  'test/e2e/cliUnknownOptions.e2e.test.ts': 20,
  'test/e2e/operatorUsageErrors.e2e.test.ts': 19,
  'test/e2e/watchReconnect.e2e.test.ts': 19,
  'test/e2e/heartbeatStartRefusals.e2e.test.ts': 18,
  'test/int/coreConcurrency.int.test.ts': 18,
  'test/int/sqliteViews.int.test.ts': 18,
  'test/int/redisRulesRebuild.int.test.ts': 18,
  'test/e2e/mcpStartLine.e2e.test.ts': 17,
  'test/e2e/jsonFlag.e2e.test.ts': 17,
  'test/e2e/heartbeatProjectorAbsentNodes.e2e.test.ts': 16,
  'test/int/readOnlyCommands.int.test.ts': 16,
  'test/contract/projectionStore.redis.int.test.ts': 16,
  'test/int/redisSentinelReconnect.int.test.ts': 16,
  'test/e2e/consoleServerLost.e2e.test.ts': 15,
  'test/e2e/redisOutage.e2e.test.ts': 15,
  'test/e2e/logIdentity.e2e.test.ts': 15,
  'test/e2e/cliStartup.e2e.test.ts': 15,
};

const ROOT = require('node:path').resolve(__dirname, '../..');
const secondsOf = (test) => SECONDS[require('node:path').relative(ROOT, test.path).split('\\').join('/')];

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const listed = ordered.filter((test) => secondsOf(test) !== undefined).sort((a, b) => secondsOf(b) - secondsOf(a));
    return [...listed, ...ordered.filter((test) => secondsOf(test) === undefined)];
  }
}

module.exports = SlowFirstSequencer;
module.exports.SECONDS = SECONDS;
