/**
 * Redis away under a running server: every agent's read is refused (503 UNAVAILABLE), and each refusal is a rejection
 * the server records in Redis, which is away too. The server logged a warning with a stack for each of them
 * ('rejections: could not record in Redis'): a swarm of five agents polling made two lines a second per agent for as long
 * as the outage lasted. Now the operator reads one line when the records stop landing and one when they land again,
 * saying how many were not recorded; the agents' answers are as before.
 */
import { recordingLogger } from '../support/recordingLogger';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
let server: TestServer | null = null;
const restartable = process.env.REDIS_URL ? it.skip : it;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await server?.close();
  await redis.stop();
});

const NOT_RECORDED = 'rejections: could not record in Redis';
const RECORDED_AGAIN = 'rejections: recorded in Redis again';

restartable(
  'an outage met by every agent is one log line when rejections stop being recorded and one when they are again',
  async () => {
    const log = recordingLogger();
    server = await startTestServer(
      // The rate limit on (as by default; the test servers turn it off): its shared buckets fall back with Redis away.
      {
        redisUrl: redis.url,
        redisNamespace: `rejoutage${process.pid}`,
        redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
        rateLimitPerSecond: 50,
      },
      { logger: log.logger },
    );
    const tokens = await server.register(['@a', '@b', '@c']);
    const sent = await server.call('POST', '/v1/messages', {
      token: tokens['@a'],
      body: { to: '@b', subject: 'before', body: 'x' },
    });
    expect(sent.status).toBe(201);
    const linesOf = (prefix: string) => log.lines.filter((line) => String(line.msg).startsWith(prefix));

    await redis.kill!();
    const refusals: number[] = [];
    for (let round = 0; round < 4; round++)
      for (const identity of ['@a', '@b', '@c']) {
        const counted = await server.call('GET', '/v1/inbox/count', { token: tokens[identity] });
        expect({ status: counted.status, code: counted.body.code }).toEqual({ status: 503, code: 'UNAVAILABLE' });
        refusals.push(counted.status);
      }
    await waitFor(() => linesOf(NOT_RECORDED).length > 0, { timeoutMs: 15_000, everyMs: 20, what: 'the first record failing' });

    await redis.start!();
    // Redis is back: an agent's next refusal (a message it may not see) is recorded, and the log says the records land.
    await waitFor(
      async () => {
        const missing = await server!.call('GET', '/v1/messages/00000000-0000-8000-8000-000000000000', { token: tokens['@c'] });
        expect(missing.status).toBe(404);
        return linesOf(RECORDED_AGAIN).length > 0;
      },
      { timeoutMs: 30_000, everyMs: 100, what: 'a rejection recorded in Redis again' },
    );

    const failed = linesOf(NOT_RECORDED);
    expect(failed).toHaveLength(1);
    expect(failed[0].level).toBe(40);
    expect(failed[0].msg).toContain('logged once, with a line when they are recorded again');
    // Said by its reason and cause, without a stack, as every loop says a store that does not answer; so is this
    // node's fallback to its own limits, met by the same requests. Both lines carried the error object, stack and all.
    expect(failed[0].err).toBeUndefined();
    expect(failed[0]).toMatchObject({
      reason: expect.stringContaining('Redis (the rejections record) is unavailable'),
      cause: expect.any(String),
    });
    const fallback = linesOf('shared limits unavailable');
    expect(fallback).toHaveLength(1);
    expect(fallback[0].err).toBeUndefined();
    expect(fallback[0]).toMatchObject({ reason: expect.stringContaining('is unavailable'), cause: expect.any(String) });
    const withStack = log.lines.filter((line) => line.level >= 40 && /\n\s+at /.test(JSON.stringify(line).replace(/\\n/g, '\n')));
    expect(withStack.map((line) => line.msg)).toEqual([]);
    const again = linesOf(RECORDED_AGAIN);
    expect(again).toHaveLength(1);
    expect(again[0].unrecorded).toBeGreaterThanOrEqual(refusals.length);
    expect(again[0].msg).toMatch(/after [\d.]+ s in which \d+ were not recorded$/);

    const recorded = await server.call('GET', '/v1/audit/rejections?limit=5', { token: server.adminToken });
    expect(recorded.status).toBe(200);
    expect(recorded.body.rejections.map((rejection: { code: string }) => rejection.code)).toContain('MESSAGE_NOT_FOUND');
  },
);
