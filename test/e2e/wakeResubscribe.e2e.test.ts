/**
 * The server's wake subscriber (one Redis pub/sub connection) loses Redis and
 * reconnects: every wake published meanwhile reached nobody. Open wake streams
 * stay open across it, so their clients never reconnect and never get the
 * `sync` a reconnect would give them: a message delivered in that gap must still
 * reach each open stream, as a `sync` counting it once the subscription is whole
 * again (wakes are hints, the unread view is the authority).
 *
 * The gap is made exact: the pub/sub connection is killed (CLIENT KILL TYPE pubsub,
 * as Redis does to a subscriber past its output buffer limit) while no new
 * connection is accepted (maxclients), so the subscriber stays away while the
 * projector applies a send and publishes its wakes on its open connection.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../support/redisServer';
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

let redis: TestRedis;
let admin: Redis;
let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis();
  if (!redis.kill) throw new Error('this test needs its own redis-server (unset REDIS_URL): it changes maxclients');
  admin = new Redis(redis.url);
  server = await startTestServer({ redisUrl: redis.url, redisNamespace: `resub-${randomUUID().slice(0, 8)}` });
  t = await server.register(['@a', '@b', '@c', '@s']);
});
afterAll(async () => {
  await server.close();
  admin.disconnect();
  await redis.stop();
});

async function wakeSubscriberConnections(): Promise<number> {
  const list = (await admin.client('LIST', 'TYPE', 'PUBSUB')) as string;
  return list.split('\n').filter((line) => line.includes('name=')).length;
}

test('a send while the wake subscriber is away from Redis reaches each open stream once it is back: a sync counting it, no wake twice', async () => {
  const watchers: Record<string, WakeSubscriber> = {};
  for (const who of ['@a', '@b', '@c']) {
    watchers[who] = await subscribe(server.url, t[who]);
    await watchers[who].next((e) => e.event === 'sync');
  }
  const before = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: 'AGENT:*', subject: 'before', body: 'x' },
  });
  expect(before.status).toBe(201);
  for (const who of ['@a', '@b', '@c'])
    await watchers[who].next((e) => e.event === 'wake' && e.data.messageId === before.body.messageId);

  const clients = Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))![1]);
  await admin.config('SET', 'maxclients', String(clients - 1)); // the killed subscriber cannot come back yet
  let gap: { status: number; body: any };
  try {
    expect(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')).toBeGreaterThanOrEqual(1);
    gap = await server.call('POST', '/v1/messages', {
      token: t['@s'],
      body: { to: ['@a', '@b', '@c'], subject: 'in the gap', body: 'x' },
    });
    expect(gap.status).toBe(201);
    expect(gap.body.warnings).toBeUndefined(); // applied (and its wakes published) while the subscriber was away
    expect(await wakeSubscriberConnections()).toBe(0);
  } finally {
    await admin.config('SET', 'maxclients', '10000');
  }
  const until = Date.now() + 10_000;
  while ((await wakeSubscriberConnections()) === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await wakeSubscriberConnections()).toBe(1); // subscribed again on its own
  const after = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: 'AGENT:*', subject: 'after', body: 'x' },
  });
  expect(after.status).toBe(201);

  for (const who of ['@a', '@b', '@c']) {
    const watcher = watchers[who];
    const resync = await watcher.next((e) => e.event === 'sync' && e.data.unreadCount >= 2, 10_000);
    expect(resync.data.byPriority.normal).toBe(resync.data.unreadCount);
    await watcher.next((e) => e.event === 'wake' && e.data.messageId === after.body.messageId, 10_000);
    const inbox = await server.call('GET', '/v1/messages', { token: t[who] });
    expect(inbox.body.messages.map((m: { subject: string }) => m.subject)).toEqual(['after', 'in the gap', 'before']);
    const ids = watcher.wakes().map((w) => w.messageId);
    expect(new Set(ids).size).toBe(ids.length); // nothing repeated
    watcher.close();
  }
});

test('Redis killed and back empty under open streams: the resync waits for the rebuilt views, never says the mail is gone', async () => {
  const watchers: Record<string, WakeSubscriber> = {};
  const counts: Record<string, number> = {};
  for (const who of ['@a', '@b', '@c']) {
    counts[who] = (await server.call('GET', '/v1/inbox/count', { token: t[who] })).body.unread;
    expect(counts[who]).toBeGreaterThan(0);
    watchers[who] = await subscribe(server.url, t[who]);
    await watchers[who].next((e) => e.event === 'sync');
  }
  await redis.kill!();
  await redis.start!(); // empty: the views are rebuilt from the log
  for (const who of ['@a', '@b', '@c']) {
    const syncs = () => watchers[who].events.filter((e) => e.event === 'sync');
    await watchers[who].next(() => syncs().length === 2, 15_000);
    expect(syncs()[1].data.unreadCount).toBe(counts[who]);
    expect((await server.call('GET', '/v1/inbox/count', { token: t[who] })).body.unread).toBe(counts[who]);
    watchers[who].close();
  }
});
