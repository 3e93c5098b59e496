/**
 * Two API nodes on one event log (the EventStoreDB double) and one Redis namespace, as docker-compose.scaled.yml
 * runs them. Retiring an agent, or rotating its token, through node A ends the agent's wake streams open on node B
 * with a last `revoked` event, though nothing else reaches node B meanwhile (found by a probe of the scaled
 * deployment: they stayed open, and went on passing wakes, until some other request happened to make node B read
 * the registry; after a rotation, for good). A stream opened with the new token goes on. The same for an auditor's
 * audit stream (GET /v1/audit/stream), which a rotation through node A left open on node B.
 */
import { randomUUID } from 'node:crypto';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { ADMIN_TOKEN } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

let redis: TestRedis;
let double: EsdbDouble;
let nodeA: TestServer;
let nodeB: TestServer;
let t: Record<string, string>;
const streams: WakeSubscriber[] = [];

beforeAll(async () => {
  redis = await startRedis();
  double = await EsdbDouble.start();
  const shared = {
    eventStoreUrl: double.url,
    redisUrl: redis.url,
    redisNamespace: `revoke-nodes-${randomUUID().slice(0, 8)}`,
    redisTimeoutMs: 5000,
  };
  nodeA = await startTestServer({ ...shared, nodeId: 'node-a' });
  nodeB = await startTestServer({ ...shared, nodeId: 'node-b' });
  t = { ...(await nodeA.register(['@r', '@k', '@s'])), ...(await nodeA.register(['@aud'], 'auditor')) };
}, 60_000);
afterAll(async () => {
  for (const stream of streams) stream.close();
  await nodeB?.close();
  await nodeA?.close();
  await double?.close();
  await redis?.stop();
});

async function openOn(node: TestServer, token: string): Promise<WakeSubscriber> {
  const stream = await subscribe(node.url, token);
  streams.push(stream);
  await stream.next((e) => e.event === 'sync');
  return stream;
}

test('an agent retired through node A: its stream on node B ends with `revoked`, with no other request on node B', async () => {
  const onB = await openOn(nodeB, t['@r']);
  const retired = await nodeA.call('DELETE', '/v1/agents/@r', { token: ADMIN_TOKEN });
  expect(retired.status).toBe(200);

  const revoked = await onB.next((e) => e.event === 'revoked', 5000);
  expect(revoked.data).toEqual({ identity: '@r', reason: 'agent retired' });
  await onB.ended; // node B closed it
  expect(onB.events[onB.events.length - 1].event).toBe('revoked');
});

test("a token rotated through node A: node B ends the old token's stream; a stream of the new token goes on", async () => {
  const oldOnB = await openOn(nodeB, t['@k']);
  const rotated = await nodeA.call('POST', '/v1/agents/@k/token', { token: ADMIN_TOKEN });
  expect(rotated.status).toBe(201);

  const revoked = await oldOnB.next((e) => e.event === 'revoked', 5000);
  expect(revoked.data).toEqual({ identity: '@k', reason: 'token rotated' });
  await oldOnB.ended;

  const newOnB = await openOn(nodeB, rotated.body.token);
  const sent = await nodeA.call('POST', '/v1/messages', { token: t['@s'], body: { to: '@k', subject: 'after', body: 'x' } });
  expect(sent.status).toBe(201);
  await newOnB.next((e) => e.event === 'wake' && e.data.messageId === sent.body.messageId);
  expect(newOnB.events.map((e) => e.event)).toEqual(['sync', 'wake']);
  expect(oldOnB.wakes().map((w) => w.messageId)).not.toContain(sent.body.messageId);
});

test("an auditor's token rotated through node A: its audit stream on node B ends with `revoked`; one of the new token goes on", async () => {
  const oldOnB = await subscribe(nodeB.url, t['@aud'], '/v1/audit/stream');
  streams.push(oldOnB);
  await oldOnB.next((e) => e.event === 'ready');
  const rotated = await nodeA.call('POST', '/v1/agents/@aud/token', { token: ADMIN_TOKEN });
  expect(rotated.status).toBe(201);

  const revoked = await oldOnB.next((e) => e.event === 'revoked', 5000);
  expect(revoked.data).toEqual({ identity: '@aud', reason: 'token rotated' });
  await oldOnB.ended; // node B closed it

  const newOnB = await subscribe(nodeB.url, rotated.body.token, '/v1/audit/stream');
  streams.push(newOnB);
  await newOnB.next((e) => e.event === 'ready');
  const sent = await nodeA.call('POST', '/v1/messages', { token: t['@s'], body: { to: '@r', subject: 'seen', body: 'x' } });
  expect(sent.status).toBe(201);
  await newOnB.next((e) => e.event === 'entry' && JSON.stringify(e.data).includes(sent.body.messageId));
  expect(newOnB.events.some((e) => e.event === 'revoked')).toBe(false);
});
