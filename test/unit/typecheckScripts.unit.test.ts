/**
 * `npm run typecheck` checks every TypeScript program of the repo (the build's, tsconfig.build.json, is `npm run build`'s)
 * and keeps each program's incremental state in its own file that git ignores and the suite never reads (not dist/):
 * a second run re-checks only what changed, a clean clone (CI) checks everything.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '../..');
const scripts = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** The tsc commands a script runs, through `npm run <name>` and npm-run-all2's run-p / run-s. */
function tscCommands(name: string): string[][] {
  return scripts[name].split(/\s*&&\s*/).flatMap((command) => {
    const [program, ...args] = command.trim().split(/\s+/);
    const names = args.filter((arg) => !arg.startsWith('-'));
    if (program === 'tsc') return [args];
    if (program === 'npm' && names[0] === 'run') return tscCommands(names[1]);
    if (program === 'run-p' || program === 'run-s') return names.flatMap(tscCommands);
    return [];
  });
}

const valueOf = (args: string[], option: string): string | undefined => args[args.indexOf(option) + 1];

const checks = tscCommands('typecheck');

test('typecheck checks every tsconfig of the repo but the build one, and writes no output', () => {
  const tsconfigs = execFileSync('git', ['ls-files', 'tsconfig*.json', '*/tsconfig*.json'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file !== '' && file !== 'tsconfig.build.json');
  expect(tsconfigs).toEqual(expect.arrayContaining(['tsconfig.json', 'web/tsconfig.json']));
  expect(checks.map((args) => valueOf(args, '-p')).sort()).toEqual(tsconfigs.sort());
  for (const args of checks) {
    const config = fs.readFileSync(path.join(root, valueOf(args, '-p')!), 'utf8');
    expect({ args, noEmit: args.includes('--noEmit') || /"noEmit":\s*true/.test(config) }).toEqual({ args, noEmit: true });
  }
});

test("typecheck keeps each program's incremental state in its own git-ignored file outside dist/", () => {
  const files = checks.map((args) => {
    expect(args).toContain('--incremental');
    return valueOf(args, '--tsBuildInfoFile')!;
  });
  expect(new Set(files).size).toBe(checks.length);
  for (const file of files) {
    expect(file).toMatch(/\.tsbuildinfo$/);
    expect(path.relative(path.join(root, 'dist'), path.join(root, file))).toMatch(/^\.\./);
    // exit code 0: ignored (1 would throw)
    execFileSync('git', ['check-ignore', '-q', '--no-index', file], { cwd: root });
  }
});
