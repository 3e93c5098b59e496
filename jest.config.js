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
  // No forceExit: every suite closes what it opens, so jest exits on its own. --detectOpenHandles does not
  // see every leak (a socket held inside a client library): a run that does not end is the sign; bisect it
  // with `npx jest --runInBand <files>` and see which files keep the process alive.
};
