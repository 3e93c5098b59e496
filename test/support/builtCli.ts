/**
 * Tests that run `bin/mailbox.js` as a user does need the compiled CLI. `npm test` builds first;
 * a single file run with jest builds here when dist is older than src (one builder at a time:
 * jest runs files in parallel workers).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const MAILBOX_BIN = path.join(ROOT, 'bin/mailbox.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

const isStale = () => {
  const built = path.join(ROOT, 'dist/src/cli/main.js');
  return !fs.existsSync(built) || fs.statSync(built).mtimeMs < newestMtime(path.join(ROOT, 'src'));
};

export function ensureBuilt(): void {
  if (!isStale()) return;
  const lock = path.join(ROOT, 'dist.build-lock');
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // Another worker is building (then the build is fresh once it lets go); a lock older than two minutes was left by a killed run.
      const held = fs.statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 120_000) fs.rmSync(lock, { recursive: true, force: true });
      else execFileSync('sleep', ['0.5']);
      if (!isStale()) return;
    }
  }
  try {
    if (isStale())
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
        cwd: ROOT,
      });
    // tsc leaves unchanged outputs untouched; mark the build as fresh.
    const now = new Date();
    fs.utimesSync(path.join(ROOT, 'dist/src/cli/main.js'), now, now);
  } finally {
    fs.rmdirSync(lock);
  }
}

/**
 * Node's arguments that run `bin/mailbox.js <args>` on the sources (the compiled entry point, its modules mapped back
 * to src/ by the require hooks): for tests that start the real CLI as a child process without a fresh build.
 */
export const cliOnSources = (...args: string[]): string[] => [
  '-r',
  path.join(ROOT, 'test/support/tsRequireHook.js'),
  '-r',
  path.join(ROOT, 'test/support/distToSrc.js'),
  MAILBOX_BIN,
  ...args,
];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A spawned process's run: its code and output once it has closed (killed after `timeoutMs`: code null then). */
export function runOf(child: ChildProcess, timeoutMs = 45_000): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A running `node bin/mailbox.js ...args`: its output so far (stdout and stderr) and, once it has exited, its run. */
export interface StartedCli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<CliRun>;
}

/** Starts `node bin/mailbox.js ...args` with the given environment (added to a clean MAILBOX_-free one). */
export function startCli(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): StartedCli {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawn(process.execPath, [MAILBOX_BIN, ...args], { cwd: options.cwd ?? ROOT, env: { ...base, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs `node bin/mailbox.js ...args` with the given environment (added to a clean MAILBOX_-free one). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<CliRun> {
  const { child, exited } = startCli(args, env, options);
  // Generous: under load a start-up refusal (~0.4 s of CPU) took over 20 s beside the other processes of a concurrent file.
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 45_000);
  child.stdin!.end(options.input ?? '');
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
