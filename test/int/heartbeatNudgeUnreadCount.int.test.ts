/**
 * A nudge names the unread count `unreadCount`, as wake events and GET /v1/messages do, beside the `unread` it always
 * carried: a receiver written against the other payloads read `nudge.unreadCount` as undefined. Seen where receivers see
 * it: a subscriber on `mailbox:heartbeat:<identity>` (a real redis-server) and a webhook receiver, for three agents with
 * different counts (the command hook's: heartbeatTargets.int).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { ADMIN_TOKEN, registerAgents } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

const silent = pino({ level: 'silent' });
const AGENTS = ['@b', '@c', '@d'];

let redis: TestRedis;
let mailbox: Mailbox;
let heartbeat: Heartbeat | undefined;
let subscriber: Redis | undefined;
let receiver: http.Server | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  await heartbeat?.stop();
  subscriber?.disconnect();
  if (receiver) await new Promise<void>((resolve) => receiver!.close(() => resolve()));
  await mailbox.close();
});

test('every nudge carries unreadCount, equal to the agent’s true unread count, on the Redis channel and to its webhook', async () => {
  mailbox = await createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silent });

  // A webhook receiver for each agent (its path names it), and a subscriber on each agent's channel.
  const posted: Array<{ path: string; nudge: Record<string, unknown> }> = [];
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      posted.push({ path: request.url!, nudge: JSON.parse(body) });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  subscriber = new Redis(redis.url);
  const published: Array<{ channel: string; nudge: Record<string, unknown> }> = [];
  subscriber.on('message', (channel, text) => published.push({ channel, nudge: JSON.parse(text) }));
  await subscriber.subscribe(...AGENTS.map((identity) => `mailbox:heartbeat:${identity}`));

  heartbeat = await startHeartbeat(mailbox, {
    logger: silent,
    schedule: false,
    settings: {
      idleMs: 0, // @d just read: idle enough all the same
      wakeGraceMs: 0,
      metricsPort: null,
      redisUrl: redis.url,
      webhookSecret: 'webhook-secret-for-tests-0123',
      agents: Object.fromEntries(AGENTS.map((identity) => [identity, { webhook: `${base}/${identity}` }])),
    },
  });

  // @b gets 2, @c 3, @d 1 (one of @d's read: a count that is not what was sent).
  const clients = await registerAgents(mailbox, ['@a', ...AGENTS]);
  const sent = { '@b': 2, '@c': 3, '@d': 2 } as Record<string, number>;
  const ids: string[] = [];
  for (const identity of AGENTS)
    for (let i = 0; i < sent[identity]; i++)
      ids.push((await clients['@a'].send({ to: identity, subject: `${i}`, body: 'x' })).messageId);
  await clients['@d'].markRead({ messageId: ids.at(-1)! });
  const truth: Record<string, number> = {};
  for (const identity of AGENTS) truth[identity] = (await clients[identity].unreadCount()).unreadCount;
  expect(truth).toEqual({ '@b': 2, '@c': 3, '@d': 1 });
  await heartbeat.tick();
  await heartbeat.settled();
  await waitFor(() => published.length >= AGENTS.length, { what: 'a nudge on each channel', timeoutMs: 30_000 });

  const counts = (nudges: Array<Record<string, unknown>>) =>
    Object.fromEntries(
      nudges.map((nudge) => [nudge.identity as string, { unreadCount: nudge.unreadCount, unread: nudge.unread }]),
    );
  const expected = Object.fromEntries(
    AGENTS.map((identity) => [identity, { unreadCount: truth[identity], unread: truth[identity] }]),
  );
  expect(published.map(({ channel, nudge }) => [channel, nudge.identity]).sort()).toEqual(
    AGENTS.map((identity) => [`mailbox:heartbeat:${identity}`, identity]),
  );
  expect(counts(published.map(({ nudge }) => nudge))).toEqual(expected);
  expect(posted.map(({ path: url, nudge }) => [url, nudge.identity]).sort()).toEqual(
    AGENTS.map((identity) => [`/${identity}`, identity]),
  );
  expect(counts(posted.map(({ nudge }) => nudge))).toEqual(expected);
});
