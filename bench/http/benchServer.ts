/** Starts bench/http/serverProcess in a child process and talks to it over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { MemoryFigures } from '../lib/memory';
import type { ThreadHeap } from '../lib/threadHeaps';
import { makeTmpDir, removeDir } from '../lib/tmp';

export interface ServerSample {
  rssMb: number;
  heapUsedMb: number;
  /** V8's heap as committed (used + garbage not yet collected + free pages kept). */
  heapTotalMb: number;
  loopDelayMs: { p50: number; p99: number; p999: number; max: number };
  /** Inside the server: whole requests, event store appends, views' applies (ms). */
  requestMs: Tail;
  appendMs: Tail;
  applyMs: Tail;
  gc: { count: number; totalMs: number; maxMs: number; maxKind: number };
  /** The V8 heaps of the server's other threads (views, log writer, sidecars), which RSS - heapTotal would count as native. */
  threads: ThreadHeap[];
}

interface Tail {
  p99: number;
  p999: number;
  max: number;
}

export interface BenchServer {
  url: string;
  /** The server process's id (its /proc/<pid>/smaps: where native memory goes). */
  pid: number;
  adminToken: string;
  memory(): Promise<MemoryFigures & { bytes: NodeJS.MemoryUsage; openWakeStreams: number; threads: ThreadHeap[] }>;
  /** RSS and heap now (no GC), and the event loop's delay since the last sample. */
  sample(): Promise<ServerSample>;
  /** A heap snapshot of the server written to `file`, after a full GC. */
  heapSnapshot(file: string): Promise<void>;
  /** CPU time (user + system) the server process has used so far, in ms. */
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) => reject(new Error(`bench server exited (${code}) before '${type}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** `dataDir`: serve that store (a bench prepared it; it is kept), else a fresh one. */
export async function startBenchServer(options: { dataDir?: string } = {}): Promise<BenchServer> {
  // Each thread of the server writes its V8 heap's figures here (bench/lib/threadHeaps.ts), read back in its samples.
  const heapsDir = makeTmpDir('mailbox-bench-thread-heaps-');
  const child = fork(path.join(__dirname, 'serverProcess.js'), [], {
    env: {
      ...process.env,
      BENCH_THREAD_HEAPS_DIR: heapsDir,
      ...(options.dataDir === undefined ? {} : { BENCH_SERVER_DATA_DIR: options.dataDir }),
    },
    execArgv: [
      '--expose-gc',
      '--require',
      path.join(__dirname, '..', 'lib', 'threadHeaps.js'),
      ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
    stdio: ['ignore', process.env.BENCH_SERVER_STDOUT ? 'inherit' : 'ignore', 'inherit', 'ipc'],
  });
  const ready = await nextMessage<{ url: string; adminToken: string }>(child, 'ready');
  return {
    url: ready.url,
    pid: child.pid!,
    adminToken: ready.adminToken,
    memory() {
      const answer = nextMessage<MemoryFigures & { bytes: NodeJS.MemoryUsage; openWakeStreams: number; threads: ThreadHeap[] }>(
        child,
        'memory',
      );
      child.send('memory');
      return answer;
    },
    sample() {
      const answer = nextMessage<ServerSample>(child, 'sample');
      child.send('sample');
      return answer;
    },
    async heapSnapshot(file) {
      const written = nextMessage(child, 'snapshot');
      child.send(`snapshot:${file}`);
      await written;
    },
    async cpuMs() {
      const answer = nextMessage<{ cpuMs: number }>(child, 'cpu');
      child.send('cpu');
      return (await answer).cpuMs;
    },
    async stop() {
      const stopped = nextMessage(child, 'stopped');
      child.send('stop');
      await stopped;
      removeDir(heapsDir);
    },
  };
}
