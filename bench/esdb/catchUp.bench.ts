/**
 * EventStoreDB catch-up read throughput. A realistic synthetic mailbox log
 * (bench/lib/syntheticLog: agents, direct messages, broadcasts with their
 * deliveries, receipts, archives) is written through the adapter to the test
 * double, which runs in its own process on loopback with the startup system
 * events of a real node in $all. Then it is read from the start:
 *   - readAll in pages of 1,000, as the projection runner does at start-up;
 *   - subscribe(null) until the head, as a resubscription from scratch does;
 *   - for reference, the raw client reading $all in pages of 1,000 (no adapter).
 * Each is the median of RUNS runs after one warm-up read. Client CPU per event
 * is reported too, since the figure depends on how busy the machine is.
 * Target: >= 20,000 events/s. Figures against a real EventStoreDB could not be
 * taken here (no server can run on this machine).
 */
import os from 'node:os';
import { EventStoreDBClient, START, type Position } from '@eventstore/db-client';
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { atLeast } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round } from '../lib/stats';
import { writeSyntheticLog } from '../lib/syntheticLog';
import { nowMs } from '../lib/timing';
import { startDoubleProcess } from './doubleProcess';

const EVENTS = scaled(100_000, 10_000);
const PAGE = 1_000;
const RUNS = 5;

async function adapterPages(store: EsdbEventStore): Promise<number> {
  let after: bigint | null = null;
  let total = 0;
  for (;;) {
    const page = await store.readAll(after, PAGE);
    if (page.length === 0) return total;
    total += page.length;
    after = page[page.length - 1].position;
  }
}

async function adapterSubscription(store: EsdbEventStore, expected: number): Promise<number> {
  const subscription = store.subscribe(null);
  let total = 0;
  for await (const event of subscription) {
    void event;
    if (++total === expected) break;
  }
  await subscription.close();
  return total;
}

/** The raw client over $all in pages, counting mailbox events (system events skipped, as the adapter does). */
async function rawPages(client: EventStoreDBClient): Promise<number> {
  let from: Position | typeof START = START;
  let total = 0;
  for (;;) {
    let seen = 0;
    let last: Position | undefined;
    for await (const resolved of client.readAll({ fromPosition: from, maxCount: PAGE + 1 })) {
      seen++;
      const event = resolved.event!;
      if (last === undefined && from !== START && event.position!.commit === from.commit) continue;
      last = event.position;
      if (event.streamId.startsWith('mailbox-')) total++;
    }
    if (seen < PAGE + 1 || !last) return total;
    from = last;
  }
}

async function measure(read: () => Promise<number>, expected: number) {
  await read(); // warm-up: JIT, connection, server caches
  const rates: number[] = [];
  const cpuPerEvent: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const cpu = process.cpuUsage();
    const started = nowMs();
    const count = await read();
    const ms = nowMs() - started;
    const used = process.cpuUsage(cpu);
    if (count !== expected) throw new Error(`read ${count} events, expected ${expected}`);
    rates.push((count / ms) * 1000);
    cpuPerEvent.push((used.user + used.system) / count);
  }
  return { rate: median(rates), rates: rates.map(round), cpuMicrosPerEvent: round(median(cpuPerEvent)) };
}

runBench('esdb/catchUp', async (report) => {
  const server = await startDoubleProcess();
  const store = EsdbEventStore.connect(server.url);
  const raw = EventStoreDBClient.connectionString(server.url);
  try {
    const started = nowMs();
    const log = await writeSyntheticLog(store, {
      agents: 100,
      events: EVENTS,
      readShare: 0.25,
      archiveShare: 0.1,
      broadcastEvery: 5_000,
    });
    report.note(
      'log',
      `${log.events} events (${log.directMessages} direct messages, ${log.broadcasts} broadcasts to 99, ` +
        `${log.reads} reads, ${log.archives} archives) written through the adapter in ${Math.round(nowMs() - started)} ms`,
    );

    const pages = await measure(() => adapterPages(store), log.events);
    report.metric(`catch-up, adapter readAll pages of ${PAGE} (projection start-up)`, pages.rate, 'events/s', atLeast(20_000), {
      runs: pages.rates,
      clientCpuMicrosPerEvent: pages.cpuMicrosPerEvent,
    });
    const subscribed = await measure(() => adapterSubscription(store, log.events), log.events);
    report.metric('catch-up, adapter subscribe from the start', subscribed.rate, 'events/s', atLeast(20_000), {
      runs: subscribed.rates,
      clientCpuMicrosPerEvent: subscribed.cpuMicrosPerEvent,
    });
    const baseline = await measure(() => rawPages(raw), log.events);
    report.metric(`reference: raw client readAll pages of ${PAGE} (no adapter)`, baseline.rate, 'events/s', undefined, {
      runs: baseline.rates,
      clientCpuMicrosPerEvent: baseline.cpuMicrosPerEvent,
    });
    report.note('machine load (1 min average, cores)', `${os.loadavg()[0].toFixed(1)} on ${os.cpus().length}`);
    report.note(
      'real EventStoreDB',
      'not measured: no EventStoreDB server can run on this machine; figures are against the test double',
    );
  } finally {
    await raw.dispose();
    await store.close();
    await server.stop();
  }
});
