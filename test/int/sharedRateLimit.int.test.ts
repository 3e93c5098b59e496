/**
 * Acceptance (issue 14, Deliver 4): the per-agent rate limit and the wake-stream cap hold across API
 * nodes when Redis holds them. Three limiters on three connections (as three nodes would have) admit
 * one agent's requests at the configured rate within 10% (time is an injected clock, read by the
 * bucket script instead of Redis's), where three in-process limiters admit three times it; three nodes' wake-stream registries never hold more than the cap for one agent.
 */
import type { SharedLimitsObserver } from '../../src/application/sharedLimits';
import { RateLimiter } from '../../src/adapters/http/rateLimiter';
import { WakeStreams } from '../../src/adapters/http/wakeStreams';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { RedisSharedLimits } from '../../src/adapters/projections/redisSharedLimits';
import { startRedis, type TestRedis } from '../support/redisServer';

const PER_SECOND = 100;
const BURST = 20;
let redis: TestRedis;
let buckets: RedisSharedLimits[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  await Promise.all(buckets.map((b) => b.close()));
  buckets = [];
});

/** An observer that hands each failure of the shared limits to `onFailure`. */
const failuresTo = (onFailure: (error: unknown) => void): SharedLimitsObserver => ({
  unavailable: onFailure,
  answered: () => {},
});

/** Three nodes' limiters on their own connections; the buckets read `clock` (null: Redis's own). */
async function sharedNodes(
  count: number,
  namespace: string,
  onSharedFailure: (error: unknown) => void = () => {},
  clock: (() => number) | null = null,
) {
  const nodes: RateLimiter[] = [];
  for (let i = 0; i < count; i++) {
    const shared = new RedisSharedLimits(
      await connectRedis(redis.url, { name: `node-${i}` }),
      new RedisKeys(namespace),
      undefined,
      clock,
    );
    buckets.push(shared);
    nodes.push(new RateLimiter(PER_SECOND, BURST, clock ?? undefined, shared, failuresTo(onSharedFailure)));
  }
  return nodes;
}

/** Asks every node in turn for `identity` until a whole round is refused; returns how many were admitted. */
async function drain(nodes: RateLimiter[], identity: string): Promise<number> {
  let admitted = 0;
  for (let refusedInRound = 0; refusedInRound < nodes.length;) {
    refusedInRound = 0;
    for (const node of nodes) {
      try {
        await node.admit(identity);
        admitted++;
      } catch (error) {
        expect(error).toMatchObject({ code: 'RATE_LIMITED', envelope: { retryAfterSeconds: 1 } });
        refusedInRound++;
      }
    }
  }
  return admitted;
}

/** The burst, then one simulated second in 100 ms steps, every node asking as much as it can. */
async function oneSecondOfLoad(nodes: RateLimiter[], identity: string, clock: { now: number }): Promise<number> {
  let admitted = await drain(nodes, identity);
  for (let step = 0; step < 10; step++) {
    clock.now += 100;
    admitted += await drain(nodes, identity);
  }
  return admitted;
}

it('three nodes on shared buckets admit one agent at the configured rate (within 10%), each agent its own', async () => {
  const clock = { now: 1_000_000 };
  const nodes = await sharedNodes(3, `rl${process.pid}a`, undefined, () => clock.now);
  const admitted = await oneSecondOfLoad(nodes, '@b', clock);
  const allowed = BURST + PER_SECOND; // the burst and one second's refill
  expect(admitted).toBeGreaterThanOrEqual(allowed * 0.9);
  expect(admitted).toBeLessThanOrEqual(allowed * 1.1);
  expect(await drain(nodes.slice(0, 1), '@c')).toBe(BURST); // @b's load took nothing of @c's bucket
});

it('without shared buckets, three nodes admit about three times the rate (what the shared buckets prevent)', async () => {
  const clock = { now: 1_000_000 };
  const nodes = [0, 1, 2].map(() => new RateLimiter(PER_SECOND, BURST, () => clock.now));
  expect(await oneSecondOfLoad(nodes, '@b', clock)).toBeGreaterThanOrEqual(3 * (BURST + PER_SECOND) * 0.9);
});

it('several tokens at once (a JSON-RPC batch) are taken all or none, alike on the shared and the local bucket', async () => {
  const clock = { now: 1_000_000 };
  const [shared] = await sharedNodes(1, `rl${process.pid}n`, undefined, () => clock.now);
  const local = new RateLimiter(PER_SECOND, BURST, () => clock.now);
  for (const node of [shared, local]) {
    await node.admit('@n', BURST - 3, BURST - 3);
    await expect(node.admit('@n', 4, 5)).rejects.toMatchObject({ code: 'RATE_LIMITED', envelope: { requests: 5 } });
    await node.admit('@n', 3); // the refused four took nothing
    await expect(node.admit('@n')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  }
});

const restartable = process.env.REDIS_URL ? it.skip : it;
restartable(
  'while Redis is down each node limits on its own and says so; the shared bucket is used again once it is back',
  async () => {
    const failures: unknown[] = [];
    const [node] = await sharedNodes(1, `rl${process.pid}b`, (error) => failures.push(error));
    await node.admit('@b');
    expect(failures).toEqual([]);
    await redis.kill!();
    for (let i = 0; i < BURST; i++) await node.admit('@b'); // this process's own bucket: its whole burst
    await expect(node.admit('@b')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(failures.length).toBe(BURST + 1);
    expect(failures[0]).toMatchObject({ code: 'UNAVAILABLE' });
    await redis.start!();
    let back = false;
    for (const until = Date.now() + 10_000; !back && Date.now() < until;) {
      const before = failures.length;
      await node.admit('@b').catch(() => undefined);
      back = failures.length === before;
      if (!back) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(back).toBe(true);
  },
);

restartable(
  'a paused Redis (SIGSTOP) holds one request for its deadline, not each: the rest limit on their own at once, until Redis answers again',
  async () => {
    const failures: unknown[] = [];
    const shared = new RedisSharedLimits(
      await connectRedis(redis.url, { name: 'paused', timeoutMs: 500 }),
      new RedisKeys(`rl${process.pid}p`),
    );
    buckets.push(shared);
    const node = new RateLimiter(
      PER_SECOND,
      BURST,
      undefined,
      shared,
      failuresTo((error) => failures.push(error)),
    );
    const streams = new WakeStreams(
      4,
      shared,
      failuresTo((error) => failures.push(error)),
    );
    await node.admit('@b');
    redis.pause!();
    try {
      await node.admit('@b'); // meets the stall: waits out the deadline, then this node's own bucket
      expect(failures).toEqual([expect.objectContaining({ code: 'UNAVAILABLE' })]);
      const started = performance.now();
      for (let i = 0; i < 5; i++) await node.admit('@b');
      const slot = await streams.reserveAcrossNodes('@b'); // the wake-stream count too: this node's own
      const elapsed = performance.now() - started;
      expect(elapsed).toBeLessThan(250); // half of one deadline for all six (each waited 500 ms before)
      expect(failures).toHaveLength(7); // each said so
      slot.release();
    } finally {
      redis.resume!();
    }
    let back = false;
    for (const until = Date.now() + 10_000; !back && Date.now() < until;) {
      const before = failures.length;
      await node.admit('@b').catch(() => undefined);
      back = failures.length === before;
      if (!back) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(back).toBe(true);
  },
);

describe('the wake-stream cap across nodes', () => {
  let limits: RedisSharedLimits[] = [];
  afterEach(async () => {
    await Promise.all(limits.map((l) => l.close()));
    limits = [];
  });

  /** Three nodes' wake-stream registries on one shared count (a short lease, so a dead node's places come free soon). */
  async function threeNodes(namespace: string, max: number, leaseMs = 30_000) {
    const nodes: WakeStreams[] = [];
    for (let i = 0; i < 3; i++) {
      const shared = new RedisSharedLimits(
        await connectRedis(redis.url, { name: `streams-${i}` }),
        new RedisKeys(namespace),
        leaseMs,
      );
      limits.push(shared);
      nodes.push(new WakeStreams(max, shared));
    }
    return nodes;
  }

  it('an agent holds at most the configured number of streams across three nodes; a closed one frees its place', async () => {
    const [one, two, three] = await threeNodes(`ws${process.pid}a`, 2);
    const first = await one.reserveAcrossNodes('@b');
    await two.reserveAcrossNodes('@b');
    await expect(three.reserveAcrossNodes('@b')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('@b already has 2 open wake streams across the API nodes (the limit is 2)'),
    });
    await three.reserveAcrossNodes('@c'); // another agent's places are its own
    first.release();
    let opened = false;
    for (const until = Date.now() + 5000; !opened && Date.now() < until;) {
      opened = await three.reserveAcrossNodes('@b').then(
        () => true,
        () => false,
      );
    }
    expect(opened).toBe(true);
  });

  it('a node that dies without closing its streams gives their places back once the lease runs out', async () => {
    const [dying, survivor] = await threeNodes(`ws${process.pid}b`, 1, 300);
    await dying.reserveAcrossNodes('@b');
    await limits[0].close(); // the node is gone: no release, no renewal
    await expect(survivor.reserveAcrossNodes('@b')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    let opened = false;
    for (const until = Date.now() + 5000; !opened && Date.now() < until;) {
      opened = await survivor.reserveAcrossNodes('@b').then(
        () => true,
        () => false,
      );
      if (!opened) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(opened).toBe(true);
    limits.shift();
  });
});
