/**
 * The server's wake subscriber says a Redis outage once, not at every reconnect attempt (ioredis tries again
 * every 500 ms at most: a warning each time buried the log for as long as the outage lasted), then says when it is
 * back; a later outage is said again. Real redis-server, stopped and started again on its port.
 */
import { once } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { RedisWakeBus } from '../../src/adapters/projections/redisWakeBus';
import { startRedis, type TestRedis } from '../support/redisServer';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

it('an outage is one warning however many reconnect attempts it takes; back is said; the next outage is said again', async () => {
  const lines: Array<{ level: number; msg: string }> = [];
  const seen: Array<() => void> = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        for (const check of seen) check();
        done();
      },
    }),
  );
  /** Resolves once `count` log lines pass `test` (the positive signal each step waits for). */
  const logged = (test: (line: { level: number; msg: string }) => boolean, count = 1) =>
    new Promise<void>((resolve) => {
      const check = () => lines.filter(test).length >= count && resolve();
      seen.push(check);
      check();
    });
  const warnings = () => lines.filter((line) => line.level === 40 && /lost Redis/.test(line.msg));
  const attempts = (line: { msg: string }) => line.msg === 'wake subscriber: reconnecting to Redis';
  const back = (line: { msg: string }) => /back on Redis/.test(line.msg);

  const publisher = await connectRedis(redis.url, { name: 'outage-log-publisher' });
  const bus = new RedisWakeBus(
    publisher,
    () => connectRedis(redis.url, { name: 'outage-log-subscriber' }),
    new RedisKeys('ol'),
    logger,
  );
  try {
    await bus.subscribe('@b', () => undefined);

    await redis.kill!();
    await logged(attempts, 3); // three attempts after the first one, all while Redis is down
    expect(warnings()).toHaveLength(1);

    await redis.start!();
    await logged(back);
    await redis.kill!();
    await logged((line) => line.level === 40 && /lost Redis/.test(line.msg), 2);
    expect(warnings()).toHaveLength(2);
    await redis.start!();
    await logged(back, 2);
    // The publisher reconnects on its own schedule: closed mid-connect, its connect timer outlived the test by a second.
    if (publisher.status !== 'ready') await once(publisher, 'ready');
  } finally {
    await bus.close();
    publisher.disconnect();
  }
});
