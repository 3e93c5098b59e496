/**
 * GET /v1/wake over real HTTP with three agents: `sync` first, exactly one wake
 * per delivered message, none for someone else's DM, none to the sender of its
 * own broadcast, and the inbox already lists the message when the wake arrives.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

let server: TestServer;
let tokens: Record<string, string>;
const subscribers: WakeSubscriber[] = [];

beforeAll(async () => {
  server = await startTestServer();
  tokens = await server.register(['@a', '@b', '@c']);
});
afterAll(async () => {
  for (const s of subscribers) s.close();
  await server.close();
});

async function watch(identity: string) {
  const subscriber = await subscribe(server.url, tokens[identity]);
  subscribers.push(subscriber);
  return subscriber;
}

const send = async (from: string, to: string, subject: string) => {
  const { status, body } = await server.call('POST', '/v1/messages', { token: tokens[from], body: { to, subject, body: '...' } });
  expect(status).toBe(201);
  return body.messageId as string;
};

test('sync first, then exactly the wakes each agent is owed, each after its inbox lists the message', async () => {
  await send('@a', '@b', 'before subscribing'); // counted by sync, never woken
  const [a, b, c] = [await watch('@a'), await watch('@b'), await watch('@c')];
  for (const s of [a, b, c]) await s.next((e) => e.event === 'sync');
  expect(b.events[0]).toEqual({ event: 'sync', data: { unreadCount: 1, byPriority: { low: 0, normal: 1, high: 0 } } });
  expect(a.events[0].data.unreadCount).toBe(0);

  // When B is woken, B lists its unread mail at once: the message must already be there.
  const listedOnWake: Record<string, boolean> = {};
  b.onEvent(async (event) => {
    if (event.event !== 'wake') return;
    const inbox = await server.call('GET', '/v1/messages?status=unread', { token: tokens['@b'] });
    listedOnWake[event.data.messageId] = inbox.body.messages.some(
      (m: { messageId: string }) => m.messageId === event.data.messageId,
    );
  });

  const dmToB = await send('@a', '@b', 'for b');
  const dmToC = await send('@a', '@c', 'for c');
  const broadcastByA = await send('@a', 'AGENT:*', 'from a to all');
  const broadcastByB = await send('@b', 'AGENT:*', 'from b to all');
  // Sentinels: wakes arrive in log order, so once each sentinel is in, nothing earlier is still on its way.
  const sentinels = {
    '@a': await send('@c', '@a', 'end'),
    '@b': await send('@c', '@b', 'end'),
    '@c': await send('@a', '@c', 'end'),
  };
  await a.next((e) => e.data.messageId === sentinels['@a']);
  await b.next((e) => e.data.messageId === sentinels['@b']);
  await c.next((e) => e.data.messageId === sentinels['@c']);

  expect(b.wakes().map((w) => w.messageId)).toEqual([dmToB, broadcastByA, sentinels['@b']]);
  expect(a.wakes().map((w) => w.messageId)).toEqual([broadcastByB, sentinels['@a']]);
  expect(c.wakes().map((w) => w.messageId)).toEqual([dmToC, broadcastByA, broadcastByB, sentinels['@c']]);
  expect(b.wakes()[0]).toMatchObject({
    type: 'wake/message',
    messageId: dmToB,
    from: '@a',
    to: '@b',
    recipient: '@b',
    subject: 'for b',
    priority: 'normal',
    isBroadcast: false,
    unreadCount: 2,
  });
  expect(b.wakes()[1]).toMatchObject({ isBroadcast: true, to: 'AGENT:*', from: '@a' });
  expect(listedOnWake).toEqual({ [dmToB]: true, [broadcastByA]: true, [sentinels['@b']]: true });
});

test('a wake stream is refused to a missing token, an admin and an auditor, with the envelope', async () => {
  const { '@auditor': auditor } = await server.register(['@auditor'], 'auditor');
  const before = await server.eventCount();
  const anonymous = await server.call('GET', '/v1/wake');
  expect(anonymous.status).toBe(401);
  expect(anonymous.body.code).toBe('UNAUTHENTICATED');
  for (const token of [server.adminToken, auditor]) {
    const refused = await server.call('GET', '/v1/wake', { token });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
  }
  expect(await server.eventCount()).toBe(before);
});

test('shutdown ends open wake streams cleanly', async () => {
  const own = await startTestServer();
  const { '@z': z } = await own.register(['@z']);
  const subscriber = await subscribe(own.url, z);
  await subscriber.next((e) => e.event === 'sync');
  await own.close();
  await subscriber.ended;
  expect(subscriber.events.map((e) => e.event)).toEqual(['sync', 'shutdown']);
});

test('heartbeat comments keep an idle stream open', async () => {
  const own = await startTestServer({ sseHeartbeatMs: 30 });
  const { '@h': h } = await own.register(['@h']);
  const abort = new AbortController();
  const response = await fetch(`${own.url}/v1/wake`, { headers: { authorization: `Bearer ${h}` }, signal: abort.signal });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.getReader();
  let text = '';
  while ((text.match(/: heartbeat/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
  expect(text).toMatch(/^retry: \d+\n\nevent: sync\ndata: \{"unreadCount":0/);
  abort.abort();
  await own.close();
});
