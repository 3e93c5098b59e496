/**
 * EventStoreDB catch-up read throughput: a log of mailbox events (with a few
 * system events among them, as on a real server) read from the start through
 * the adapter, as the projection runner does at start (readAll pages of 1,000)
 * and as a resubscription does (subscribe(null) until the head). The test
 * double runs in its own process on loopback. Target: >= 20,000 events/s.
 * Figures against a real EventStoreDB could not be taken here.
 */
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { atLeast } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round } from '../lib/stats';
import { nowMs } from '../lib/timing';
import { startDoubleProcess } from './doubleProcess';
import { messageSent } from './events';

const EVENTS = scaled(100_000, 10_000);
const PER_APPEND = 20; // events per append while writing the log (a broadcast-sized batch)
const CONCURRENT = 16;
const PAGE = 1_000;
const RUNS = 3;

async function writeLog(store: EsdbEventStore): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < EVENTS) {
      const start = next;
      next += PER_APPEND;
      const events = Array.from({ length: Math.min(PER_APPEND, EVENTS - start) }, (_unused, i) => messageSent(start + i));
      await store.append(`mailbox-message-${events[0].eventId}`, events, 'no_stream');
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT }, worker));
}

async function readAllPages(store: EsdbEventStore): Promise<number> {
  let after: bigint | null = null;
  let total = 0;
  for (;;) {
    const page = await store.readAll(after, PAGE);
    if (page.length === 0) return total;
    total += page.length;
    after = page[page.length - 1].position;
  }
}

async function subscribeToHead(store: EsdbEventStore): Promise<number> {
  const subscription = store.subscribe(null);
  let total = 0;
  for await (const event of subscription) {
    void event;
    if (++total === EVENTS) break;
  }
  await subscription.close();
  return total;
}

runBench('esdb/catchUp', async (report) => {
  const server = await startDoubleProcess();
  const store = EsdbEventStore.connect(server.url);
  try {
    const started = nowMs();
    await writeLog(store);
    report.note('log', `${EVENTS} MessageSent events (~0.6 KB each) in appends of ${PER_APPEND}, written in ${Math.round(nowMs() - started)} ms`);
    for (const [name, read] of [['readAll pages of 1,000 (projection start-up)', readAllPages], ['subscribe from the start (resubscription)', subscribeToHead]] as const) {
      const rates: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const t0 = nowMs();
        const count = await read(store);
        const ms = nowMs() - t0;
        if (count !== EVENTS) throw new Error(`${name}: read ${count} events, expected ${EVENTS}`);
        rates.push((count / ms) * 1000);
      }
      report.metric(`catch-up, ${name} (median of ${RUNS})`, median(rates), 'events/s', atLeast(20_000), { runs: rates.map(round) });
    }
    report.note('real EventStoreDB', 'not measured: no EventStoreDB server can run on this machine; figures are against the test double');
  } finally {
    await store.close();
    await server.stop();
  }
});
