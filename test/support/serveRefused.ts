/**
 * `mailbox serve` run as a user runs it (bin/mailbox.js on the sources) for a start expected to be refused, and the
 * listing of a directory to compare before and after it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cliOnSources } from './builtCli';
import { REDIS_TEST_TIMEOUT_ENV } from './redisDeadline';

/** The exit code and stderr of `mailbox serve` with env (any port, silent log); killed after 60 s if it served. */
export function spawnServe(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cliOnSources('serve'), {
      env: { PATH: process.env.PATH, MAILBOX_PORT: '0', MAILBOX_LOG_LEVEL: 'silent', ...REDIS_TEST_TIMEOUT_ENV, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // a server that started instead of refusing
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Every entry under dir with its size, sorted (null: dir is not there). */
export function listing(dir: string): string[] | null {
  if (!fs.existsSync(dir)) return null;
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => {
      const full = path.join(entry.parentPath, entry.name);
      return `${path.relative(dir, full)} ${entry.isDirectory() ? 'dir' : fs.statSync(full).size}`;
    })
    .sort();
}
