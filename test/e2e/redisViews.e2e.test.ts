/**
 * The HTTP surface on the production view stack: Redis projections and Redis
 * pub/sub wake events (a real redis-server). Wakes reach the right agent once,
 * after its inbox lists the message; read state stays per recipient; /readyz checks Redis.
 */
import { randomUUID } from 'node:crypto';
import { startRedis, type TestRedis } from '../support/redisServer';
import { allEvents } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let server: TestServer;
let t: Record<string, string>;
const subscribers: WakeSubscriber[] = [];

beforeAll(async () => {
  redis = await startRedis();
  server = await startTestServer({
    redisUrl: redis.url,
    redisNamespace: `e2e-${randomUUID().slice(0, 8)}`,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
  });
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  for (const s of subscribers) s.close();
  await server.close();
  await redis.stop();
});

const send = async (from: string, to: string) => {
  const { status, body } = await server.call('POST', '/v1/messages', {
    token: t[from],
    body: { to, subject: `to ${to}`, body: 'x' },
  });
  expect(status).toBe(201);
  return body.messageId as string;
};

test('readyz checks the Redis projection store', async () => {
  const ready = await server.call('GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body.projectionStore).toMatchObject({ ok: true, backend: 'redis' });
});

test('wakes over Redis pub/sub: one per delivery, none to a broadcast sender, inbox already updated', async () => {
  const [a, b] = [await subscribe(server.url, t['@a']), await subscribe(server.url, t['@b'])];
  subscribers.push(a, b);
  await a.next((e) => e.event === 'sync');
  await b.next((e) => e.event === 'sync');
  const listed: boolean[] = [];
  b.onEvent(async (event) => {
    if (event.event !== 'wake') return;
    const inbox = await server.call('GET', '/v1/messages?status=unread', { token: t['@b'] });
    listed.push(inbox.body.messages.some((m: { messageId: string }) => m.messageId === event.data.messageId));
  });
  const dmToB = await send('@a', '@b');
  const dmToC = await send('@a', '@c');
  const broadcast = await send('@a', 'AGENT:*');
  const [endA, endB] = [await send('@c', '@a'), await send('@c', '@b')];
  await a.next((e) => e.data.messageId === endA);
  await b.next((e) => e.data.messageId === endB);
  expect(b.wakes().map((w) => w.messageId)).toEqual([dmToB, broadcast, endB]);
  expect(a.wakes().map((w) => w.messageId)).toEqual([endA]);
  expect(b.wakes().map((w) => w.messageId)).not.toContain(dmToC);
  expect(listed).toEqual([true, true, true]);
});

test('read state is per recipient, and a non-recipient is refused without writing', async () => {
  const id = await send('@a', 'AGENT:*');
  expect((await server.call('POST', `/v1/messages/${id}/read`, { token: t['@b'] })).status).toBe(200);
  const unreadOf = async (who: string) =>
    (await server.call('GET', '/v1/messages?status=unread', { token: t[who] })).body.messages.map(
      (m: { messageId: string }) => m.messageId,
    );
  expect(await unreadOf('@b')).not.toContain(id);
  expect(await unreadOf('@c')).toContain(id);
  const dm = await send('@a', '@b');
  // Commands' events only: the marks that earlier reads and wakes leave (seen, woken: @b's stream from the test
  // above lists on every wake) are written in the background, a moment later, and landed here at random.
  const commandEvents = async () =>
    (await allEvents(server.mailbox)).filter((event) => event.type !== 'MessagesSeen' && event.type !== 'WakeObserved').length;
  const before = await commandEvents();
  const refused = await server.call('POST', `/v1/messages/${dm}/read`, { token: t['@c'] });
  expect(refused.body.code).toBe('MESSAGE_NOT_FOUND'); // not party to it: answered as if it did not exist
  expect(await commandEvents()).toBe(before);
});
