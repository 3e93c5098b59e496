/** When a child process on the sources said something, and when it exited (a process held up after it closed all). */
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The Redis connection module, as a child's script requires it. */
export const CONNECTION = `require('./src/adapters/projections/redisConnection.ts')`;

/**
 * Runs `script` in a child process on the sources: when it first prints `mark`, the time is taken (and `onLine` is
 * told each line), and again when the process has exited.
 */
export const exitAfter = (mark: string, script: string, onLine: (line: string) => void = () => {}) =>
  new Promise<{ markedAt: number; exitedAt: number; stdout: string }>((resolve, reject) => {
    let markedAt = 0;
    const child = execFile(process.execPath, ['-r', path.join(ROOT, 'test/support/tsRequireHook.js'), '-e', script], {
      cwd: ROOT,
      timeout: 50_000,
    });
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) onLine(line);
      if (markedAt === 0 && stdout.includes(mark)) markedAt = performance.now();
    });
    child.on('error', reject);
    child.on('exit', () => resolve({ markedAt, exitedAt: performance.now(), stdout }));
  });

/**
 * Connects to `url` (where nothing listens) in a child process, with `options` added to the connection's: what it
 * printed (`failed: UNAVAILABLE`), and how long after its failure it exited.
 */
export async function exitAfterFailedConnect(url: string, options = '') {
  const { markedAt, exitedAt, stdout } = await exitAfter(
    'failed',
    CONNECTION +
      `.connectRedis('${url}', { name: 'exit', timeoutMs: 300${options} })` +
      `.then(() => console.log('connected'), (error) => console.log('failed: ' + error.code));`,
  );
  return { said: stdout.trim(), exitedAfterMs: exitedAt - markedAt };
}
