/**
 * Runs an operator's command per nudge: the nudge as JSON on stdin and in the
 * environment. Spawned without a shell (argv array), so nothing in a nudge can
 * be interpreted as shell syntax, and with a minimal environment, so the
 * daemon's secrets (admin token, webhook secret) never reach the hook.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Nudge } from '../nudgeDecider';
import type { DeliveryStatus, NudgeTarget } from '../nudgeTarget';

export interface CommandHookOptions {
  /** [command, ...args] */
  argv: readonly string[];
  timeoutMs: number;
}

const PASSED_THROUGH = ['PATH', 'HOME', 'LANG', 'TZ'];
const STDERR_TAIL = 2000;

export class CommandHookTarget implements NudgeTarget {
  readonly name = 'hook';

  constructor(private readonly options: CommandHookOptions) {
    if (options.argv.length === 0) throw new Error('the command hook needs a command');
  }

  appliesTo(): boolean {
    return true;
  }

  deliver(nudge: Nudge): Promise<DeliveryStatus> {
    const [command, ...args] = this.options.argv;
    const json = JSON.stringify(nudge);
    const env: NodeJS.ProcessEnv = {};
    for (const name of PASSED_THROUGH) if (process.env[name] !== undefined) env[name] = process.env[name];
    Object.assign(env, {
      MAILBOX_NUDGE_JSON: json,
      MAILBOX_NUDGE_ID: nudge.nudgeId,
      MAILBOX_NUDGE_IDENTITY: nudge.identity,
      MAILBOX_NUDGE_UNREAD: String(nudge.unread),
      MAILBOX_NUDGE_UNREAD_COUNT: String(nudge.unreadCount),
    });
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { shell: false, env, stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, this.options.timeoutMs);
      child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL)));
      child.stdin!.on('error', () => {
        // A hook that exits without reading stdin is judged by its exit code below.
      });
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`hook ${command} could not start: ${error.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) return resolve('delivered');
        const why = timedOut
          ? `timed out after ${this.options.timeoutMs} ms`
          : signal
            ? `killed by ${signal}`
            : `exited with ${code}`;
        reject(new Error(`hook ${command} ${why}${stderr ? `: ${stderr.trim()}` : ''}`));
      });
      child.stdin!.end(json);
    });
  }

  async close(): Promise<void> {}
}

/**
 * Why the hook's command cannot be started, or null when it can: checked at start, because a hook that cannot run fails
 * every nudge, and an escalation (claimed once in the log before its nudges go out) is never tried again. A name without
 * a slash is looked up on PATH, as spawn does with the hook's environment (which passes PATH through).
 */
export function hookCommandProblem(command: string, searchPath: string = process.env.PATH ?? ''): string | null {
  if (command.includes('/')) return fileProblem(command);
  const dirs = searchPath.split(path.delimiter).filter((dir) => dir !== '');
  if (dirs.some((dir) => fileProblem(path.join(dir, command)) === null)) return null;
  return `is on no PATH directory (PATH is ${searchPath === '' ? 'empty' : `'${searchPath}'`})`;
}

function fileProblem(file: string): string | null {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be looked at (${code})`;
  }
  if (!stat.isFile()) return 'is not a file';
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return 'is not executable (chmod +x it)';
  }
  return null;
}
