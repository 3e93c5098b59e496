/**
 * Each thread's V8 heap in the bench server (issue 15). process.memoryUsage() counts the main thread's heap only:
 * the views thread, the log's writer thread and the two checkpointing sidecars each run their own V8 heap, which
 * RSS - heapTotal read as native memory. Measured at 2,000 sends/s, the views thread's new space doubled from 8 to
 * 16 MB after ~150,000 messages: an 8 MB step that http/sustainedLoad reported as a native slope of ~30 bytes/message.
 *
 * Loaded with --require into the server process (bench/http/benchServer.ts), so it runs in every thread it starts
 * too (a worker inherits the process's execArgv): every second each thread writes its figures to
 * `<BENCH_THREAD_HEAPS_DIR>/<threadId>.json`; `threadHeaps()` reads them back in the server's main thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { isMainThread, threadId, workerData } from 'node:worker_threads';

export interface ThreadHeap {
  /** Which thread, told by the data it was started with ('views', 'log writer', 'sidecar'), else 'thread <id>'. */
  thread: string;
  /** Resident V8 heap (all spaces), its new space (young generation) and old space, in MB. */
  physicalMb: number;
  newSpaceMb: number;
  oldSpaceMb: number;
}

const DIR_VARIABLE = 'BENCH_THREAD_HEAPS_DIR';
const EVERY_MS = 1000;
const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

function threadName(): string {
  const data = workerData as Record<string, unknown> | null | undefined;
  if (data && typeof data.__thread === 'object') return 'views'; // support/threads/startThread.ts
  if (data && 'checkpointPages' in data) return 'log writer'; // adapters/eventstore/sqliteWriter.ts
  if (data && 'readAllSql' in data) return data.readAllSql ? 'log sidecar' : 'views sidecar'; // support/sqlite/sqliteSidecar.ts
  return `thread ${threadId}`;
}

function record(dir: string, thread: string): void {
  const spaces = new Map(v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]));
  const figures: ThreadHeap = {
    thread,
    physicalMb: mb(v8.getHeapStatistics().total_physical_size),
    newSpaceMb: mb(spaces.get('new_space') ?? 0),
    oldSpaceMb: mb(spaces.get('old_space') ?? 0),
  };
  try {
    fs.writeFileSync(path.join(dir, `${threadId}.json`), JSON.stringify(figures));
  } catch {
    // the server is stopping (its directory removed): nothing to report
  }
}

/** Every thread but the main one (whose heap process.memoryUsage() gives), as last written. */
export function threadHeaps(): ThreadHeap[] {
  const dir = process.env[DIR_VARIABLE];
  if (!dir) return [];
  const heaps: ThreadHeap[] = [];
  for (const file of fs.readdirSync(dir)) {
    try {
      heaps.push(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as ThreadHeap);
    } catch {
      // being written: the next sample has it
    }
  }
  return heaps.sort((a, b) => a.thread.localeCompare(b.thread));
}

const dir = process.env[DIR_VARIABLE];
if (dir && !isMainThread) {
  const thread = threadName();
  record(dir, thread);
  setInterval(() => record(dir, thread), EVERY_MS).unref();
  process.on('exit', () => fs.rmSync(path.join(dir, `${threadId}.json`), { force: true })); // a replaced thread drops out
}
