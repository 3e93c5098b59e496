/**
 * The SQLite views file (the embedded default), on a synthetic log of
 * 1,000,000 events (1,000 agents), each phase in its own child process so
 * that every RSS figure is one process holding one store:
 * - build: a first start on the log (views file absent): the bulk catch-up, listing indexes at the end;
 * - restart: the same mailbox opened again, RUNS times: ready (createMailbox resolved) with no rebuild,
 *   the log line saying it resumed from the checkpoint; target <= 1 s;
 * - queries on the restarted store: list unread (limit 50) and unread count, p99 (targets 2 ms, 0.2 ms);
 * - live: the last LIVE events of the log applied as a live projector does (batches of 1,000 to the store the
 *   server runs, written on its own thread, transactions as it cuts them, every index kept in step, wakes
 *   published) onto views of the rest; target >= 20,000 events/s.
 * RSS after each phase (target <= 250 MB).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ThreadedSqliteProjectionStore } from '../../src/adapters/projections/threadedSqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { createMailbox } from '../../src/mailbox';
import { projectStored } from '../../src/projections/projector';
import { cpuMs } from '../lib/cpu';
import { agentIdentity, BENCH_ADMIN_TOKEN } from '../lib/mailbox';
import { memoryMb, type MemoryFigures } from '../lib/memory';
import { atLeast, atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round, summarize } from '../lib/stats';
import { writeSyntheticLog } from '../lib/syntheticLog';
import { nowMs, sampleMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';

/** Sizes: BENCH_QUICK scales them by 10; SQLITE_VIEWS_EVENTS / SQLITE_VIEWS_LIVE set them outright (while iterating). */
const EVENTS = Number(process.env.SQLITE_VIEWS_EVENTS ?? scaled(1_000_000, 10_000));
const AGENTS = 1_000;
const RUNS = 3;
const LIVE = Number(process.env.SQLITE_VIEWS_LIVE ?? scaled(50_000, 2_000));
const SAMPLES = scaled(5_000, 500);

interface Opened {
  ms: number;
  cpuMs: number;
  events: number;
  resumed: boolean;
  caughtUp: boolean;
  memory: MemoryFigures;
  fileMb: number;
}

async function generate(dir: string): Promise<{ events: number; ms: number }> {
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  const started = nowMs();
  const summary = await writeSyntheticLog(store, {
    agents: AGENTS,
    events: EVENTS,
    readShare: 0.25,
    archiveShare: 0.1,
    broadcastEvery: 20_000,
  });
  await store.close();
  return { events: summary.events, ms: nowMs() - started };
}

/** Opens the mailbox on the log (views file beside it), as `mailbox serve` does, and reads what its log said. */
async function open(dir: string): Promise<Opened> {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    }),
  );
  const [started, cpuBefore] = [nowMs(), cpuMs()];
  const mailbox = await createMailbox({ dataDir: dir, adminToken: BENCH_ADMIN_TOKEN, logLevel: 'info' }, { logger });
  await mailbox.projections.unreadCount(agentIdentity(0)); // the first read: a bulk build's indexes exist by then
  const ms = nowMs() - started;
  const cpu = cpuMs() - cpuBefore;
  const events = Number((await mailbox.projections.checkpoint()) ?? 0n);
  const memory = memoryMb();
  await mailbox.close();
  const messages = lines.map((line) => String((JSON.parse(line) as { msg: string }).msg));
  return {
    ms,
    cpuMs: cpu,
    events,
    resumed: messages.some((m) => m.startsWith('projections: SQLite views resume from their stored checkpoint')),
    caughtUp: messages.includes('projections caught up'),
    memory,
    fileMb: Math.round(fs.statSync(path.join(dir, 'views.sqlite')).size / 1e6),
  };
}

async function queries(dir: string) {
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: BENCH_ADMIN_TOKEN, logLevel: 'silent', views: 'sqlite' }, // the views file, not memory
    { logger: pino({ level: 'silent' }) },
  );
  let i = 0;
  const next = () => mailbox.asActor({ identity: agentIdentity(i++ % AGENTS), role: 'agent' });
  const list = summarize(await sampleMs(SAMPLES, () => next().listMessages({ status: 'unread', limit: 50 })));
  const count = summarize(await sampleMs(SAMPLES, () => next().unreadCount()));
  const memory = memoryMb();
  await mailbox.close();
  return { list, count, memory };
}

/** Views of all but the last LIVE events (bulk), then those applied live; the rate of the live part. */
async function live(dir: string) {
  const log = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  const file = path.join(dir, 'live-views.sqlite');
  const wakeBus = new InProcessWakeBus();
  const store = await ThreadedSqliteProjectionStore.open(file, wakeBus); // as `mailbox serve` runs it: written on its thread
  const head = Number((await log.headPosition()) ?? 0n);
  const cut = BigInt(head - LIVE);
  let after: bigint | null = null;
  const feed = async (until: bigint | null) => {
    let applied = 0;
    for (;;) {
      const page = await log.readAll(after, 1000);
      const wanted = until === null ? page : page.filter((event) => event.position <= until);
      if (wanted.length === 0) return applied;
      await store.applyBatch(wanted.map(projectStored));
      after = wanted[wanted.length - 1].position;
      applied += wanted.length;
    }
  };
  await feed(cut);
  await store.unreadCount(agentIdentity(0)); // listing indexes built: the live part keeps every index in step
  const pages: Array<ReturnType<typeof projectStored>[]> = [];
  for (let from: bigint | null = after as bigint | null; ;) {
    const page = await log.readAll(from, 1000);
    if (page.length === 0) break;
    pages.push(page.map(projectStored));
    from = page[page.length - 1].position;
  }
  const [started, cpuBefore] = [nowMs(), cpuMs()];
  let events = 0;
  for (const page of pages) {
    await store.applyBatch(page);
    events += page.length;
  }
  const ms = nowMs() - started;
  const cpu = cpuMs() - cpuBefore;
  const memory = memoryMb();
  await store.close();
  await log.close();
  return { events, ms, cpuMs: cpu, memory };
}

function inChild<T>(mode: string, dir: string): T {
  const output = execFileSync(process.execPath, ['--expose-gc', __filename, mode, dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(output.trim().split('\n').pop()!) as T;
}

const modes: Record<string, (dir: string) => Promise<unknown>> = { generate, open, queries, live };
const [mode, modeDir] = process.argv.slice(2);
if (mode !== undefined && modes[mode]) {
  modes[mode](modeDir).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  runBench('core/sqliteViews', async (report) => {
    await withTmpDir(async (dir) => {
      const generated = inChild<{ events: number; ms: number }>('generate', dir);
      report.note('log', { events: generated.events, agents: AGENTS, generatedInMs: Math.round(generated.ms) });

      const built = inChild<Opened>('open', dir);
      if (built.events !== generated.events || built.resumed)
        throw new Error(`first start built ${built.events} of ${generated.events} events (resumed: ${built.resumed})`);
      report.log(`  build: ${Math.round(built.ms)} ms, CPU ${Math.round(built.cpuMs)} ms, RSS ${built.memory.rssMb} MB`);
      report.metric(
        `build views from ${generated.events} events (first start)`,
        (built.events / built.ms) * 1000,
        'events/s',
        atLeast(100_000),
        {
          ms: Math.round(built.ms),
          perCpuSecond: Math.round((built.events / built.cpuMs) * 1000),
          viewsFileMb: built.fileMb,
        },
      );

      const restarts: Opened[] = [];
      for (let i = 0; i < RUNS; i++) {
        const run = inChild<Opened>('open', dir);
        if (!run.resumed || run.caughtUp || run.events !== generated.events)
          throw new Error(`restart ${i + 1} did not resume without a rebuild: ${JSON.stringify(run)}`);
        restarts.push(run);
        report.log(`  restart ${i + 1}: ready in ${Math.round(run.ms)} ms, RSS ${run.memory.rssMb} MB`);
      }
      report.metric(
        `restart with ${generated.events} events in the log, ready (no rebuild)`,
        median(restarts.map((r) => r.ms)),
        'ms',
        atMost(1000),
        {
          runsMs: restarts.map((r) => Math.round(r.ms)),
        },
      );
      report.metric(
        `RSS after restart at ${generated.events} events`,
        median(restarts.map((r) => r.memory.rssMb)),
        'MB',
        atMost(250),
        {
          heapUsedMb: median(restarts.map((r) => r.memory.heapUsedMb)),
        },
      );

      const q = inChild<{ list: ReturnType<typeof summarize>; count: ReturnType<typeof summarize>; memory: MemoryFigures }>(
        'queries',
        dir,
      );
      report.latency('list unread (limit 50)', q.list, atMost(2));
      report.latency('unread count', q.count, atMost(0.2));
      report.metric('RSS after the queries', q.memory.rssMb, 'MB', atMost(250));

      const l = inChild<{ events: number; ms: number; cpuMs: number; memory: MemoryFigures }>('live', dir);
      report.metric(
        `live projection (${l.events} events onto views of ${generated.events - l.events})`,
        (l.events / l.ms) * 1000,
        'events/s',
        atLeast(20_000),
        {
          perCpuSecond: Math.round((l.events / l.cpuMs) * 1000),
          rssMb: l.memory.rssMb,
        },
      );
      report.note('quoted', { buildSeconds: round(built.ms / 1000) });
    });
  });
}
