/**
 * Projection throughput into Redis, on a redis-server of its own:
 * - rebuild (blue/green, `mailbox projections rebuild`): a SQLite log of
 *   200,000 events into a new generation; target >= 100,000 events/s (issue 9);
 * - live: the projection runner following a log that is appended as fast as
 *   possible, wakes published to 1,000 subscribed channels; target >= 10,000 events/s;
 *   and one event per apply (the latency-bound worst case), for information;
 * - a broadcast to 1,000 agents: views updated and 1,000 wakes received; target <= 100 ms.
 * Reference: redis-benchmark on the same server (pipelined SET and EVALSHA of a one-SET script).
 */
import 'reflect-metadata'; // before any module that uses tsyringe decorators
import path from 'node:path';
import pino from 'pino';
import { Redis } from 'ioredis';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { RedisWakeBus } from '../../src/adapters/projections/redisWakeBus';
import type { EventStore } from '../../src/events/eventStore';
import { ProjectionRunner } from '../../src/projections/projectionRunner';
import { rebuildProjections } from '../../src/projections/rebuild';
import type { ProjectedEvent, ViewChange } from '../../src/projections/viewChanges';
import { cpuMs, mainThreadCpuMs } from '../lib/cpu';
import { agentIdentity } from '../lib/mailbox';
import { atLeast, atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round, summarize } from '../lib/stats';
import { writeSyntheticLog, type SyntheticLogSummary } from '../lib/syntheticLog';
import { nowMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';
import { loadTrivialScript, redisBenchmark, startBenchRedis, type BenchRedis } from './redisServer';

const AGENTS = 1000;
const REBUILD_EVENTS = scaled(200_000, 20_000);
const LIVE_EVENTS = scaled(100_000, 10_000);
const SINGLE_EVENTS = scaled(3000, 500);
const BROADCAST_ROUNDS = scaled(30, 5);
const RUNS = 3;
const silent = pino({ level: 'silent' });

const openStore = async (redis: BenchRedis, namespace: string) =>
  new RedisProjectionStore(await connectRedis(redis.url, { name: `bench-${namespace}` }), { namespace });

async function openWakeBus(redis: BenchRedis, store: RedisProjectionStore) {
  return new RedisWakeBus(
    await connectRedis(redis.url, { name: 'bench-publisher' }),
    () => connectRedis(redis.url, { name: 'bench-subscriber' }),
    store.keys,
    silent,
  );
}

/** Unread mail the synthetic log implies: every delivery starts unread, each receipt removes one. */
const expectedUnread = (log: SyntheticLogSummary) => log.directMessages + log.broadcasts * (AGENTS - 1) - log.reads;

async function totalUnread(store: RedisProjectionStore): Promise<number> {
  return (await store.allHeartbeats()).reduce((sum, h) => sum + h.unread, 0);
}

/** CPU seconds redis-server has used (INFO cpu), to tell its share of a run from ours. */
async function redisCpuMs(redis: BenchRedis): Promise<number> {
  const client = new Redis(redis.url);
  const info = await client.info('cpu');
  await client.quit();
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
}

async function usedMemoryMb(redis: BenchRedis): Promise<number> {
  const client = new Redis(redis.url);
  const info = await client.info('memory');
  await client.quit();
  return round(Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0) / 2 ** 20);
}

/** A broadcast as the projector sees it: the MessageSent event, then one delivery per recipient. */
function broadcastEvents(first: bigint, round: number, from: string, recipients: readonly string[]): ProjectedEvent[] {
  const at = new Date(Date.UTC(2025, 0, 1) + round * 1000).toISOString();
  const messageId = `broadcast-${round}`;
  const entry = {
    messageId,
    from,
    to: 'AGENT:*',
    subject: `broadcast ${round}`,
    priority: 'normal' as const,
    threadId: messageId,
    tags: [],
    sentAt: at,
  };
  const sent: ViewChange[] = [
    { kind: 'messageRecorded', summary: { ...entry, inReplyTo: null, task: null, recipientCount: recipients.length } },
    { kind: 'outboxAdded', sender: from, entry },
  ];
  return [
    { position: first, at, changes: sent },
    ...recipients.map((recipient, i) => ({
      position: first + BigInt(i + 1),
      at,
      changes: [{ kind: 'inboxAdded', recipient, entry, isBroadcast: true, wakeSuppressed: false } as ViewChange],
    })),
  ];
}

runBench('redis/projection', async (report) => {
  const redis = await startBenchRedis();
  try {
    // 0. What this Redis does on its own.
    const sha = await loadTrivialScript(redis.url);
    const [set] = await redisBenchmark(redis.port, ['-n', '300000', '-P', '16', '-t', 'set']);
    const [evalsha] = await redisBenchmark(redis.port, [
      '-n',
      '300000',
      '-P',
      '16',
      'evalsha',
      sha,
      '1',
      'key:__rand_int__',
      'v',
    ]);
    report.note('redis-benchmark (pipelined x16, 50 clients)', {
      setPerSecond: set.requestsPerSecond,
      evalshaPerSecond: evalsha.requestsPerSecond,
    });

    await withTmpDir(async (dir) => {
      // 1. Rebuild from a SQLite log into a new generation.
      const file = path.join(dir, 'events.sqlite');
      const writer = SqliteEventStore.open(file);
      const log = await writeSyntheticLog(writer, {
        agents: AGENTS,
        events: REBUILD_EVENTS,
        readShare: 0.25,
        archiveShare: 0.1,
        broadcastEvery: 20_000,
      });
      await writer.close();
      report.note('rebuild log', {
        events: log.events,
        directMessages: log.directMessages,
        broadcasts: log.broadcasts,
        reads: log.reads,
      });
      const events = SqliteEventStore.open(file);
      const store = await openStore(redis, 'rebuild');
      const rates: number[] = [];
      const cpu = { node: [] as number[], mainThread: [] as number[], redis: [] as number[] };
      for (let run = 0; run < RUNS; run++) {
        const [nodeBefore, mainBefore, redisBefore] = [cpuMs(), mainThreadCpuMs(), await redisCpuMs(redis)];
        const started = nowMs();
        const result = await rebuildProjections(events, store.generations(), { settleMs: 0, dropPreviousAfterMs: 0 });
        const ms = nowMs() - started;
        const perEvent = (spentMs: number) => round((spentMs * 1000) / result.events);
        cpu.node.push(perEvent(cpuMs() - nodeBefore));
        if (mainBefore !== null) cpu.mainThread.push(perEvent(mainThreadCpuMs()! - mainBefore));
        cpu.redis.push(perEvent((await redisCpuMs(redis)) - redisBefore));
        if (result.events !== log.events) throw new Error(`rebuilt ${result.events} events, the log has ${log.events}`);
        const unread = await totalUnread(store);
        if (unread !== expectedUnread(log))
          throw new Error(`views count ${unread} unread, the log implies ${expectedUnread(log)}`);
        rates.push((result.events / ms) * 1000);
        report.log(
          `  rebuild run ${run + 1}: ${Math.round(ms)} ms, ${Math.round(rates[run])} events/s into ${result.generation}`,
        );
      }
      const rebuildRate = median(rates);
      // CPU per event of each side: with a core each (and nothing else running) the slower side sets the rate.
      const nodeUs = median(cpu.mainThread.length ? cpu.mainThread : cpu.node);
      const redisUs = median(cpu.redis);
      report.metric(`rebuild into Redis (${log.events} events, SQLite log)`, rebuildRate, 'events/s', atLeast(100_000), {
        runs: rates.map(Math.round),
        redisUsedMemoryMb: await usedMemoryMb(redis),
        ratioToPipelinedSet: round(rebuildRate / set.requestsPerSecond),
        ratioToPipelinedEvalsha: round(rebuildRate / evalsha.requestsPerSecond),
        cpuUsPerEvent: { nodeProcess: median(cpu.node), nodeMainThread: nodeUs, redis: redisUs },
        coresBusy: round(((median(cpu.node) + redisUs) * rebuildRate) / 1e6),
        eventsPerSecondWithACoreEach: Math.round(1e6 / Math.max(nodeUs, redisUs)),
      });
      await store.reset();
      await store.close();
      await events.close();
    });

    // 2. Live: the runner follows a log appended as fast as possible; wakes go to 1,000 subscribed channels.
    const liveStore = await openStore(redis, 'live');
    const wakeBus = await openWakeBus(redis, liveStore);
    const liveLog: EventStore = new MemoryEventStore();
    const runner = new ProjectionRunner(liveLog, liveStore, silent);
    await runner.start();
    let wakes = 0;
    for (let i = 0; i < AGENTS; i++) await wakeBus.subscribe(agentIdentity(i), () => wakes++);
    const source = new MemoryEventStore();
    const summary = await writeSyntheticLog(source, {
      agents: AGENTS,
      events: LIVE_EVENTS,
      readShare: 0.25,
      archiveShare: 0.1,
      broadcastEvery: 20_000,
    });
    const toAppend = await source.readAll(null, 10_000_000);
    const liveStarted = nowMs();
    for (let i = 0; i < toAppend.length;) {
      let j = i + 1;
      while (j < toAppend.length && toAppend[j].streamName === toAppend[i].streamName) j++;
      await liveLog.append(toAppend[i].streamName, toAppend.slice(i, j), 'any');
      i = j;
    }
    if (!(await runner.waitFor(BigInt(toAppend.length), 120_000))) throw new Error('the live runner did not catch up');
    const liveMs = nowMs() - liveStarted;
    const expectedWakes = summary.directMessages + summary.broadcasts * (AGENTS - 1);
    const deadline = nowMs() + 10_000;
    while (wakes < expectedWakes && nowMs() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    if (wakes !== expectedWakes) throw new Error(`received ${wakes} wakes, the log implies ${expectedWakes}`);
    const liveRate = (toAppend.length / liveMs) * 1000;
    report.metric(
      `live projection (${toAppend.length} events, wakes to ${AGENTS} subscribed channels)`,
      liveRate,
      'events/s',
      atLeast(10_000),
      { ms: Math.round(liveMs), wakes, ratioToPipelinedEvalsha: round(liveRate / evalsha.requestsPerSecond) },
    );
    await runner.stop();

    // One event per apply: the round trip is the limit.
    const base = BigInt(toAppend.length);
    const single: number[] = [];
    for (let i = 1; i <= SINGLE_EVENTS; i++) {
      const entry = {
        messageId: `single-${i}`,
        from: agentIdentity(i % AGENTS),
        to: agentIdentity((i + 1) % AGENTS),
        subject: 's',
        priority: 'normal' as const,
        threadId: `single-${i}`,
        tags: [],
        sentAt: new Date(Date.UTC(2025, 1, 1) + i).toISOString(),
      };
      const started = nowMs();
      await liveStore.applyBatch([
        {
          position: base + BigInt(i),
          at: entry.sentAt,
          changes: [
            { kind: 'messageRecorded', summary: { ...entry, inReplyTo: null, task: null, recipientCount: 1 } },
            { kind: 'outboxAdded', sender: entry.from, entry },
            { kind: 'inboxAdded', recipient: entry.to, entry, isBroadcast: false, wakeSuppressed: false },
          ],
        },
      ]);
      single.push(nowMs() - started);
    }
    const singleSummary = summarize(single);
    report.metric(
      'live, one event per apply (round-trip bound)',
      (single.length / single.reduce((a, b) => a + b, 0)) * 1000,
      'events/s',
      undefined,
      { p50Ms: round(singleSummary.p50), p99Ms: round(singleSummary.p99) },
    );
    await wakeBus.close();
    await liveStore.reset();
    await liveStore.close();

    // 3. A broadcast to 1,000 agents: views updated, then all 1,000 wakes received.
    const store = await openStore(redis, 'broadcast');
    const bus = await openWakeBus(redis, store);
    const agents = Array.from({ length: AGENTS + 1 }, (_unused, i) => agentIdentity(i));
    await store.applyBatch(
      agents.map((identity, i) => ({
        position: BigInt(i + 1),
        at: '2025-01-01T00:00:00.000Z',
        changes: [{ kind: 'agentRegistered', identity, role: 'agent', registeredAt: '2025-01-01T00:00:00.000Z' } as ViewChange],
      })),
    );
    let received = 0;
    let allReceived: (() => void) | null = null;
    for (const identity of agents.slice(1)) {
      await bus.subscribe(identity, () => {
        if (++received === AGENTS) allReceived?.();
      });
    }
    let next = BigInt(agents.length + 1);
    const viewsMs: number[] = [];
    const wakesMs: number[] = [];
    for (let round_ = 0; round_ < BROADCAST_ROUNDS + 2; round_++) {
      const batch = broadcastEvents(next, round_, agents[0], agents.slice(1));
      next += BigInt(batch.length);
      received = 0;
      const wakesIn = new Promise<void>((resolve) => (allReceived = resolve));
      const started = nowMs();
      await store.applyBatch(batch);
      const views = nowMs() - started;
      await wakesIn;
      if (round_ >= 2) {
        // two warm-up rounds
        viewsMs.push(views);
        wakesMs.push(nowMs() - started);
      }
    }
    const unread = await store.unreadCount(agents[AGENTS]);
    if (unread.unread !== BROADCAST_ROUNDS + 2)
      throw new Error(`recipient has ${unread.unread} unread, expected ${BROADCAST_ROUNDS + 2}`);
    report.latency('broadcast to 1000 agents: views updated', summarize(viewsMs));
    report.latency('broadcast to 1000 agents: views updated + 1000 wakes received', summarize(wakesMs), atMost(100));
    await bus.close();
    await store.reset();
    await store.close();
  } finally {
    await redis.stop();
  }
});
