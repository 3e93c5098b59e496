/**
 * The suite's order (test/support/slowFirstSequencer.js): the longest files first, so that none runs alone at the end of
 * a CI run. Its list names files by path: a renamed or deleted file would silently drop out of it.
 */
import fs from 'node:fs';
import path from 'node:path';

// A CommonJS module of jest's configuration (plain JavaScript, loaded by jest itself).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SlowFirstSequencer = require('../support/slowFirstSequencer');

const ROOT = path.resolve(__dirname, '../..');
const SECONDS: Record<string, number> = SlowFirstSequencer.SECONDS;

test('every file the list names exists', () => {
  const missing = Object.keys(SECONDS).filter((file) => !fs.existsSync(path.join(ROOT, file)));
  expect(missing).toEqual([]);
});

test("listed files come first, longest first; the others follow in jest's order", () => {
  const context = {
    config: { cache: false, cacheDirectory: '/nonexistent', id: 'unit', rootDir: ROOT, haste: {} },
    hasteFS: { getSize: (file: string) => fs.statSync(file).size },
  };
  const testOf = (file: string) => ({ path: path.join(ROOT, file), context });
  const tests = [
    testOf('test/unit/slowFirstSequencer.unit.test.ts'),
    testOf('test/e2e/backup.e2e.test.ts'),
    testOf('test/contract/readModelDifferential.int.test.ts'),
    testOf('test/e2e/cli.e2e.test.ts'),
  ];
  const order = new SlowFirstSequencer().sort(tests).map((test: { path: string }) => path.relative(ROOT, test.path));
  expect(order).toEqual([
    'test/contract/readModelDifferential.int.test.ts',
    'test/e2e/cli.e2e.test.ts',
    'test/e2e/backup.e2e.test.ts',
    'test/unit/slowFirstSequencer.unit.test.ts',
  ]);
});
