/**
 * The cost of open wake streams: 1,000 agents each hold GET /v1/wake; the
 * server process's memory (after a full GC: RSS, and heap + external) is
 * compared before and after they connect. Then one broadcast reaches all 1,000: time from the send to each
 * subscriber's wake. Target: 1,000 subscribers cost < 100 MB.
 */
import { performance } from 'node:perf_hooks';
import { agentIdentity } from '../lib/mailbox';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { summarize } from '../lib/stats';
import { startBenchServer } from './benchServer';
import { JsonClient, openWakeStream, registerOverHttp } from './httpLoad';

const SUBSCRIBERS = scaled(1_000, 100);
const CONNECT_CONCURRENCY = 50;
const BROADCASTS = 5;

runBench('http/sseSubscribers', async (report) => {
  const server = await startBenchServer();
  const client = new JsonClient(server.url, 16);
  const streams: Array<{ close(): void }> = [];
  try {
    const identities = Array.from({ length: SUBSCRIBERS }, (_unused, i) => agentIdentity(i));
    const registrationStarted = performance.now();
    const [senderToken] = await registerOverHttp(client, server.adminToken, ['@broadcaster']);
    const tokens = await registerOverHttp(client, server.adminToken, identities);
    report.note(
      'setup',
      `${SUBSCRIBERS} agents registered over HTTP in ${Math.round(performance.now() - registrationStarted)} ms; ` +
        `one wake stream each, opened ${CONNECT_CONCURRENCY} at a time; then ${BROADCASTS} broadcasts`,
    );

    const before = await server.memory();
    const arrivals = new Map<string, number[]>();
    const onWake = ({ messageId, at }: { messageId: string; at: number }) => {
      const list = arrivals.get(messageId) ?? [];
      list.push(at);
      arrivals.set(messageId, list);
    };
    for (let i = 0; i < tokens.length; i += CONNECT_CONCURRENCY) {
      streams.push(
        ...(await Promise.all(
          tokens.slice(i, i + CONNECT_CONCURRENCY).map((token) => openWakeStream(server.url, token, onWake)),
        )),
      );
    }
    const after = await server.memory();
    if (after.openWakeStreams !== SUBSCRIBERS)
      throw new Error(`server holds ${after.openWakeStreams} streams, expected ${SUBSCRIBERS}`);
    // RSS can stay flat when the heap had room already; the heap + external growth shows what the streams hold.
    const rssGrowthMb = after.rssMb - before.rssMb;
    const heapGrowthMb = after.heapUsedMb - before.heapUsedMb + (after.externalMb - before.externalMb);
    const costMb = Math.max(rssGrowthMb, heapGrowthMb);
    report.metric(
      `memory cost of ${SUBSCRIBERS} open wake streams (larger of RSS and heap+external growth)`,
      costMb,
      'MB',
      atMost(SUBSCRIBERS === 1_000 ? 100 : 10),
      {
        rssGrowthMb,
        heapGrowthMb,
        rssBeforeMb: before.rssMb,
        rssAfterMb: after.rssMb,
        heapUsedBeforeMb: before.heapUsedMb,
        heapUsedAfterMb: after.heapUsedMb,
        perStreamKb: Math.round((costMb * 1024) / SUBSCRIBERS),
      },
    );

    const fanOut: number[] = [];
    for (let b = 0; b < BROADCASTS; b++) {
      const startedAt = performance.now();
      const { status, body } = await client.request<{ messageId: string; recipients: string[] }>(
        'POST',
        '/v1/messages',
        senderToken,
        { to: 'AGENT:*', subject: `all hands ${b}`, body: 'now' },
      );
      if (status !== 201 || body.recipients.length !== SUBSCRIBERS)
        throw new Error(`broadcast: HTTP ${status}, ${body.recipients?.length} recipients`);
      const deadline = performance.now() + 10_000;
      while ((arrivals.get(body.messageId)?.length ?? 0) < SUBSCRIBERS && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const got = arrivals.get(body.messageId) ?? [];
      if (got.length !== SUBSCRIBERS) throw new Error(`broadcast ${b}: ${got.length} of ${SUBSCRIBERS} subscribers woken`);
      fanOut.push(...got.map((at) => at - startedAt));
    }
    report.latency(`broadcast send start -> wake received, each of ${SUBSCRIBERS} subscribers`, summarize(fanOut));
  } finally {
    for (const stream of streams) stream.close();
    client.close();
    await server.stop();
  }
});
