/**
 * Two API nodes on one event log (the EventStoreDB double), as a scaled deployment runs them: a token rotated or an
 * agent retired through one node ends, on the other, the wake streams the old token opened there, with a last
 * `revoked` event, once that node reads its registry (any request does; the new token's first one always does),
 * and before the new token's stream opens: that one stays open.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { subscribe } from './wakeSubscriber';

let double: EsdbDouble;
let nodeA: TestServer;
let nodeB: TestServer;

beforeAll(async () => {
  double = await EsdbDouble.start();
  nodeA = await startTestServer({ eventStoreUrl: double.url });
  nodeB = await startTestServer({ eventStoreUrl: double.url });
});
afterAll(async () => {
  await nodeA.close();
  await nodeB.close();
  await double.close();
});

// A rotation on node A left the old token's wake stream on node B open for good: only retirements were noticed there.
test('a rotation through node A ends the old token`s stream on node B; the new token`s stream there stays open', async () => {
  const { '@r': old, '@s': sender } = await nodeA.register(['@r', '@s']);
  const stream = await subscribe(nodeB.url, old);
  await stream.next((e) => e.event === 'sync');

  const rotated = await nodeA.call('POST', '/v1/agents/@r/token', { token: nodeA.adminToken });
  expect(rotated.status).toBe(201);
  const fresh = await subscribe(nodeB.url, rotated.body.token); // its token lookup reads node B's registry
  expect((await stream.next((e) => e.event === 'revoked', 5000)).data).toEqual({ identity: '@r', reason: 'token rotated' });
  await stream.ended;

  const sent = await nodeA.call('POST', '/v1/messages', { token: sender, body: { to: '@r', subject: 'after', body: 'x' } });
  await fresh.next((e) => e.event === 'wake' && e.data.messageId === sent.body.messageId, 5000);
  expect(fresh.events.some((e) => e.event === 'revoked')).toBe(false);
  expect(stream.wakes()).toEqual([]);
  fresh.close();
});

test('a retirement through node A ends the agent`s stream on node B at node B`s next registry read', async () => {
  const { '@q': token, '@p': other } = await nodeA.register(['@q', '@p']);
  const stream = await subscribe(nodeB.url, token);
  await stream.next((e) => e.event === 'sync');
  expect((await nodeA.call('DELETE', '/v1/agents/@q', { token: nodeA.adminToken })).status).toBe(200);
  // Any send through node B reads the registry there.
  expect((await nodeB.call('POST', '/v1/messages', { token: other, body: { to: '@p', subject: 'x', body: 'x' } })).status).toBe(
    201,
  );
  expect((await stream.next((e) => e.event === 'revoked', 5000)).data).toEqual({ identity: '@q', reason: 'agent retired' });
  await stream.ended;
});
