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
  // Safety net for CI: a client socket or timer some test failed to close must not hang the run
  // until CI's time limit. Suites still close what they open (check with --detectOpenHandles).
  forceExit: true,
};
