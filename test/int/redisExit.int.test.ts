/**
 * A process that could not reach its one Redis exits as soon as connecting has failed. ioredis 6.0.0 arms a 2 s timer
 * (disconnectTimeout, not unref'd) at each disconnect, cleared only when the socket closes afterwards, and
 * connectRedis disconnected a client whose connection had been refused (closed already): a command such as
 * `mailbox projections status` with MAILBOX_REDIS_URL exited 2 s after its error (redisClusterExit.int.test.ts is the
 * same for a Redis Cluster, redisSentinelReconnect.int.test.ts for Sentinel). A live socket keeps ioredis's wait.
 */
import { CONNECTION, exitAfter, exitAfterFailedConnect } from '../support/processExit';
import { freePort, startRedis } from '../support/redisServer';

describe('a process whose Redis cannot be reached', () => {
  it.each([
    ['the views and locks connection', false],
    ['the wake subscriber', true],
  ])('exits as soon as connecting has failed, not 2 s later: %s', async (_what, subscriber) => {
    const url = `redis://127.0.0.1:${await freePort()}`; // nothing listens there
    const { said, exitedAfterMs } = await exitAfterFailedConnect(url, `, subscriber: ${subscriber}`);
    expect(said).toBe('failed: UNAVAILABLE');
    expect(exitedAfterMs).toBeLessThan(1_000);
  });
});

const pausable = process.env.REDIS_URL ? it.skip : it; // the test pauses its own server

describe('a process that ends a live connection whose Redis does not close it', () => {
  pausable(
    "still gives the socket ioredis's 2 s to close before destroying it",
    async () => {
      const redis = await startRedis();
      try {
        // The child pings until a ping gets no answer (the parent has paused Redis at 'ready'), then ends the connection:
        // the socket is live, and Redis, paused, never closes its end.
        const script =
          `const { connectRedis } = ${CONNECTION};` +
          `(async () => {` +
          `  const client = await connectRedis('${redis.url}', { name: 'exit', timeoutMs: 300 });` +
          `  client.on('error', () => {});` +
          `  console.log('ready');` +
          `  while (await client.ping().then(() => true, () => false));` +
          `  client.disconnect();` +
          `  console.log('ended');` +
          `})().catch((error) => console.log('failed: ' + error.message));`;
        const { markedAt, exitedAt, stdout } = await exitAfter('ended', script, (line) => {
          if (line === 'ready') redis.pause!();
        });
        expect(stdout.split('\n').filter(Boolean)).toEqual(['ready', 'ended']);
        expect(exitedAt - markedAt).toBeGreaterThan(1_500);
      } finally {
        await redis.stop();
      }
    },
    60_000,
  );
});
