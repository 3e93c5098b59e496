/**
 * A redis-server of the benchmark's own (free loopback port, no persistence),
 * like the tests start, and `redis-benchmark` against it for the reference
 * figures every Redis benchmark reports its ratio to.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

export interface BenchRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startBenchRedis(): Promise<BenchRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.on('error', (error) => reject(new Error(`cannot run redis-server (Debian package redis-server): ${error.message}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/ready to accept connections/i.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface RedisBenchmarkFigure {
  test: string;
  requestsPerSecond: number;
  p50Ms: number;
}

/** Runs `redis-benchmark -q` with extra arguments; returns each test's requests/s and p50. */
export async function redisBenchmark(port: number, args: string[]): Promise<RedisBenchmarkFigure[]> {
  const { stdout } = await promisify(execFile)('redis-benchmark', ['-h', '127.0.0.1', '-p', String(port), '-q', ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const figures: RedisBenchmarkFigure[] = [];
  for (const line of stdout.split(/[\r\n]+/)) {
    const match = /^(.+?): ([\d.]+) requests per second, p50=([\d.]+) msec/.exec(line.trim());
    if (match) figures.push({ test: match[1], requestsPerSecond: Number(match[2]), p50Ms: Number(match[3]) });
  }
  if (figures.length === 0) throw new Error(`redis-benchmark printed no figures: ${stdout.slice(-500)}`);
  return figures;
}

/** SHA of a one-SET script (the cheapest useful EVALSHA), loaded on the server. */
export async function loadTrivialScript(url: string): Promise<string> {
  const client = new Redis(url);
  const sha = (await client.script('LOAD', "return redis.call('SET', KEYS[1], ARGV[1])")) as string;
  await client.quit();
  return sha;
}
