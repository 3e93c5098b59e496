/**
 * What grows with messages in the server (issue 15): the sustained-load traffic (open loop, 128 agents,
 * <= 256 in flight) against the bench server in its own process, paused every BENCH_GROWTH_EVERY
 * messages (in-flight requests drained) to read the server's RSS and heapUsed after a full GC.
 * Prints the least-squares slope of both, in bytes per message, after the first BENCH_GROWTH_WARMUP
 * messages, and over the last third of the run (a plateau: a slope over the run, none over its end).
 * BENCH_GROWTH_SNAPSHOTS=50000,150000 also writes heap snapshots of the server at those counts into
 * BENCH_GROWTH_DIR (default the working directory), to diff by constructor. BENCH_GROWTH_GC=0: the same
 * slopes on samples without a GC (whole MB).
 * Run: npm run build && BENCH_VIEWS=sqlite node dist/bench/http/memoryGrowth.js
 * BENCH_LOAD_RATE (default 1,000 sends/s), BENCH_GROWTH_MESSAGES (default 60,000).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentIdentity } from '../lib/mailbox';
import type { ThreadHeap } from '../lib/threadHeaps';
import { nowMs } from '../lib/timing';
import { startBenchServer } from './benchServer';
import { JsonClient, registerOverHttp } from './httpLoad';

const RATE = Number(process.env.BENCH_LOAD_RATE ?? 1000);
const MESSAGES = Number(process.env.BENCH_GROWTH_MESSAGES ?? 60_000);
const EVERY = Number(process.env.BENCH_GROWTH_EVERY ?? 10_000);
const WARMUP = Number(process.env.BENCH_GROWTH_WARMUP ?? 10_000);
const SNAPSHOTS = new Set((process.env.BENCH_GROWTH_SNAPSHOTS ?? '').split(',').filter(Boolean).map(Number));
/** BENCH_GROWTH_GC=0: sample without pausing the load or collecting garbage (as bench/http/sustainedLoad does). */
const PAUSE_AND_GC = process.env.BENCH_GROWTH_GC !== '0';
const DIR = process.env.BENCH_GROWTH_DIR ?? process.cwd();
const MAX_IN_FLIGHT = 256;
const AGENTS = 128;
const BODY = 'Please review the attached plan and reply with your comments. '.repeat(5);

/**
 * The server's resident memory by kind of mapping (/proc/<pid>/smaps), in MB: the main malloc heap ([heap]),
 * other anonymous mappings (V8's heap pages, thread malloc arenas, large mallocs), shared memory (SQLite's
 * WAL index) and each mapped file. Linux only; empty elsewhere.
 */
function residentByMapping(pid: number): Record<string, number> {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return {};
  }
  const kib: Record<string, number> = {};
  let name = '';
  for (const line of text.split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const file = header[4].trim();
      // anonymous mappings of 64 MB or less and more than 8 MB are malloc arenas of threads (glibc) or V8 spaces
      const sizeMb = Math.round((parseInt(header[2], 16) - parseInt(header[1], 16)) / 1048576);
      name =
        file === ''
          ? sizeMb >= 8
            ? `anon ${header[1]} ${sizeMb}MB`
            : 'anon small'
          : file.startsWith('[')
            ? file
            : path.basename(file);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kib[name] = (kib[name] ?? 0) + Number(rss[1]);
  }
  return Object.fromEntries(
    Object.entries(kib)
      .filter(([, value]) => value >= 1024)
      .map(([key, value]) => [key, Math.round(value / 102.4) / 10]),
  );
}

/** Each thread's V8 heap (not in heapTotal, so counted in RSS - heapTotal): physical MB, new space and old space. */
const threadsLine = (threads: readonly ThreadHeap[]): string =>
  threads.map((t) => `${t.thread} ${t.physicalMb} MB (new ${t.newSpaceMb}, old ${t.oldSpaceMb})`).join(', ');

const slope = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
};

async function main(): Promise<void> {
  const server = await startBenchServer();
  const client = new JsonClient(server.url, MAX_IN_FLIGHT);
  const points: Array<{ sent: number; rss: number; heapUsed: number; native: number }> = [];
  try {
    const identities = Array.from({ length: AGENTS }, (_unused, i) => agentIdentity(i));
    const tokens = await registerOverHttp(client, server.adminToken, identities);
    let issued = 0;
    let inFlight = 0;
    let errors = 0;
    const send = (index: number) => {
      inFlight += 1;
      const from = index % AGENTS;
      client
        .request('POST', '/v1/messages', tokens[from], {
          to: identities[(from + 1 + (index % (AGENTS - 1))) % AGENTS],
          subject: `Status ${index}`,
          body: BODY,
          priority: index % 10 === 0 ? 'high' : 'normal',
        })
        .then(
          ({ status }) => {
            if (status !== 201) errors += 1;
          },
          () => {
            errors += 1;
          },
        )
        .finally(() => {
          inFlight -= 1;
        });
    };
    if (SNAPSHOTS.has(0)) await server.heapSnapshot(path.join(DIR, 'server-0.heapsnapshot')); // before any message
    const cpuStart = await server.cpuMs();
    let begin = nowMs();
    let base = 0;
    while (issued < MESSAGES) {
      const checkpoint = Math.min(MESSAGES, (Math.floor(issued / EVERY) + 1) * EVERY);
      while (issued < checkpoint) {
        const due = Math.min(checkpoint, base + Math.floor(((nowMs() - begin) / 1000) * RATE)) - issued;
        for (let i = 0; i < Math.min(due, MAX_IN_FLIGHT - inFlight); i += 1) send(issued++);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      if (!PAUSE_AND_GC) {
        const sample = await server.sample();
        const mb = 1048576; // the sample's figures are whole MB
        points.push({
          sent: issued,
          rss: sample.rssMb * mb,
          heapUsed: sample.heapUsedMb * mb,
          native: (sample.rssMb - sample.heapTotalMb) * mb,
        });
        process.stdout.write(
          `sent=${issued} (no GC) rss=${sample.rssMb}MB heapUsed=${sample.heapUsedMb}MB heapTotal=${sample.heapTotalMb}MB ` +
            `load=${os.loadavg()[0].toFixed(2)}\n`,
        );
        process.stdout.write(`  resident MB by mapping: ${JSON.stringify(residentByMapping(server.pid))}\n`);
        process.stdout.write(`  other threads' V8 heaps: ${threadsLine(sample.threads)}\n`);
        continue;
      }
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const memory = await server.memory();
      const { rss, heapUsed, heapTotal } = memory.bytes;
      points.push({ sent: issued, rss, heapUsed, native: rss - heapTotal });
      process.stdout.write(
        `sent=${issued} rss=${memory.rssMb}MB heapUsed=${memory.heapUsedMb}MB heapTotal=${Math.round(heapTotal / 1048576)}MB ` +
          `errors=${errors} load=${os.loadavg()[0].toFixed(2)}\n`,
      );
      process.stdout.write(`  resident MB by mapping: ${JSON.stringify(residentByMapping(server.pid))}\n`);
      process.stdout.write(`  other threads' V8 heaps: ${threadsLine(memory.threads)}\n`);
      if (SNAPSHOTS.has(issued)) {
        const file = path.join(DIR, `server-${issued}.heapsnapshot`);
        await server.heapSnapshot(file);
        process.stdout.write(`snapshot ${file}\n`);
      }
      base = issued;
      begin = nowMs();
    }
    if (!PAUSE_AND_GC) {
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const memory = await server.memory();
      process.stdout.write(`at the end, after GC: ${JSON.stringify(memory)}\n`);
    }
    const steady = points.filter((point) => point.sent >= WARMUP);
    // The last third apart: a cache or a V8 space that fills once reads as a slope over the whole run, not over its end.
    const lastThird = steady.slice(Math.floor((steady.length * 2) / 3));
    const cpuMs = (await server.cpuMs()) - cpuStart;
    process.stdout.write(
      `${JSON.stringify({
        messages: MESSAGES,
        rate: RATE,
        errors,
        rssBytesPerMessage: Math.round(slope(steady.map((p) => [p.sent, p.rss] as const))),
        heapUsedBytesPerMessage: Math.round(slope(steady.map((p) => [p.sent, p.heapUsed] as const))),
        nativeBytesPerMessage: Math.round(slope(steady.map((p) => [p.sent, p.native] as const))), // RSS - heapTotal
        lastThird: {
          from: lastThird[0]?.sent ?? 0,
          rssBytesPerMessage: Math.round(slope(lastThird.map((p) => [p.sent, p.rss] as const))),
          nativeBytesPerMessage: Math.round(slope(lastThird.map((p) => [p.sent, p.native] as const))),
        },
        serverCpuUsPerMessage: Math.round((cpuMs * 1000) / MESSAGES),
        load: os.loadavg().map((l) => l.toFixed(2)),
        rssMb: points.map((p) => Math.round(p.rss / 1048576)),
        heapUsedMb: points.map((p) => Math.round(p.heapUsed / 1048576)),
        nativeMb: points.map((p) => Math.round(p.native / 1048576)),
      })}\n`,
    );
  } finally {
    client.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
