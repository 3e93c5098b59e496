/**
 * Acceptance (issue 4): a subscriber on `mailbox:wake:@b` gets exactly one wake
 * per message to B, and only after the view shows it. A mailbox on Redis
 * (MAILBOX_REDIS_URL) with @a, @b and @c; the subscriber is a plain Redis
 * client, as any process on the network would be, and checks the inbox through
 * its own connection the moment each wake arrives.
 */
import { Redis } from 'ioredis';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { storeQuery } from '../contract/projectionStore.contract';
import type { MessageWakeEvent } from '../../src/projections/viewChanges';
import type { Mailbox } from '../../src/mailbox';
import type { WakeStreamEvent } from '../../src/application/mailboxQueries';
import { projectAll } from '../contract/projectionStoreLog';
import { allEvents, memoryMailbox, registerAgents } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

describe('Redis wake events', () => {
  let mailbox: Mailbox;
  let subscriber: Redis;
  let publisher: Redis;
  let reader: RedisProjectionStore;
  // Our own server: the production namespace, so the channel is literally mailbox:wake:@b.
  const namespace = process.env.REDIS_URL ? `wake${process.pid}` : 'mailbox';
  const channel = `${namespace}:wake:@b`;

  beforeEach(async () => {
    mailbox = await memoryMailbox({ redisUrl: redis.url, redisNamespace: namespace, redisTimeoutMs: REDIS_TEST_TIMEOUT_MS });
    subscriber = new Redis(redis.url);
    publisher = new Redis(redis.url);
    reader = new RedisProjectionStore(
      await connectRedis(redis.url, { name: 'wake-test-reader', timeoutMs: REDIS_TEST_TIMEOUT_MS }),
      { namespace },
    );
  });
  afterEach(async () => {
    await mailbox.projections.reset();
    await mailbox.close();
    await Promise.all([subscriber.quit(), publisher.quit(), reader.close()]);
  });

  it('one wake per message to B, none for mail to others or suppressed, none on redelivery, each after the view shows it', async () => {
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const wakes: MessageWakeEvent[] = [];
    const checks: Array<Promise<{ listed: boolean }>> = [];
    let marker: (() => void) | null = null;
    await subscriber.subscribe(channel);
    subscriber.on('message', (_channel: string, message: string) => {
      if (message === 'marker') return marker?.();
      const wake = JSON.parse(message) as MessageWakeEvent;
      wakes.push(wake);
      checks.push(
        reader
          .listMessages('@b', storeQuery({ limit: 200 }))
          .then((page) => ({ listed: page.messages.some((m) => m.messageId === wake.messageId) })),
      );
    });
    // Everything published before the marker arrives before it (one channel, one order).
    const flush = () =>
      new Promise<void>((resolve) => {
        marker = resolve;
        void publisher.publish(channel, 'marker');
      });

    const toB: string[] = [];
    for (let i = 0; i < 4; i++) toB.push((await a.send({ to: '@b', subject: `a to b ${i}`, body: 'x' })).messageId);
    await a.send({ to: '@b', subject: 'quiet', body: 'x', wakeSuppressed: true });
    for (let i = 0; i < 3; i++)
      toB.push((await c.send({ to: '@b', subject: `c to b ${i}`, body: 'x', priority: 'high' })).messageId);
    for (let i = 0; i < 3; i++) await a.send({ to: '@c', subject: `a to c ${i}`, body: 'x' });
    toB.push((await a.send({ to: 'AGENT:*', subject: 'all hands', body: 'x' })).messageId);
    await b.send({ to: 'AGENT:*', subject: 'from b to all', body: 'x' }); // no wake to its own sender
    await b.markRead({ messageId: toB[0] });
    toB.push((await c.send({ to: '@b', subject: 'last', body: 'x' })).messageId);
    await flush();

    expect(wakes.map((w) => w.messageId)).toEqual(toB);
    expect(wakes.every((w) => w.recipient === '@b' && w.type === 'wake/message')).toBe(true);
    expect(wakes.map((w) => w.unreadCount)).toEqual([1, 2, 3, 4, 6, 7, 8, 9, 9]); // the quiet one counts too; one read
    expect(wakes.find((w) => w.type === 'wake/message' && w.isBroadcast)).toMatchObject({
      from: '@a',
      to: 'AGENT:*',
      subject: 'all hands',
    });
    const seen = await Promise.all(checks);
    expect(seen.map((check) => check.listed)).toEqual(toB.map(() => true));

    // The whole log redelivered: views unchanged, not one more wake.
    const before = await reader.heartbeat('@b');
    await mailbox.projections.applyBatch(projectAll(await allEvents(mailbox)));
    await flush();
    expect(wakes).toHaveLength(toB.length);
    expect(await reader.heartbeat('@b')).toEqual(before);
  });

  it('the wake stream of the library API (watch) gets sync first, then one wake per message, through Redis', async () => {
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'before watching', body: 'x' });
    const events: WakeStreamEvent[] = [];
    let sentinelSeen!: () => void;
    const sentinel = new Promise<void>((resolve) => (sentinelSeen = resolve));
    const stop = await b.watch((event) => {
      events.push(event);
      if (event.event === 'wake' && event.data.type === 'wake/message' && event.data.subject === 'sentinel') sentinelSeen();
    });
    const sent = [
      (await a.send({ to: '@b', subject: 'one', body: 'x' })).messageId,
      (await a.send({ to: '@c', subject: 'not for b', body: 'x' })).messageId,
      (await a.send({ to: 'AGENT:*', subject: 'two', body: 'x' })).messageId,
      // Wakes arrive in log order: once this one is here, a wrong wake for the message to @c would have arrived before it.
      (await a.send({ to: '@b', subject: 'sentinel', body: 'x' })).messageId,
    ];
    await sentinel;
    await stop();
    expect(events[0]).toEqual({ event: 'sync', data: { unreadCount: 1, byPriority: { low: 0, normal: 1, high: 0 } } });
    expect(
      events.slice(1).map((e) => e.event === 'wake' && e.data.type === 'wake/message' && [e.data.messageId, e.data.unreadCount]),
    ).toEqual([
      [sent[0], 2],
      [sent[2], 3],
      [sent[3], 4],
    ]);
  });
});
