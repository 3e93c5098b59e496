/** Test kinds by file name: *.unit.test.ts, *.int.test.ts, *.e2e.test.ts (see STYLE). */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
const base = { testEnvironment: 'node', transform, setupFiles: ['reflect-metadata'],
  // Removes the temp dirs a test file made (some hold an admin.token).
  setupFilesAfterEnv: ['<rootDir>/test/support/cleanupTempDirs.ts'] };
module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.unit.test.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/test/**/*.int.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.test.ts'] },
  ],
  testTimeout: 30000,
  // One worker per core (jest's default leaves one core to itself): most suites wait on child processes, Redis
  // servers and sockets, not the CPU. On this 2-core machine the whole suite took 390 s with jest's default
  // (1 worker) and 230 s with 2, all passing; CI runs it twice (Node 20 and Node 22) and must stay under 20 minutes.
  maxWorkers: '100%',
  // No forceExit: every suite closes what it opens, so jest exits on its own. --detectOpenHandles does not
  // see every leak (a socket held inside a client library): a run that does not end is the sign; bisect it
  // with `npx jest --runInBand <files>` and see which files keep the process alive.
};
