/**
 * EventStoreDB adapter overhead per append. Against the test double in its own
 * process on loopback, the same single-event append (a MessageSent of ~600
 * bytes to a new message stream with expected revision 'no_stream', which is
 * what every direct send does) is timed two ways, on two connections to the
 * same server, alternating one by one so that drift and GC hit both alike:
 *   raw:     client.appendToStream(stream, eventData, { expectedRevision: NO_STREAM })
 *   adapter: EsdbEventStore.append(stream, [event], 'no_stream')  (mapping, options, deadline timer)
 * Overhead = adapter p50 - raw p50. Target: <= 0.5 ms. Because that difference
 * of two noisy ~0.5 ms figures is itself noisy, the adapter's own work is also
 * timed alone: the same adapter with the client's appendToStream answering at
 * once (no I/O), so only mapping, options, deadline timer and promise plumbing
 * remain. Figures against a real
 * EventStoreDB could not be taken here (no server on this machine).
 */
import { EventStoreDBClient, NO_STREAM } from '@eventstore/db-client';
import type { CompatClient } from '../../src/adapters/eventstore/esdbClientCompat';
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { toEventData } from '../../src/adapters/eventstore/esdbEvents';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { round, summarize } from '../lib/stats';
import { sampleMs } from '../lib/timing';
import { startDoubleProcess } from './doubleProcess';
import { messageSent } from './events';

const SAMPLES = scaled(5_000, 500); // per side
const WARMUP = scaled(1_000, 200);

/** The adapter over a copy of its client whose appendToStream resolves immediately: the adapter's own cost per append. */
async function adapterAlone(store: EsdbEventStore): Promise<number[]> {
  const compat = (store as unknown as { compat: CompatClient }).compat;
  const ack = { success: true, nextExpectedRevision: 0n, position: { commit: 4096n, prepare: 4096n } };
  const stubbed = Object.assign(Object.create(Object.getPrototypeOf(compat)) as CompatClient, compat, {
    client: { appendToStream: async () => ack },
  });
  const alone = new EsdbEventStore(stubbed, 5000);
  let n = 0;
  const append = () => {
    const event = messageSent(n++);
    return alone.append(`mailbox-message-${event.eventId}`, [event], 'no_stream');
  };
  await sampleMs(WARMUP * 5, append);
  return sampleMs(SAMPLES * 4, append);
}

runBench('esdb/appendOverhead', async (report) => {
  const server = await startDoubleProcess();
  const raw = EventStoreDBClient.connectionString(server.url);
  const store = EsdbEventStore.connect(server.url);
  try {
    let n = 0;
    const rawAppend = () => {
      const event = messageSent(n++);
      return raw.appendToStream(`mailbox-message-raw-${event.eventId}`, toEventData(event), { expectedRevision: NO_STREAM });
    };
    const adapterAppend = () => {
      const event = messageSent(n++);
      return store.append(`mailbox-message-${event.eventId}`, [event], 'no_stream');
    };
    await sampleMs(WARMUP, rawAppend);
    await sampleMs(WARMUP, adapterAppend);
    const rawMs: number[] = [];
    const adapterMs: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      rawMs.push((await sampleMs(1, rawAppend))[0]);
      adapterMs.push((await sampleMs(1, adapterAppend))[0]);
    }
    const rawSummary = summarize(rawMs);
    const adapterSummary = summarize(adapterMs);
    report.note(
      'method',
      `${SAMPLES} single-event appends per side, alternating one by one, after ${WARMUP} warm-up each; ` +
        'test double in a child process on loopback; appends go through BatchAppend as with EventStoreDB 21+',
    );
    report.latency('raw client append', rawSummary);
    report.latency('adapter append', adapterSummary);
    report.metric('adapter overhead per append (p50 adapter - p50 raw)', adapterSummary.p50 - rawSummary.p50, 'ms', atMost(0.5), {
      p99Difference: round(adapterSummary.p99 - rawSummary.p99),
    });
    report.latency('adapter alone (client answers at once, no I/O)', summarize(await adapterAlone(store)));
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
