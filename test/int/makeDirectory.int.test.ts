/**
 * support/makeDirectory: missing parents made one level at a time, and every place that cannot hold a directory
 * answered with the file system's error at once. Node's recursive mkdir spun forever under /proc.
 */
import fs from 'node:fs';
import path from 'node:path';
import { makeDirectory } from '../../src/support/makeDirectory';
import { tempDir } from '../support/fixtures';

let root: string;
beforeAll(() => {
  root = tempDir('mailbox-mkdir-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const codeOf = (run: () => void): string | undefined => {
  try {
    run();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
  return undefined;
};

test('makes every missing level, with the mode asked for, and leaves an existing directory as it is', () => {
  const dir = path.join(root, 'a', 'b', 'c');
  makeDirectory(dir, 0o700);
  expect(fs.statSync(dir).isDirectory()).toBe(true);
  expect(fs.statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700);
  fs.writeFileSync(path.join(dir, 'kept'), 'x');
  makeDirectory(dir);
  expect(fs.readFileSync(path.join(dir, 'kept'), 'utf8')).toBe('x');
});

test('under a file: ENOTDIR, nothing made', () => {
  const file = path.join(root, 'plain');
  fs.writeFileSync(file, 'x');
  expect(codeOf(() => makeDirectory(path.join(file, 'data', 'more')))).toBe('ENOTDIR');
  expect(fs.statSync(file).isFile()).toBe(true);
});

test('under a link to nothing (a volume not mounted): ENOENT, and the link target is not made', () => {
  const link = path.join(root, 'mounted-here');
  const target = path.join(root, 'volume-not-mounted', 'mailbox');
  fs.symlinkSync(target, link);
  expect(codeOf(() => makeDirectory(path.join(link, 'data')))).toBe('ENOENT');
  expect(fs.existsSync(path.join(root, 'volume-not-mounted'))).toBe(false);
});

const withProc = fs.existsSync('/proc/self') ? test : test.skip;
withProc('under /proc (a parent that takes no new entries): ENOENT at once, where a recursive mkdir never returned', () => {
  expect(codeOf(() => makeDirectory('/proc/mailbox-test-dir/data'))).toBe('ENOENT');
});
