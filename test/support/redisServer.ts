/**
 * A real redis-server for tests: REDIS_URL when set, else our own instance on a
 * free loopback port (no persistence), stopped after the suite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Kills and restarts our own instance on the same port with its data gone (not possible with REDIS_URL). */
  restartEmpty?(): Promise<void>;
  /** Kills our own instance (SIGKILL) and leaves it down until start(). */
  kill?(): Promise<void>;
  /** Starts our own instance again on the same port, empty. */
  start?(): Promise<void>;
  /** SIGSTOP: the process keeps its sockets open but answers nothing until resume(). */
  pause?(): void;
  /** SIGCONT after pause(). */
  resume?(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the server says it accepts connections (extra arguments: cluster or replica settings). */
export function spawnRedis(port: number, extra: readonly string[] = []): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra];
    const child = spawn('redis-server', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${port}: ${output}`)), 10_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server (install the Debian package redis-server): ${error.message}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections') || output.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
  });
}

export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

export async function startRedis(): Promise<TestRedis> {
  if (process.env.REDIS_URL) {
    const url = process.env.REDIS_URL;
    return { url, port: Number(new URL(url).port || 6379), stop: async () => {} };
  }
  const port = await freePort();
  let child = await spawnRedis(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      child.kill('SIGCONT'); // a paused instance cannot act on SIGTERM
      await stopChild(child);
    },
    restartEmpty: async () => {
      await stopChild(child, 'SIGKILL');
      child = await spawnRedis(port);
    },
    kill: () => stopChild(child, 'SIGKILL'),
    start: async () => {
      child = await spawnRedis(port);
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
  };
}
