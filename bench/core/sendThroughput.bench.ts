/**
 * Direct sends on the embedded default: 64 concurrent senders, each send
 * durable (fsynced) and in the recipient's inbox view before it is
 * acknowledged. Target: >= 7,000 sends/s with p99 <= 20 ms.
 * Each run also says where a send waits (sendStages.ts): its durable append, then its events' way into the
 * views; with 64 senders in a closed loop the rate is 64 / latency, so these two set it.
 */
import { cpuMs, mainThreadCpuMs } from '../lib/cpu';
import { durableCommitLatency } from '../lib/diskProbe';
import { agentIdentity, openEmbeddedMailbox, registerAgents } from '../lib/mailbox';
import { atLeast, atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round, summarize } from '../lib/stats';
import { traceSendStages, type SendStages } from '../lib/sendStages';
import { closedLoop } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';

const SENDERS = 64;
const AGENTS = 128; // senders plus recipients that only receive
const SENDS_PER_RUN = scaled(20_000, 1_000);
const WARMUP = scaled(2_000, 200);
const RUNS = 3;
const BODY = 'Please review the attached plan and reply with your comments. '.repeat(5);

interface RunFigures {
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  cpuUsPerSend: number;
  mainThreadUsPerSend: number | null;
  stages: SendStages;
}

async function oneRun(views: 'sqlite' | 'memory'): Promise<RunFigures> {
  return withTmpDir(async (dir) => {
    const mailbox = await openEmbeddedMailbox(dir, { views });
    try {
      const clients = await registerAgents(
        mailbox,
        Array.from({ length: AGENTS }, (_unused, i) => agentIdentity(i)),
      );
      const send = (index: number, worker: number) =>
        clients[worker].send({
          to: agentIdentity((worker + 1 + (index % (AGENTS - 1))) % AGENTS),
          subject: `Status ${index}`,
          body: BODY,
          priority: index % 10 === 0 ? 'high' : 'normal',
        });
      const stages = traceSendStages(mailbox);
      await closedLoop(WARMUP, SENDERS, send);
      stages.start();
      const [cpuBefore, mainBefore] = [cpuMs(), mainThreadCpuMs()];
      const { latencies, elapsedMs } = await closedLoop(SENDS_PER_RUN, SENDERS, send);
      const cpuUsPerSend = ((cpuMs() - cpuBefore) / SENDS_PER_RUN) * 1000;
      const mainAfter = mainThreadCpuMs();
      const mainThreadUsPerSend =
        mainBefore === null || mainAfter === null ? null : ((mainAfter - mainBefore) / SENDS_PER_RUN) * 1000;
      const lat = summarize(latencies);
      const unread = (await Promise.all(clients.map((c) => c.unreadCount()))).reduce((sum, c) => sum + c.unread, 0);
      if (unread !== WARMUP + SENDS_PER_RUN)
        throw new Error(`expected ${WARMUP + SENDS_PER_RUN} unread in total, views show ${unread}`);
      return {
        perSecond: (SENDS_PER_RUN / elapsedMs) * 1000,
        p50: lat.p50,
        p99: lat.p99,
        max: lat.max,
        cpuUsPerSend,
        mainThreadUsPerSend,
        stages: stages.read(),
      };
    } finally {
      await mailbox.close();
    }
  });
}

runBench('core/sendThroughput', async (report) => {
  const disk = await durableCommitLatency();
  report.note(
    'durable commit on this disk (1 row, fsync)',
    `p50 ${round(disk.p50)} ms, p99 ${round(disk.p99)} ms, max ${round(disk.max)} ms`,
  );
  report.note(
    'setup',
    `${SENDERS} concurrent senders, ${AGENTS} agents, ${SENDS_PER_RUN} direct sends per run after ` +
      `${WARMUP} warm-up, ${RUNS} runs (fresh SQLite file each), median reported`,
  );
  const runs: RunFigures[] = [];
  const inMemory: RunFigures[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Interleaved with a run on views in memory (MAILBOX_VIEWS=memory): what the SQLite views file costs, same run.
    for (const views of ['sqlite', 'memory'] as const) {
      const run = await oneRun(views);
      (views === 'sqlite' ? runs : inMemory).push(run);
      report.log(
        `  run ${i + 1}, views ${views}: ${Math.round(run.perSecond)} sends/s, p50 ${round(run.p50)} ms, p99 ${round(run.p99)} ms, ` +
          `max ${round(run.max)} ms, CPU ${Math.round(run.cpuUsPerSend)} µs/send (main thread ${round(run.mainThreadUsPerSend ?? NaN)}); ` +
          `append ${round(run.stages.appendMs)} ms, appended -> in the views ${round(run.stages.appendedToViewsMs)} ms, ` +
          `${round(run.stages.eventsPerApply)} events per apply`,
      );
    }
  }
  const memoryPerSecond = median(inMemory.map((r) => r.perSecond));
  report.metric('direct sends/s (64 senders, durable), views in memory', memoryPerSecond, 'sends/s', undefined, {
    runs: inMemory.map((r) => Math.round(r.perSecond)),
    sqliteToMemory: round(median(runs.map((r) => r.perSecond)) / memoryPerSecond),
    cpuUsPerSend: inMemory.map((r) => Math.round(r.cpuUsPerSend)),
    mainThreadUsPerSend: inMemory.map((r) => (r.mainThreadUsPerSend === null ? null : Math.round(r.mainThreadUsPerSend))),
  });
  const perSecond = median(runs.map((r) => r.perSecond));
  report.metric('direct sends/s (64 senders, durable), SQLite views (default)', perSecond, 'sends/s', atLeast(7000), {
    runs: runs.map((r) => Math.round(r.perSecond)),
    vsReference100PerSecond: round(perSecond / 100),
  });
  report.metric('send latency p50', median(runs.map((r) => r.p50)), 'ms', undefined, { runs: runs.map((r) => round(r.p50)) });
  report.metric('send latency p99', median(runs.map((r) => r.p99)), 'ms', atMost(20), {
    runs: runs.map((r) => round(r.p99)),
    maxMs: runs.map((r) => round(r.max)),
  });
  report.metric('CPU per send (all threads, user + system)', median(runs.map((r) => r.cpuUsPerSend)), 'µs', undefined, {
    runs: runs.map((r) => Math.round(r.cpuUsPerSend)),
    capacityOneCorePerSecond: Math.round(1e6 / median(runs.map((r) => r.cpuUsPerSend))),
    mainThreadUsPerSend: runs.map((r) => (r.mainThreadUsPerSend === null ? null : Math.round(r.mainThreadUsPerSend))),
  });
  // Little's law in a closed loop: sends/s = senders / latency, so the rate follows the stages a send waits on.
  report.metric('SQLite views: append (durable) per send', median(runs.map((r) => r.stages.appendMs)), 'ms', undefined, {
    runs: runs.map((r) => round(r.stages.appendMs)),
  });
  report.metric(
    'SQLite views: appended -> in the views per send',
    median(runs.map((r) => r.stages.appendedToViewsMs)),
    'ms',
    undefined,
    {
      runs: runs.map((r) => round(r.stages.appendedToViewsMs)),
      eventsPerApply: runs.map((r) => round(r.stages.eventsPerApply)),
      memoryViews: inMemory.map((r) => round(r.stages.appendedToViewsMs)),
    },
  );
  report.note('ratio vs reference mailbox (~100 sends/s)', `${round(perSecond / 100)}x`);
});
