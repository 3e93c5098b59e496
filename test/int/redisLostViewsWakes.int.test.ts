/**
 * Redis lost its data while the mailbox runs (restarted empty): the projector
 * rebuilds the views from the log, and the rebuild is history, not news. No
 * open wake stream is handed a wake for a message the views had held before the
 * loss (they were woken, or read, long ago), so no WakeObserved is written for
 * one; a message that reached the log while Redis was down still wakes its
 * recipient, once. Found by a black-box run: every open stream got a wake for
 * every old message (read ones, with made-up unread counts), and the ledger then
 * recorded them woken after they were read.
 *
 * The projector's applies are held while Redis comes back, until the servers'
 * wake subscribers have resubscribed, so that a wake published by the rebuild
 * could not slip by unseen before them (the test would pass for nothing).
 */
import { Redis } from 'ioredis';
import type { MailboxConfigInput } from '../../src/config';
import type { Mailbox } from '../../src/mailbox';
import { subscribe, type WakeSubscriber } from '../e2e/wakeSubscriber';
import { allEvents, tempDir } from '../support/fixtures';
import { holdApplies } from '../support/heldApplies';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
/** Tests that stop or empty the server need our own one (not a shared REDIS_URL). */
const restartable = process.env.REDIS_URL ? it.skip : it;
let namespaces = 0;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

const servers: TestServer[] = [];
let streams: WakeSubscriber[] = [];
let watcher: Redis | null = null;
afterEach(async () => {
  for (const stream of streams) stream.close();
  streams = [];
  await watcher?.quit().catch(() => undefined);
  watcher = null;
  for (const server of servers.splice(0)) await server.close();
});

interface Setup {
  server: TestServer;
  tokens: Record<string, string>;
  namespace: string;
  old: string[];
}

/** @a, @b, @c; old mail to @b (read) and a broadcast (read by @b, unread by @c): @c's unread count is 1. */
/** A mailbox node on the test's namespace (`config`: a shared log and a node id, for two nodes). */
async function startNode(namespace: string, config: MailboxConfigInput = {}): Promise<TestServer> {
  const server = await startTestServer({ redisUrl: redis.url, redisNamespace: namespace, ...config });
  servers.push(server);
  return server;
}

async function mailboxWithHistory(config: MailboxConfigInput = {}): Promise<Setup> {
  const namespace = `lostwakes${process.pid}n${++namespaces}`;
  const server = await startNode(namespace, config);
  const tokens = await server.register(['@a', '@b', '@c']);
  const old: string[] = [];
  for (const [from, to] of [
    ['@a', '@b'],
    ['@a', '@b'],
    ['@c', '@b'],
    ['@a', 'AGENT:*'],
  ])
    old.push(await send(server, tokens[from], to, `old ${old.length + 1}`));
  const read = await server.call('POST', '/v1/messages/read', { token: tokens['@b'], body: { messageIds: old } });
  expect(read.status).toBe(200);
  await expectUnread(server, tokens, { '@b': 0, '@c': 1 });
  return { server, tokens, namespace, old };
}

async function send(server: TestServer, token: string, to: string, subject: string): Promise<string> {
  const { status, body } = await server.call('POST', '/v1/messages', { token, body: { to, subject, body: 'x' } });
  expect(status).toBe(201);
  return body.messageId as string;
}

async function unread(server: TestServer, token: string): Promise<number | null> {
  const { status, body } = await server.call('GET', '/v1/inbox/count', { token });
  return status === 200 ? (body.unreadCount as number) : null;
}

async function expectUnread(server: TestServer, tokens: Record<string, string>, counts: Record<string, number>) {
  for (const [identity, count] of Object.entries(counts)) expect(await unread(server, tokens[identity])).toBe(count);
}

/** Wake streams for @b and @c, opened after the old mail was read: each starts with its sync. */
async function openStreams({ server, tokens }: Setup): Promise<Record<'@b' | '@c', WakeSubscriber>> {
  const b = await subscribe(server.url, tokens['@b']);
  const c = await subscribe(server.url, tokens['@c']);
  streams.push(b, c);
  for (const stream of [b, c]) await stream.next((event) => event.event === 'sync');
  return { '@b': b, '@c': c };
}

/** Resolves once the server's wake subscriber listens on `identity`'s channel again (after Redis came back). */
async function resubscribed(namespace: string, identities: string[]): Promise<void> {
  watcher ??= new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: null });
  const client = watcher;
  await waitFor(
    async () => {
      for (const identity of identities) {
        const reply = (await client.pubsub('NUMSUB', `${namespace}:wake:${identity}`).catch(() => [])) as unknown[];
        if (Number(reply[1] ?? 0) < 1) return false;
      }
      return true;
    },
    { timeoutMs: 15_000, everyMs: 50, what: `the wake subscriber listening on ${identities.join(', ')} again` },
  );
}

/** Waits for the rebuilt views: @b has read everything, @c has the old broadcast unread, as before the loss. */
async function rebuilt(server: TestServer, tokens: Record<string, string>, extra: Record<string, number> = {}) {
  const expected: Record<string, number> = { '@b': 0, '@c': 1, ...extra };
  await waitFor(
    async () => {
      for (const [identity, count] of Object.entries(expected))
        if ((await unread(server, tokens[identity])) !== count) return false;
      return true;
    },
    { timeoutMs: 20_000, everyMs: 50, what: `the views rebuilt (unread ${JSON.stringify(expected)})` },
  );
}

async function observedWakes(mailbox: Mailbox, messageIds: readonly string[]) {
  return (await allEvents(mailbox)).filter(
    (event) => event.type === 'WakeObserved' && messageIds.includes((event.data as { messageId: string }).messageId),
  );
}

const wakeIds = (stream: WakeSubscriber) => stream.wakes().map((wake: { messageId: string }) => wake.messageId);

describe('Redis restarted empty while the mailbox runs: the rebuild sends no wake again', () => {
  restartable(
    'open streams get no wake for old messages, only for the new one, and no WakeObserved is written for old ones',
    async () => {
      const setup = await mailboxWithHistory();
      const { server, tokens, namespace, old } = setup;
      const open = await openStreams(setup);

      const held = holdApplies(server.mailbox.projections);
      await redis.restartEmpty!();
      await resubscribed(namespace, ['@b', '@c']);
      held.release();
      await rebuilt(server, tokens);

      // The positive signal: a new message after the rebuild wakes its recipient. Wakes of one channel arrive in the
      // order they were published, so a wake for old mail from the rebuild would have come before it.
      const fresh = {
        '@b': await send(server, tokens['@a'], '@b', 'new for b'),
        '@c': await send(server, tokens['@a'], '@c', 'new for c'),
      };
      for (const identity of ['@b', '@c'] as const)
        await open[identity].next((event) => event.event === 'wake' && event.data.messageId === fresh[identity], 10_000);
      expect(wakeIds(open['@b'])).toEqual([fresh['@b']]);
      expect(wakeIds(open['@c'])).toEqual([fresh['@c']]);
      expect(open['@b'].wakes()[0].unreadCount).toBe(1); // the real count, not one made up by the replay
      expect(await observedWakes(server.mailbox, old)).toEqual([]);
      expect(await observedWakes(server.mailbox, Object.values(fresh))).toHaveLength(2);
    },
  );

  restartable('a message that reached the log while Redis was down wakes its recipient once; old ones stay quiet', async () => {
    const setup = await mailboxWithHistory();
    const { server, tokens, namespace, old } = setup;
    const open = await openStreams(setup);

    const held = holdApplies(server.mailbox.projections);
    await redis.kill!();
    // Appended to the log; the views cannot show it yet (the answer says so after its read-your-writes wait).
    const { status, body } = await server.call('POST', '/v1/messages', {
      token: tokens['@a'],
      body: { to: '@b', subject: 'while Redis was down', body: 'x' },
    });
    expect(status).toBe(201);
    const whileDown = body.messageId as string;
    await redis.start!();
    await resubscribed(namespace, ['@b', '@c']);
    held.release();
    await rebuilt(server, tokens, { '@b': 1 });

    await open['@b'].next((event) => event.event === 'wake' && event.data.messageId === whileDown, 10_000);
    const sentinel = await send(server, tokens['@a'], '@c', 'new for c');
    await open['@c'].next((event) => event.event === 'wake' && event.data.messageId === sentinel, 10_000);
    const last = await send(server, tokens['@a'], '@b', 'after the rebuild');
    await open['@b'].next((event) => event.event === 'wake' && event.data.messageId === last, 10_000);
    expect(wakeIds(open['@b'])).toEqual([whileDown, last]);
    expect(wakeIds(open['@c'])).toEqual([sentinel]);
    expect(await observedWakes(server.mailbox, old)).toEqual([]);
    expect(await observedWakes(server.mailbox, [whileDown])).toHaveLength(1);
  });

  restartable(
    'a node that only followed, leading after the loss, rebuilds from the checkpoint it saw without sending old wakes',
    async () => {
      // Two nodes on one log: the first projects, the second follows the shared checkpoint, then leads once the first
      // stops. All it knows of the wakes already sent is the checkpoint it read while following.
      const log = `sqlite:${tempDir('mailbox-lost-wakes-')}/events.sqlite`;
      const setup = await mailboxWithHistory({ eventStoreUrl: log, nodeId: 'first', projectorLeaseMs: 1000 });
      const { server: first, tokens, namespace, old } = setup;
      const second = await startNode(namespace, { eventStoreUrl: log, nodeId: 'second', projectorLeaseMs: 1000 });
      const head = (await second.mailbox.eventStore.headPosition())!.toString();
      await waitFor(() => second.mailbox.runner.getStatus().checkpoint === head, {
        what: 'the second node following to the head',
      });
      expect(second.mailbox.runner.getStatus().leadership.role).toBe('following');
      servers.splice(servers.indexOf(first), 1);
      await first.close(); // a clean stop hands the lease over at once
      await waitFor(() => second.mailbox.runner.getStatus().leadership.role === 'leading', { what: 'the second node leading' });
      const open = await openStreams({ ...setup, server: second });

      const held = holdApplies(second.mailbox.projections);
      await redis.restartEmpty!();
      await resubscribed(namespace, ['@b', '@c']);
      held.release();
      await rebuilt(second, tokens);

      const fresh = await send(second, tokens['@a'], '@b', 'new for b');
      await open['@b'].next((event) => event.event === 'wake' && event.data.messageId === fresh, 10_000);
      const sentinel = await send(second, tokens['@a'], '@c', 'new for c');
      await open['@c'].next((event) => event.event === 'wake' && event.data.messageId === sentinel, 10_000);
      expect(wakeIds(open['@b'])).toEqual([fresh]);
      expect(wakeIds(open['@c'])).toEqual([sentinel]); // the old broadcast included
      expect(await observedWakes(second.mailbox, old)).toEqual([]);
    },
  );
});

describe('Redis lost its data while the mailbox was stopped: the next start rebuilds the views and wakes nobody for old mail', () => {
  restartable('listeners on other nodes hear no wake for old messages, only for the new one', async () => {
    const log = `sqlite:${tempDir('mailbox-lost-wakes-stopped-')}/events.sqlite`;
    const setup = await mailboxWithHistory({ eventStoreUrl: log });
    const { server: before, tokens, namespace } = setup;
    servers.splice(servers.indexOf(before), 1);
    await before.close();
    await redis.restartEmpty!();

    // Another node's listener (a heartbeat daemon, another API node's streams) on every wake channel of the namespace.
    const heard: Array<{ channel: string; messageId: string }> = [];
    watcher = new Redis(redis.url);
    watcher.on('pmessage', (_pattern, channel, message) =>
      heard.push({ channel, messageId: (JSON.parse(message) as { messageId: string }).messageId }),
    );
    await watcher.psubscribe(`${namespace}:wake:*`);

    const after = await startNode(namespace, { eventStoreUrl: log });
    await rebuilt(after, tokens);
    // The positive signal: a message sent now wakes its recipient; a wake from the rebuild would have come before it.
    const fresh = await send(after, tokens['@a'], '@b', 'new for b');
    await waitFor(() => heard.some((wake) => wake.messageId === fresh), { what: 'the wake of the new message' });
    expect(heard).toEqual([{ channel: `${namespace}:wake:@b`, messageId: fresh }]);
    expect(await unread(after, tokens['@b'])).toBe(1);
  });
});
