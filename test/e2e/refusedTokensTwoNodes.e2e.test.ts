/**
 * An address over its refused tokens has its unknown tokens answered 429 unread; a token registered through another
 * API node is unknown to this one's last registry read, yet valid. Such requests are answered from one registry read
 * a second, shared by all of them: the new agent's token passes once that read is due (within a second of its
 * registration), and a flood of made-up tokens meanwhile costs that one read. Two API nodes on one event log (the
 * EventStoreDB double, through the real client), node B on the test's clock.
 */
import { AgentDirectory } from '../../src/application/agentDirectory';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { startTestServer, type TestServer } from '../support/httpServer';

let double: EsdbDouble;
let nodeA: TestServer;
let nodeB: TestServer;
let nowMs = Date.parse('2026-01-05T10:00:00.000Z');
const registryReads = jest.spyOn(AgentDirectory.prototype, 'current');

beforeAll(async () => {
  double = await EsdbDouble.start();
  nodeA = await startTestServer({ eventStoreUrl: double.url, nodeId: 'node-a' });
  nodeB = await startTestServer({ eventStoreUrl: double.url, nodeId: 'node-b' }, { clock: { now: () => new Date(nowMs) } });
}, 60_000);
afterAll(async () => {
  await nodeB?.close();
  await nodeA?.close();
  await double?.close();
});

const garbage = (n: number) => `mbx_made-up-${n}-${'y'.repeat(30)}`;
const inbox = (token: string) => nodeB.call('GET', '/v1/inbox/count', { token });

test('a token registered through node A passes node B within a second, from an address over its refused tokens', async () => {
  const t = await nodeA.register(['@a', '@b', '@c']);
  for (const identity of ['@a', '@b', '@c']) expect((await inbox(t[identity])).status).toBe(200);
  for (let n = 0; n < 100; n += 1) expect((await inbox(garbage(n))).status).toBe(401);
  expect((await inbox(garbage(100))).status).toBe(429);

  const late = await nodeA.register(['@late']);
  // Node B's last registry read is not a second old: the new token is not known there yet, and not looked up.
  const early = await inbox(late['@late']);
  expect([early.status, early.body.code, early.headers.get('retry-after')]).toEqual([429, 'RATE_LIMITED', '1']);
  for (const identity of ['@a', '@b', '@c']) expect((await inbox(t[identity])).status).toBe(200); // known: never refused

  nowMs += 1000;
  const reads = registryReads.mock.calls.length;
  const answers = await Promise.all([
    ...Array.from({ length: 50 }, (_, n) => inbox(garbage(200 + n))),
    inbox(late['@late']),
    ...Array.from({ length: 50 }, (_, n) => inbox(garbage(300 + n))),
  ]);
  expect(answers[50].status).toBe(200);
  const statuses = answers.filter((_, n) => n !== 50).map((answer) => answer.status);
  // A second refills ten refusals: ten made-up tokens are looked up (401), the others are not (429).
  expect(statuses.filter((status) => status === 401)).toHaveLength(10);
  expect(statuses.filter((status) => status === 429)).toHaveLength(90);
  // The ten, one read for all the rest (and @late's own, had it come before the ten were taken): not a hundred.
  expect(registryReads.mock.calls.length - reads).toBeLessThanOrEqual(12);
});
