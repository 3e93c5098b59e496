/**
 * Wake latency over HTTP on loopback: 64 concurrent clients send direct
 * messages to agents that hold GET /v1/wake streams; for each message, the
 * time from the send's 201 reaching its client to the wake reaching the
 * recipient's stream (0 when the wake came first: the server publishes wakes
 * as soon as the view holds the message, which is before it acknowledges).
 * Also reported: the signed difference (wake minus acknowledgement) and send
 * start -> wake received. Targets: p50 <= 5 ms, p99 <= 25 ms.
 */
import { performance } from 'node:perf_hooks';
import { agentIdentity } from '../lib/mailbox';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { round, summarize } from '../lib/stats';
import { closedLoop } from '../lib/timing';
import { startBenchServer } from './benchServer';
import { JsonClient, openWakeStream, registerOverHttp } from './httpLoad';

const CLIENTS = 64;
const SUBSCRIBERS = 64;
const SENDS = scaled(10_000, 1_000);
const WARMUP = scaled(1_000, 100);
const DRAIN_TIMEOUT_MS = 10_000;
const PACED_RATE = 500; // sends/s, well below saturation even on a busy 2-core machine
const PACED_SENDS = scaled(5_000, 500);

runBench('http/wakeLatency', async (report) => {
  report.note(
    'setup',
    `${SUBSCRIBERS} agents each holding a wake stream, ${CLIENTS} other agents sending direct messages to them ` +
      `concurrently (closed loop, keep-alive), ${SENDS} sends after ${WARMUP} warm-up; server in its own process`,
  );
  const server = await startBenchServer();
  const client = new JsonClient(server.url, CLIENTS);
  const streams: Array<{ close(): void }> = [];
  try {
    const senders = Array.from({ length: CLIENTS }, (_unused, i) => agentIdentity(i));
    const recipients = Array.from({ length: SUBSCRIBERS }, (_unused, i) => agentIdentity(CLIENTS + i));
    const senderTokens = await registerOverHttp(client, server.adminToken, senders);
    const recipientTokens = await registerOverHttp(client, server.adminToken, recipients);

    const wakeAt = new Map<string, number>();
    let wakes = 0;
    for (const token of recipientTokens) {
      streams.push(
        await openWakeStream(server.url, token, ({ messageId, at }) => {
          wakeAt.set(messageId, at);
          wakes++;
        }),
      );
    }
    const sends: Array<{ messageId: string; startedAt: number; ackAt: number }> = [];
    const send = (record: boolean) => async (index: number, worker: number) => {
      const startedAt = performance.now();
      const { status, body } = await client.request<{ messageId: string }>('POST', '/v1/messages', senderTokens[worker], {
        to: recipients[(worker + index) % SUBSCRIBERS],
        subject: `ping ${index}`,
        body: 'wake up',
      });
      if (status !== 201) throw new Error(`send ${index}: HTTP ${status} ${JSON.stringify(body)}`);
      if (record) sends.push({ messageId: body.messageId, startedAt, ackAt: performance.now() });
    };
    await closedLoop(WARMUP, CLIENTS, send(false));
    const { elapsedMs } = await closedLoop(SENDS, CLIENTS, send(true));

    const deadline = performance.now() + DRAIN_TIMEOUT_MS;
    while (wakes < WARMUP + SENDS && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const missing = sends.filter((s) => !wakeAt.has(s.messageId)).length;
    if (missing > 0) throw new Error(`${missing} of ${SENDS} sends produced no wake within ${DRAIN_TIMEOUT_MS} ms`);

    const afterAck = sends.map((s) => Math.max(0, wakeAt.get(s.messageId)! - s.ackAt));
    const endToEnd = summarize(sends.map((s) => wakeAt.get(s.messageId)! - s.startedAt));
    const beforeAck = sends.filter((s) => wakeAt.get(s.messageId)! <= s.ackAt).length;
    report.latency('wake latency (send acknowledged -> wake received)', summarize(afterAck), atMost(25));
    const ackSummary = summarize(afterAck);
    report.metric('wake latency p50 vs target', ackSummary.p50, 'ms', atMost(5));
    report.latency(
      'wake received relative to the acknowledgement (negative: before it)',
      summarize(sends.map((s) => wakeAt.get(s.messageId)! - s.ackAt)),
    );
    report.latency('send start -> wake received', endToEnd);
    report.note('wakes that arrived before the send was acknowledged', `${round((beforeAck / SENDS) * 100)}%`);
    report.note('send rate during the measurement', `${Math.round((SENDS / elapsedMs) * 1000)} sends/s`);

    // Paced (open loop, below saturation): what an agent sees when the mailbox is busy but not overloaded.
    const paced: Array<{ messageId: string; startedAt: number }> = [];
    const pacedStart = performance.now();
    const inFlight: Array<Promise<void>> = [];
    for (let index = 0; index < PACED_SENDS; index++) {
      const due = pacedStart + (index * 1000) / PACED_RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const startedAt = performance.now();
      inFlight.push(
        client
          .request<{ messageId: string }>('POST', '/v1/messages', senderTokens[index % CLIENTS], {
            to: recipients[index % SUBSCRIBERS],
            subject: `paced ${index}`,
            body: 'wake up',
          })
          .then(({ status, body }) => {
            if (status !== 201) throw new Error(`paced send ${index}: HTTP ${status}`);
            paced.push({ messageId: body.messageId, startedAt });
          }),
      );
    }
    await Promise.all(inFlight);
    const pacedDeadline = performance.now() + DRAIN_TIMEOUT_MS;
    while (paced.some((p) => !wakeAt.has(p.messageId)) && performance.now() < pacedDeadline)
      await new Promise((r) => setTimeout(r, 10));
    if (paced.some((p) => !wakeAt.has(p.messageId))) throw new Error('a paced send produced no wake');
    report.latency(
      `send start -> wake received, paced at ${PACED_RATE} sends/s`,
      summarize(paced.map((p) => wakeAt.get(p.messageId)! - p.startedAt)),
    );
  } finally {
    for (const stream of streams) stream.close();
    client.close();
    await server.stop();
  }
});
