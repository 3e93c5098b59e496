/**
 * While Redis stalls (SIGSTOP), each API node limits on its own; its log says so once when that starts (what it
 * limits how meanwhile) and once when the shared limits answer again (SIGCONT), not once per request: an outage met
 * by every request of a swarm would flood the log for as long as it lasts. And the first request to meet the stall is
 * answered within one MAILBOX_REDIS_TIMEOUT_MS, as the next ones are.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { startRedis, type TestRedis } from '../support/redisServer';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

interface LogLine {
  level: number;
  msg: string;
}

/** The server's Redis deadline (MAILBOX_REDIS_TIMEOUT_MS): the last test's margins are its multiples. */
const DEADLINE_MS = 1500;
const WARN = 40;
const INFO = 30;
const lines: LogLine[] = [];
let redis: TestRedis;
let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis();
  if (!redis.pause) throw new Error('this test needs its own redis-server (unset REDIS_URL)');
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  server = await startTestServer(
    {
      redisUrl: redis.url,
      redisNamespace: `limitslog-${randomUUID().slice(0, 8)}`,
      redisTimeoutMs: DEADLINE_MS,
      rateLimitPerSecond: 50,
      rateLimitBurst: 200,
      maxWakeStreamsPerAgent: 16,
    },
    { logger },
  );
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  await server?.close();
  await redis?.stop();
});

/** The lines about the shared limits, by level. */
const sharedLimitLines = (level: number) => lines.filter((line) => line.level === level && /^shared /.test(line.msg));

const count = (token: string) => server.call('GET', '/v1/inbox/count', { token, timeoutMs: 10_000 });

test('a stalled Redis: one warning when this node starts limiting on its own, one line when the shared limits are back', async () => {
  for (const identity of ['@a', '@b', '@c']) expect((await count(t[identity])).status).toBe(200);
  expect(sharedLimitLines(WARN)).toEqual([]);

  redis.pause!();
  try {
    // Each request was limited (on this node alone) before it was answered: 503, the views being in Redis too.
    for (let round = 0; round < 4; round += 1)
      for (const identity of ['@a', '@b', '@c']) expect((await count(t[identity])).status).toBe(503);
  } finally {
    redis.resume!();
  }
  expect(sharedLimitLines(WARN).map((line) => line.msg)).toEqual([
    expect.stringMatching(
      /until they answer again, this node limits each agent on its own, 50 requests\/s \(burst 200\) and 16 open wake streams/,
    ),
  ]);
  expect(sharedLimitLines(INFO)).toEqual([]);

  // Back: requests are answered again, and the first one the shared limits answer says so.
  const until = Date.now() + 15_000;
  while (sharedLimitLines(INFO).length === 0 && Date.now() < until) {
    await count(t['@a']);
    if (sharedLimitLines(INFO).length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(sharedLimitLines(INFO).map((line) => line.msg)).toEqual([
    expect.stringMatching(/^shared limits back: the rate limit and the wake stream count are shared by the API nodes again/),
  ]);
  for (const identity of ['@a', '@b', '@c']) expect((await count(t[identity])).status).toBe(200);
  expect(sharedLimitLines(WARN)).toHaveLength(1);
  expect(sharedLimitLines(INFO)).toHaveLength(1);
});

// It waited one deadline for the rate limiter's shared bucket, then as long again for its read of the views (two in all,
// later requests one): the outage the first call found was known only to the shared limits.
test('a stalled Redis: the first request is answered 503 within one deadline, and the next ones too', async () => {
  for (const identity of ['@a', '@b', '@c']) expect((await count(t[identity])).status).toBe(200);
  redis.pause!();
  const answers: Array<{ status: number; ms: number }> = [];
  try {
    for (const identity of ['@a', '@b', '@c']) {
      const started = performance.now();
      const { status } = await count(t[identity]);
      answers.push({ status, ms: performance.now() - started });
    }
  } finally {
    redis.resume!();
  }
  expect(answers.map(({ status }) => status)).toEqual([503, 503, 503]);
  // One deadline, with a generous margin for a loaded machine: two are at least 2 x DEADLINE_MS.
  for (const { ms } of answers) expect(ms).toBeLessThan(1.8 * DEADLINE_MS);
});

// The node learnt that Redis answers again only from its next ping, and paused 250 ms before each: every request met in
// that time (the shared limits, then the read of the views) was still refused 503 by a Redis that answered.
test('a stalled Redis that answers again: once it has answered what the node asked, the next request is served', async () => {
  // Served again after the stall of the test before.
  await waitFor(async () => (await count(t['@a'])).status === 200, { timeoutMs: 15_000, what: 'a request served' });
  const own = new Redis(redis.url, { lazyConnect: true });
  await own.connect();
  redis.pause!();
  try {
    expect((await count(t['@a'])).status).toBe(503); // met the stall: the node now knows Redis is silent
  } finally {
    redis.resume!();
  }
  try {
    expect(await own.ping()).toBe('PONG'); // Redis answers again
    // And has answered all the node's limits connection sent it (nothing waits in its buffers): its replies are in the
    // node's socket before this one is in ours.
    await waitFor(async () => / qbuf=0 .* obl=0 oll=0 /.test(await limitsClient(own)), { what: 'the limits answered' });
    for (const identity of ['@a', '@b', '@c']) expect([identity, (await count(t[identity])).status]).toEqual([identity, 200]);
  } finally {
    own.disconnect();
  }
});

/** The node's shared-limits connection as CLIENT LIST shows it ('' when there is none). */
const limitsClient = async (own: Redis): Promise<string> =>
  String(await own.client('LIST'))
    .split('\n')
    .find((line) => / name=mailbox-shared-limits /.test(line)) ?? '';
