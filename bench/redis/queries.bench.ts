/**
 * Reads of the Redis views, on a redis-server of its own, through the
 * projection store port (what every API node does per request):
 * - unread count of an agent (1,000 agents with mail); target p99 <= 1 ms;
 * - an inbox page of 50 for an agent with 100,000 messages; target p99 <= 2 ms
 *   (first page, unread page, a page deep behind a cursor, and a filtered page).
 * Reference: redis-benchmark with one client and no pipelining (GET, EVALSHA of
 * a one-SET script): the round trip every figure here contains.
 */
import type { ListQuery } from '../../src/projections/listQuery';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import type { Priority } from '../../src/commands/messageFields';
import type { ProjectedEvent, ViewChange } from '../../src/projections/viewChanges';
import { agentIdentity } from '../lib/mailbox';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { round, summarize } from '../lib/stats';
import { nowMs, sampleMs } from '../lib/timing';
import { loadTrivialScript, redisBenchmark, startBenchRedis } from './redisServer';

const AGENTS = 1000;
const PER_AGENT = scaled(100, 10);
const TARGET_MESSAGES = scaled(100_000, 10_000);
const SENDERS = 100;
const SAMPLES = scaled(20_000, 2000);
const WARMUP = scaled(2000, 200);
const TARGET = '@target';
const PRIORITIES: Priority[] = ['normal', 'normal', 'high', 'low'];

/** One direct message as the projector sees it; every fifth is read right away. */
function message(position: bigint, index: number, from: string, to: string): ProjectedEvent[] {
  const sentAt = new Date(Date.UTC(2025, 0, 1) + index * 10).toISOString();
  const messageId = `m-${to}-${index}`;
  const entry = {
    messageId,
    from,
    to,
    subject: `message ${index}`,
    priority: PRIORITIES[index % 4],
    threadId: messageId,
    tags: index % 3 === 0 ? ['ops'] : [],
    sentAt,
  };
  const changes: ViewChange[] = [
    { kind: 'messageRecorded', summary: { ...entry, inReplyTo: null, task: null, recipientCount: 1 } },
    { kind: 'outboxAdded', sender: from, entry },
    { kind: 'inboxAdded', recipient: to, entry, isBroadcast: false, wakeSuppressed: false },
  ];
  const events: ProjectedEvent[] = [{ position, at: sentAt, changes }];
  if (index % 5 === 0) {
    events.push({
      position: position + 1n,
      at: sentAt,
      changes: [{ kind: 'receiptRead', recipient: to, messageId, readAt: sentAt, priority: entry.priority }],
    });
  }
  return events;
}

runBench('redis/queries', async (report) => {
  const redis = await startBenchRedis();
  try {
    // 0. The round trip of this Redis, one client, no pipelining.
    const sha = await loadTrivialScript(redis.url);
    const [get] = await redisBenchmark(redis.port, ['-c', '1', '-n', '20000', '-t', 'get']);
    const [evalsha] = await redisBenchmark(redis.port, ['-c', '1', '-n', '20000', 'evalsha', sha, '1', 'key:__rand_int__', 'v']);
    report.note('redis-benchmark (1 client, no pipelining)', {
      getP50Ms: get.p50Ms,
      evalshaP50Ms: evalsha.p50Ms,
      getPerSecond: get.requestsPerSecond,
    });

    // 1. The views: AGENTS agents with PER_AGENT messages each, and TARGET with TARGET_MESSAGES, built as a rebuild does.
    const store = new RedisProjectionStore(await connectRedis(redis.url, { name: 'bench-queries' }), { namespace: 'queries' });
    const generation = await store.generations().create();
    const started = nowMs();
    let position = 1n;
    let batch: ProjectedEvent[] = [];
    const add = async (events: ProjectedEvent[]) => {
      batch.push(...events);
      position += BigInt(events.length);
      if (batch.length >= 1000) {
        await generation.applyBatch(batch);
        batch = [];
      }
    };
    for (let i = 0; i < AGENTS * PER_AGENT; i++)
      await add(message(position, i, agentIdentity(i % SENDERS), agentIdentity(i % AGENTS)));
    for (let i = 0; i < TARGET_MESSAGES; i++) await add(message(position, i, agentIdentity(i % SENDERS), TARGET));
    await generation.applyBatch(batch);
    await store.generations().activate(generation, store.keys.defaultPrefix, true);
    const unread = await store.unreadCount(TARGET);
    report.note(
      'views',
      `${AGENTS} agents x ${PER_AGENT} messages, ${TARGET} with ${TARGET_MESSAGES} (${unread.unread} unread); ` +
        `built in ${Math.round(nowMs() - started)} ms`,
    );
    if (unread.unread !== TARGET_MESSAGES - TARGET_MESSAGES / 5) throw new Error(`${TARGET} has ${unread.unread} unread`);

    // 2. Unread counts.
    const count = (i: number) => store.unreadCount(agentIdentity((i * 7919) % AGENTS));
    await sampleMs(WARMUP, count);
    const counts = summarize(await sampleMs(SAMPLES, count));
    report.metric('unread count p50', counts.p50, 'ms', undefined, { ratioToGetP50: round(counts.p50 / get.p50Ms) });
    report.metric('unread count p99', counts.p99, 'ms', atMost(1), { p90: round(counts.p90), max: round(counts.max) });

    // 3. Pages of 50 in the big inbox.
    const page = (query: Partial<ListQuery>) => store.listMessages(TARGET, { box: 'inbox', limit: 50, before: null, ...query });
    const first = await page({});
    if (first.messages.length !== 50 || first.nextBefore === null) throw new Error('expected a full first page');
    const bounds: bigint[] = [];
    let before: bigint | null = first.nextBefore;
    for (let i = 0; i < 200 && before !== null; i++) {
      const next = await page({ before });
      bounds.push(before);
      before = next.nextBefore;
    }
    const cases: Array<[string, (i: number) => Promise<unknown>, number | undefined, number]> = [
      ['inbox page of 50 (newest)', () => page({}), 2, SAMPLES],
      ['inbox page of 50, unread only', () => page({ status: 'unread' }), 2, SAMPLES],
      ['inbox page of 50 behind a cursor', (i) => page({ before: bounds[i % bounds.length] }), 2, SAMPLES],
      [
        'inbox page of 50, from filter (1 sender in 100: scans ~5,000 entries)',
        (i) => page({ from: agentIdentity(i % SENDERS) }),
        undefined,
        Math.max(200, SAMPLES / 20),
      ],
    ];
    for (const [name, run, target, samples] of cases) {
      await sampleMs(Math.min(WARMUP, samples), run);
      const summary = summarize(await sampleMs(samples, run));
      report.latency(name, summary, target === undefined ? undefined : atMost(target), {
        ratioToEvalshaP50: round(summary.p50 / evalsha.p50Ms),
      });
    }
    await store.reset();
    await store.close();
  } finally {
    await redis.stop();
  }
});
