/**
 * On a Redis Cluster the server's wake subscriber is one pub/sub connection to one node (a PUBLISH reaches
 * every node). When that node stops answering (SIGSTOP: a frozen VM, its sockets stay open) and the cluster
 * fails over without it, the open wake streams must not stay open and silent: the wakes published meanwhile
 * reached nobody, so once the subscriber is on another node each open stream gets a `sync` counting them
 * (as after a reconnect on one node, test/e2e/wakeResubscribe), then wakes again; the log says it in two lines.
 * Found in a failover drill: ioredis's cluster subscriber moved to another node without a word, ~15 wakes
 * per stream were lost and no stream was told; with a stopped replica it stayed on the stopped node.
 *
 * The sender's, the recipients' and the global hash tags are all served by other masters, so the send is
 * applied (and its wakes published) while the subscriber's node is stopped.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { freePort } from '../support/redisServer';
import { startRedisCluster, type TestRedisCluster } from '../support/redisTopologies';
import { startTestServer, type TestServer } from '../support/httpServer';
import { recordingLogger, type RecordingLogger } from '../support/recordingLogger';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

const AGENTS = ['@a0', '@a1', '@a2', '@a3', '@a4', '@a5', '@a6', '@a7'];

let cluster: TestRedisCluster;
let server: TestServer | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await server?.close();
  await cluster?.stop();
});

/** The port of the node the server's wake subscriber is connected to. */
async function subscriberNode(): Promise<number> {
  for (const port of cluster.ports) {
    const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    node.on('error', () => {});
    try {
      await node.connect();
      if (String(await node.client('LIST', 'TYPE', 'PUBSUB')).includes('mailbox-wake-subscriber')) return port;
    } catch {
      // a node that is down holds no subscriber
    } finally {
      node.disconnect();
    }
  }
  throw new Error('no node holds the wake subscriber');
}

test('the wake subscriber’s node stops answering and the cluster fails over: each open stream gets a sync counting what it missed, then wakes again', async () => {
  let log: RecordingLogger;
  let paused: number;
  let names: string[];
  let t: Record<string, string>;
  const watchers: Record<string, WakeSubscriber> = {};
  // The subscriber's node is picked at random: a new server until it is not the master of the global tag.
  for (let attempt = 1; ; attempt++) {
    log = recordingLogger('info');
    const keys = new RedisKeys(`wcf-${randomUUID().slice(0, 8)}`);
    server = await startTestServer(
      { redisUrl: cluster.url, redisNamespace: keys.namespace, redisTimeoutMs: 500 },
      { logger: log.logger },
    );
    t = await server.register(AGENTS);
    const first = await subscribe(server.url, t['@a0']);
    await first.next((e) => e.event === 'sync');
    paused = await subscriberNode();
    first.close();
    const elsewhere: string[] = [];
    for (const agent of AGENTS) if ((await cluster.masterOf(keys.wakeStreams(agent))) !== paused) elsewhere.push(agent);
    if ((await cluster.masterOf(keys.active)) !== paused && elsewhere.length >= 3) {
      names = elsewhere.slice(0, 3);
      break;
    }
    await server.close();
    server = undefined;
    if (attempt === 6) throw new Error('the wake subscriber sat on the global tag’s master six times');
  }
  const [sender, ...recipients] = names;
  const send = (subject: string) =>
    server!.call('POST', '/v1/messages', { token: t[sender], body: { to: recipients, subject, body: 'x' } });
  for (const who of recipients) {
    watchers[who] = await subscribe(server!.url, t[who]);
    await watchers[who].next((e) => e.event === 'sync');
  }
  try {
    const before = await send('before');
    for (const who of recipients)
      await watchers[who].next((e) => e.event === 'wake' && e.data.messageId === before.body.messageId);

    await cluster.pauseNode(paused);
    const gap = await send('while the subscriber’s node is stopped');
    expect(gap.status).toBe(201);

    // Told: the wake itself, or a sync that counts it (2 unread: before and this one).
    for (const who of recipients)
      await watchers[who].next(
        (e) =>
          (e.event === 'wake' && e.data.messageId === gap.body.messageId) || (e.event === 'sync' && e.data.unreadCount === 2),
        15_000,
      );
    const after = await send('after');
    for (const who of recipients)
      await watchers[who].next((e) => e.event === 'wake' && e.data.messageId === after.body.messageId);
    for (const who of recipients)
      expect((await server!.call('GET', '/v1/inbox/count', { token: t[who] })).body.unreadCount).toBe(3);
    const wakeLines = log!.messages().filter((m) => /wake subscriber/.test(m));
    expect(wakeLines).toEqual([
      expect.stringMatching(/^wake subscriber lost Redis/),
      expect.stringMatching(/^wake subscriber back on Redis/),
    ]);
  } finally {
    for (const watcher of Object.values(watchers)) watcher.close();
    cluster.resumeNode(paused);
  }
}, 60_000);

// Found by CI: with one master killed, a new wake subscriber failed to open ('Redis Cluster ... is unreachable (connect
// ECONNREFUSED ...)') whenever its first node, picked at random, was the dead one (1 in 6 in the Cluster contract's kill test).
test('a wake subscriber opens on a cluster whose nodes listed first are down: it passes over them to one that answers', async () => {
  const dead = new Set<number>();
  while (dead.size < 7) dead.add(await freePort()); // nothing listens on them
  const url = `redis-cluster://${[...dead, cluster.ports[0]].map((port) => `127.0.0.1:${port}`).join(',')}`;
  const subscriber = await connectRedis(url, { name: 'mailbox-wake-subscriber', subscriber: true, timeoutMs: 500 });
  try {
    const heard = new Promise<string>((resolve) =>
      subscriber.on('message', (_channel: string, message: string) => resolve(message)),
    );
    await subscriber.subscribe('wcf-probe');
    const publisher = new Redis({ port: cluster.ports[1], host: '127.0.0.1', maxRetriesPerRequest: 0 });
    // Published again until heard: a publish reaches the subscriber's node over the cluster bus, which may lag on a
    // loaded machine (one publish, once, was never heard within the test's 30 s in a full run at load 10).
    const republish = setInterval(() => void publisher.publish('wcf-probe', 'hello').catch(() => undefined), 200);
    try {
      await publisher.publish('wcf-probe', 'hello');
      expect(await heard).toBe('hello');
    } finally {
      clearInterval(republish);
      publisher.disconnect();
    }
  } finally {
    await closeRedis(subscriber);
  }
});
