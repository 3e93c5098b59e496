/**
 * Rebuild of the in-memory views (MAILBOX_VIEWS=memory): a fresh in-memory projection catches up
 * from a SQLite log of 1,000,000 events (what `mailbox serve` does at every start with memory views;
 * the SQLite views file of the embedded default is measured by core/sqliteViews).
 * Target: >= 130,000 events/s (issue 9); RSS reported at 1,000,000 events.
 *
 * The log is generated once, and every rebuild runs in its own child process
 * so that each RSS figure is that of one process holding one set of views; it starts as
 * `mailbox serve` does (the CLI's collector settings, no collection forced before).
 * Every read event is checked against its stored shape (src/events/readEvent.ts);
 * each run is paired with one with those checks switched off (a bench-only env
 * switch) and one with V8's default collector settings, interleaved, to report
 * what each costs in the same run.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { openEmbeddedMailbox } from '../lib/mailbox';
import { cpuMs, mainThreadCpuMs } from '../lib/cpu';
import { memoryMb, type MemoryFigures } from '../lib/memory';
import { tuneCollector } from '../../src/support/collectorTuning';
import { atLeast } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round } from '../lib/stats';
import { writeSyntheticLog, type SyntheticLogSummary } from '../lib/syntheticLog';
import { nowMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';

const EVENTS = scaled(1_000_000, 10_000);
const AGENTS = 1_000;
const RUNS = 3;

interface GenerateOutput {
  summary: Omit<SyntheticLogSummary, 'identities'>;
  ms: number;
  expectedUnread: number;
}
interface RebuildOutput {
  events: number;
  ms: number;
  cpuMs: number;
  mainThreadCpuMs: number | null;
  before: MemoryFigures;
  after: MemoryFigures;
  unread: number;
}

async function generate(dir: string): Promise<GenerateOutput> {
  const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  const started = nowMs();
  let reported = 0;
  const { identities: _ids, ...summary } = await writeSyntheticLog(store, {
    agents: AGENTS,
    events: EVENTS,
    readShare: 0.25,
    archiveShare: 0.1,
    broadcastEvery: 20_000,
    onProgress: (written) => {
      if (written - reported >= 100_000) process.stderr.write(`  generated ${(reported = written)} events\n`);
    },
  });
  await store.close();
  // Every delivery starts unread; each receipt removes one (archives only ever touch read messages).
  const expectedUnread = summary.directMessages + summary.broadcasts * (AGENTS - 1) - summary.reads;
  return { summary, ms: nowMs() - started, expectedUnread };
}

async function rebuild(dir: string): Promise<RebuildOutput> {
  // As `mailbox serve` starts: the CLI's collector settings (src/support/collectorTuning.ts) unless this run measures
  // V8's defaults, and no collection forced before the catch-up (one changed how V8 sized and placed what followed:
  // a rebuild after a forced collection took ~25% less time than the same start without, which no server has).
  if (process.env.BENCH_V8_DEFAULTS !== '1') tuneCollector();
  const before = memoryMb(false);
  const [started, cpuBefore, mainBefore] = [nowMs(), cpuMs(), mainThreadCpuMs()];
  const mailbox = await openEmbeddedMailbox(dir, { views: 'memory' }); // rebuilt at every open (core/sqliteViews: the file)
  const ms = nowMs() - started;
  const cpu = cpuMs() - cpuBefore;
  const mainAfter = mainThreadCpuMs();
  const mainThread = mainBefore === null || mainAfter === null ? null : mainAfter - mainBefore;
  const events = Number((await mailbox.projections.checkpoint()) ?? 0n);
  const after = memoryMb();
  const unread = (await mailbox.asActor(ADMIN_ACTOR).heartbeats()).agents.reduce((sum, agent) => sum + agent.unread, 0);
  await mailbox.close();
  return { events, ms, cpuMs: cpu, mainThreadCpuMs: mainThread, before, after, unread };
}

/** Runs this script in a child process in one of its helper modes and parses its JSON answer. */
function inChild<T>(mode: 'generate' | 'rebuild', dir: string, env: NodeJS.ProcessEnv = {}): T {
  const output = execFileSync(process.execPath, ['--expose-gc', __filename, mode, dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  return JSON.parse(output.trim().split('\n').pop()!) as T;
}

const [mode, modeDir] = process.argv.slice(2);
if (mode === 'generate' || mode === 'rebuild') {
  (mode === 'generate' ? generate(modeDir) : rebuild(modeDir)).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  runBench('core/rebuild', async (report) => {
    await withTmpDir(async (dir) => {
      const generated = inChild<GenerateOutput>('generate', dir);
      report.note('log', {
        ...generated.summary,
        generatedInMs: Math.round(generated.ms),
        generatedPerSecond: Math.round((generated.summary.events / generated.ms) * 1000),
      });
      const runs: RebuildOutput[] = [];
      const unchecked: RebuildOutput[] = [];
      const rebuildOnce = (label: string, env: NodeJS.ProcessEnv) => {
        const run = inChild<RebuildOutput>('rebuild', dir, env);
        if (run.events !== generated.summary.events)
          throw new Error(`rebuilt ${run.events} events, log has ${generated.summary.events}`);
        if (run.unread !== generated.expectedUnread)
          throw new Error(`views count ${run.unread} unread, log implies ${generated.expectedUnread}`);
        report.log(
          `  ${label}: ${Math.round(run.ms)} ms (${Math.round((run.events / run.ms) * 1000)} events/s), ` +
            `CPU ${Math.round(run.cpuMs)} ms (main thread ${run.mainThreadCpuMs ?? '?'} ms), ` +
            `RSS ${run.before.rssMb} -> ${run.after.rssMb} MB, heap ${run.after.heapUsedMb} MB`,
        );
        return run;
      };
      const v8Defaults: RebuildOutput[] = [];
      for (let i = 0; i < RUNS; i++) {
        runs.push(rebuildOnce(`run ${i + 1}`, {}));
        unchecked.push(rebuildOnce(`run ${i + 1}, stored-shape checks off`, { MAILBOX_BENCH_SKIP_EVENT_CHECKS: '1' }));
        v8Defaults.push(rebuildOnce(`run ${i + 1}, V8's default collector settings`, { BENCH_V8_DEFAULTS: '1' }));
      }
      const perSecond = median(runs.map((r) => (r.events / r.ms) * 1000));
      report.metric(`rebuild from ${EVENTS} events`, perSecond, 'events/s', atLeast(130_000), {
        runsMs: runs.map((r) => Math.round(r.ms)),
        secondsMedian: round(median(runs.map((r) => r.ms)) / 1000),
      });
      const uncheckedPerSecond = median(unchecked.map((r) => (r.events / r.ms) * 1000));
      report.metric(
        `rebuild from ${EVENTS} events, stored-shape checks off (bench only)`,
        uncheckedPerSecond,
        'events/s',
        undefined,
        { runsMs: unchecked.map((r) => Math.round(r.ms)), checkedToUnchecked: round(perSecond / uncheckedPerSecond) },
      );
      report.metric(
        `rebuild from ${EVENTS} events, V8's default collector settings (a library user's process)`,
        median(v8Defaults.map((r) => (r.events / r.ms) * 1000)),
        'events/s',
        undefined,
        {
          runsMs: v8Defaults.map((r) => Math.round(r.ms)),
          tunedToDefaults: round(perSecond / median(v8Defaults.map((r) => (r.events / r.ms) * 1000))),
        },
      );
      const mainThread = runs.map((r) => r.mainThreadCpuMs).filter((v): v is number => v !== null);
      if (mainThread.length === runs.length) {
        // What an otherwise idle machine would reach: the catch-up is bound to the main thread.
        report.metric(
          'rebuild rate per main-thread CPU second',
          median(runs.map((r) => (r.events / r.mainThreadCpuMs!) * 1000)),
          'events/s',
          undefined,
          { mainThreadCpuMs: mainThread.map(Math.round), processCpuMs: runs.map((r) => Math.round(r.cpuMs)) },
        );
      }
      if (unchecked.every((r) => r.mainThreadCpuMs !== null)) {
        // On a loaded machine wall-clock figures swing; main-thread CPU shows what the checks cost.
        report.metric(
          'rebuild rate per main-thread CPU second, stored-shape checks off (bench only)',
          median(unchecked.map((r) => (r.events / r.mainThreadCpuMs!) * 1000)),
          'events/s',
          undefined,
          { mainThreadCpuMs: unchecked.map((r) => Math.round(r.mainThreadCpuMs!)) },
        );
      }
      report.metric(`RSS with views of ${EVENTS} events`, median(runs.map((r) => r.after.rssMb)), 'MB', undefined, {
        rssBeforeOpenMb: median(runs.map((r) => r.before.rssMb)),
        heapUsedMb: median(runs.map((r) => r.after.heapUsedMb)),
        externalMb: median(runs.map((r) => r.after.externalMb)),
      });
    });
  });
}
