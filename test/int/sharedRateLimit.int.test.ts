/**
 * Acceptance (issue 14, Deliver 4): the per-agent rate limit and the wake-stream cap hold across API
 * nodes when Redis holds them. Three limiters on three connections (as three nodes would have) admit
 * one agent's requests at the configured rate within 10%, where three in-process limiters admit three
 * times it; three nodes' wake-stream registries never hold more than the cap for one agent.
 */
import { RateLimiter } from '../../src/adapters/http/rateLimiter';
import { WakeStreams } from '../../src/adapters/http/wakeStreams';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { RedisSharedLimits } from '../../src/adapters/projections/redisSharedLimits';
import { startRedis, type TestRedis } from '../support/redisServer';

const PER_SECOND = 100;
const BURST = 20;
const WINDOW_MS = 1500;
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

async function sharedNodes(count: number, namespace: string, onSharedFailure?: (error: unknown) => void) {
  const nodes: RateLimiter[] = [];
  for (let i = 0; i < count; i++) {
    const shared = new RedisSharedLimits(await connectRedis(redis.url, { name: `node-${i}` }), new RedisKeys(namespace));
    buckets.push(shared);
    nodes.push(new RateLimiter(PER_SECOND, BURST, undefined, shared, onSharedFailure));
  }
  return nodes;
}

/** Every node asks for `identity` as fast as it can for WINDOW_MS; returns the admitted count and the time taken. */
async function hammer(nodes: RateLimiter[], identity: string) {
  const started = performance.now();
  const admitted = await Promise.all(
    nodes.map(async (node) => {
      let count = 0;
      while (performance.now() - started < WINDOW_MS) {
        try {
          await node.admit(identity);
          count++;
        } catch (error) {
          expect(error).toMatchObject({ code: 'RATE_LIMITED', envelope: { retryAfterSeconds: 1 } });
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      return count;
    }),
  );
  return { admitted: admitted.reduce((a, b) => a + b, 0), elapsedMs: performance.now() - started };
}

it('three nodes on shared buckets admit one agent at the configured rate (within 10%), each agent its own', async () => {
  const nodes = await sharedNodes(3, `rl${process.pid}a`);
  const [{ admitted, elapsedMs }, other] = await Promise.all([hammer(nodes, '@b'), hammer(nodes.slice(0, 1), '@c')]);
  const allowed = BURST + (PER_SECOND * elapsedMs) / 1000;
  expect(admitted).toBeLessThanOrEqual(Math.ceil(allowed * 1.1));
  expect(admitted).toBeGreaterThanOrEqual(Math.floor(allowed * 0.9));
  expect(other.admitted).toBeGreaterThanOrEqual(Math.floor((BURST + (PER_SECOND * other.elapsedMs) / 1000) * 0.9)); // @b's load takes nothing of @c's
});

it('without shared buckets, three nodes admit about three times the rate (what the shared buckets prevent)', async () => {
  const nodes = [0, 1, 2].map(() => new RateLimiter(PER_SECOND, BURST));
  const { admitted, elapsedMs } = await hammer(nodes, '@b');
  expect(admitted).toBeGreaterThan(2 * (BURST + (PER_SECOND * elapsedMs) / 1000));
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
