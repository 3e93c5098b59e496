/**
 * Sends over HTTP on loopback: 64 concurrent clients (keep-alive connections),
 * each POST /v1/messages authenticated, validated, durable (SQLite, fsynced)
 * and in the recipient's inbox view before its 201. The server runs in its
 * own process. Target: >= 2,000 sends/s with p99 <= 30 ms.
 */
import os from 'node:os';
import { agentIdentity } from '../lib/mailbox';
import { atLeast, atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round, summarize } from '../lib/stats';
import { closedLoop } from '../lib/timing';
import { startBenchServer } from './benchServer';
import { JsonClient, registerOverHttp } from './httpLoad';

const CLIENTS = 64;
const AGENTS = 128;
const SENDS_PER_RUN = scaled(20_000, 1_000);
const WARMUP = scaled(2_000, 200);
const RUNS = 3;
const BODY = 'Please review the attached plan and reply with your comments. '.repeat(5);

interface RunFigures {
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  serverCpuUs: number;
}

async function oneRun(): Promise<RunFigures> {
  const server = await startBenchServer();
  const client = new JsonClient(server.url, CLIENTS);
  try {
    const identities = Array.from({ length: AGENTS }, (_unused, i) => agentIdentity(i));
    const tokens = await registerOverHttp(client, server.adminToken, identities);
    const send = async (index: number, worker: number) => {
      const { status, body } = await client.request('POST', '/v1/messages', tokens[worker], {
        to: identities[(worker + 1 + (index % (AGENTS - 1))) % AGENTS],
        subject: `Status ${index}`,
        body: BODY,
        priority: index % 10 === 0 ? 'high' : 'normal',
      });
      if (status !== 201) throw new Error(`send ${index}: HTTP ${status} ${JSON.stringify(body)}`);
    };
    await closedLoop(WARMUP, CLIENTS, send);
    const cpuBefore = await server.cpuMs();
    const { latencies, elapsedMs } = await closedLoop(SENDS_PER_RUN, CLIENTS, send);
    const serverCpuUs = (((await server.cpuMs()) - cpuBefore) * 1000) / SENDS_PER_RUN;
    const lat = summarize(latencies);
    return { perSecond: (SENDS_PER_RUN / elapsedMs) * 1000, p50: lat.p50, p99: lat.p99, max: lat.max, serverCpuUs };
  } finally {
    client.close();
    await server.stop();
  }
}

runBench('http/sendThroughput', async (report) => {
  report.note(
    'setup',
    `${CLIENTS} concurrent HTTP clients on loopback, ${AGENTS} agents, ${SENDS_PER_RUN} direct sends per run ` +
      `after ${WARMUP} warm-up, ${RUNS} runs (fresh server process and SQLite file each), median reported`,
  );
  const runs: RunFigures[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await oneRun();
    runs.push(run);
    report.log(
      `  run ${i + 1}: ${Math.round(run.perSecond)} sends/s, p50 ${round(run.p50)} ms, p99 ${round(run.p99)} ms, ` +
        `max ${round(run.max)} ms, server CPU ${Math.round(run.serverCpuUs)} us/send`,
    );
  }
  report.metric('HTTP sends/s (64 clients, durable)', median(runs.map((r) => r.perSecond)), 'sends/s', atLeast(2000), {
    runs: runs.map((r) => Math.round(r.perSecond)),
  });
  report.metric('HTTP send latency p50', median(runs.map((r) => r.p50)), 'ms', undefined, {
    runs: runs.map((r) => round(r.p50)),
  });
  report.metric('HTTP send latency p99', median(runs.map((r) => r.p99)), 'ms', atMost(30), {
    runs: runs.map((r) => round(r.p99)),
    maxMs: runs.map((r) => round(r.max)),
  });
  // CPU per send does not depend on what else the machine runs, unlike the rates above.
  report.metric('server CPU per send (HTTP + auth + command + views)', median(runs.map((r) => r.serverCpuUs)), 'us', undefined, {
    runs: runs.map((r) => Math.round(r.serverCpuUs)),
  });
  report.note('machine load (1-min load average / cpus)', `${round(os.loadavg()[0])} / ${os.cpus().length}`);
});
