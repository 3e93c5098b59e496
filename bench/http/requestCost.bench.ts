/**
 * What one request costs the server in CPU, by kind, at the sustained-load rate (2,000/s, open loop, 256 in
 * flight at most): GET /healthz (HTTP and routing alone), GET /v1/inbox/count (an authenticated read of the
 * views) and POST /v1/messages (a durable send, in the views before its answer). Each kind runs 10 s after
 * a warm-up, twice, interleaved; the medians are reported. CPU is read from the server process's threads
 * (/proc/<pid>/task/<tid>/schedstat, Linux): its main thread, and all of them (writer, views thread,
 * checkpoints, GC helpers), in µs per request.
 *
 * Why: on a small machine the sustained-load tail (http/sustainedLoad) follows how busy the cores are, and
 * the cores are shared by the server's threads and the load generator. These figures say which part of a
 * send costs what (a send against the HTTP floor of /healthz), so that a change can be judged by the CPU
 * it saves, a steadier figure than a tail.
 */
import { agentIdentity } from '../lib/mailbox';
import { runBench } from '../lib/runBench';
import { QUICK } from '../lib/scale';
import { threadCpu, threadCpuSince } from '../lib/threadCpu';
import { median, round } from '../lib/stats';
import { startBenchServer } from './benchServer';
import { JsonClient, OpenLoop, registerOverHttp } from './httpLoad';

const RATE = Number(process.env.BENCH_LOAD_RATE ?? 2000);
const SECONDS = QUICK ? 2 : 10;
const WARMUP_SECONDS = QUICK ? 1 : 3;
const ROUNDS = 2;
const AGENTS = 128;
const MAX_IN_FLIGHT = 256;
const BODY = 'Please review the attached plan and reply with your comments. '.repeat(5);

/** Offers `request` at RATE/s for `seconds` (OpenLoop), then waits for every answer. */
async function offer(
  seconds: number,
  request: (i: number) => Promise<{ status: number }>,
): Promise<{ sent: number; failed: number }> {
  let failed = 0;
  const load = new OpenLoop(RATE, MAX_IN_FLIGHT, (i) =>
    request(i).then(
      (response) => {
        if (response.status >= 300) failed++;
      },
      () => {
        failed++;
      },
    ),
  );
  await load.run(seconds);
  await load.drained();
  return { sent: load.issued, failed };
}

runBench('http/requestCost', async (report) => {
  report.note(
    'setup',
    `${RATE} requests/s of one kind for ${SECONDS} s (after ${WARMUP_SECONDS} s of the same), ${ROUNDS} rounds interleaved, ` +
      `<= ${MAX_IN_FLIGHT} in flight, ${AGENTS} agents, embedded default server in its own process; server CPU per request`,
  );
  const server = await startBenchServer();
  const client = new JsonClient(server.url, MAX_IN_FLIGHT);
  try {
    const identities = Array.from({ length: AGENTS }, (_unused, i) => agentIdentity(i));
    const tokens = await registerOverHttp(client, server.adminToken, identities);
    const kinds: Record<string, (i: number) => Promise<{ status: number }>> = {
      'GET /healthz': (i) => client.request('GET', '/healthz', tokens[i % AGENTS]),
      'GET /v1/inbox/count': (i) => client.request('GET', '/v1/inbox/count', tokens[i % AGENTS]),
      'POST /v1/messages': (i) =>
        client.request('POST', '/v1/messages', tokens[i % AGENTS], {
          to: identities[(i + 1 + (i % (AGENTS - 1))) % AGENTS],
          subject: `Status ${i}`,
          body: BODY,
        }),
    };
    const figures = new Map<string, Array<{ mainUs: number; allUs: number }>>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [kind, request] of Object.entries(kinds)) {
        await offer(WARMUP_SECONDS, request);
        const before = threadCpu(server.pid);
        const { sent, failed } = await offer(SECONDS, request);
        const after = threadCpu(server.pid);
        if (failed > 0) throw new Error(`${kind}: ${failed} of ${sent} requests failed`);
        if (after.size === 0) {
          report.note('server CPU', 'not measured: no /proc/<pid>/task on this system');
          return;
        }
        const spent = threadCpuSince(before, after);
        let all = 0;
        for (const { cpuNs } of spent.values()) all += cpuNs;
        const main = spent.get(String(server.pid))?.cpuNs ?? 0;
        const perRequest = { mainUs: main / 1000 / sent, allUs: all / 1000 / sent };
        figures.set(kind, [...(figures.get(kind) ?? []), perRequest]);
        report.log(
          `  round ${round}, ${kind}: ${sent} requests, server main thread ${Math.round(perRequest.mainUs)} µs/request, ` +
            `all threads ${Math.round(perRequest.allUs)} µs/request`,
        );
      }
    }
    for (const [kind, runs] of figures) {
      report.metric(`${kind}: server main thread CPU per request`, round(median(runs.map((r) => r.mainUs))), 'µs', undefined, {
        runs: runs.map((r) => round(r.mainUs)),
      });
      report.metric(`${kind}: server CPU per request, all threads`, round(median(runs.map((r) => r.allUs))), 'µs', undefined, {
        runs: runs.map((r) => round(r.allUs)),
        coresAtThisRate: round((median(runs.map((r) => r.allUs)) * RATE) / 1e6),
      });
    }
  } finally {
    client.close();
    await server.stop();
  }
});
