const os = require('node:os');

/** Test kinds by file name: *.unit.test.ts, *.int.test.ts, *.e2e.test.ts (see STYLE). */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
const base = {
  testEnvironment: 'node',
  transform,
  setupFiles: ['reflect-metadata'],
  // Removes the temp dirs a test file made (some hold an admin.token).
  setupFilesAfterEnv: ['<rootDir>/test/support/cleanupTempDirs.ts'],
};
module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.unit.test.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/test/**/*.int.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.test.ts'] },
  ],
  testTimeout: 30000,
  // One and a half workers per core (3 on the 2-core machines this runs on): most suites wait on child processes, Redis servers and
  // sockets, not the CPU. The whole suite used 7.7 CPU-minutes in 8.4 minutes of wall time with 2 workers (the
  // cores half idle); with 3 it passed whole even on a machine loaded to 10-12 by other work. CI runs it twice
  // (Node 20 and Node 22) and must stay under 20 minutes. (1 worker: 390 s, 2: 230 s, when the suite was smaller.)
  // A number, not '150%': jest-haste-map (through jest-runtime) read the string as 150 and spawned 150 crawl workers
  // per project at every start, loading the machine to 25-47.
  maxWorkers: Math.max(2, Math.floor(os.availableParallelism() * 1.5)),
  // test.concurrent tests of one file (independent CLI processes) run three at a time, not jest's default five: beside
  // the other workers' processes on two cores, five starts at once slowed each past its deadline.
  maxConcurrency: 3,
  // The longest files first (a fresh CI machine has no timings cached: jest would order by file size, and a long
  // file that started last ran alone at the end of the run). See the file.
  testSequencer: '<rootDir>/test/support/slowFirstSequencer.js',
  // No forceExit: every suite closes what it opens, so jest exits on its own. --detectOpenHandles does not
  // see every leak (a socket held inside a client library): a run that does not end is the sign; bisect it
  // with `npx jest --runInBand <files>` and see which files keep the process alive.
};
