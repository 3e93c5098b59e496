/**
 * docs/operators.md did not say what a node does with tokens while the event store is down: it answers from its last
 * read of the agent registry, so a retirement or a token rotation written through another node just before the outage
 * takes effect on this node only when the store is back. It says so now; this pins what it says, on two API nodes on
 * one event log (the EventStoreDB double, through the real client), node B's clock moved past its read's freshness.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { ADMIN_TOKEN } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

let double: EsdbDouble;
let nodeA: TestServer;
let nodeB: TestServer;
let skewMs = 0;

beforeAll(async () => {
  double = await EsdbDouble.start();
  nodeA = await startTestServer({ eventStoreUrl: double.url, nodeId: 'node-a' });
  nodeB = await startTestServer(
    { eventStoreUrl: double.url, nodeId: 'node-b' },
    { clock: { now: () => new Date(Date.now() + skewMs) } },
  );
}, 60_000);
afterAll(async () => {
  await nodeB?.close();
  await nodeA?.close();
  await double?.close();
});

const inbox = (token: string) => nodeB.call('GET', '/v1/messages', { token });

test('docs/operators.md says a node answers tokens from its last registry read while the store is down', () => {
  const operators = fs.readFileSync(path.join(__dirname, '../../docs/operators.md'), 'utf8').replace(/\s+/g, ' ');
  expect(operators).toContain(
    "So a retirement or a rotation written through another node just before the outage, after this node's last read, " +
      'takes effect on this node only when the store is back',
  );
  expect(operators).toContain('"With the event store unavailable it answers from the last read"');
});

test('a retirement and a rotation written through node A just before the outage bite on node B once the store is back', async () => {
  const t = await nodeA.register(['@r', '@s', '@k']);
  for (const identity of ['@r', '@s', '@k']) expect((await inbox(t[identity])).status).toBe(200); // node B has read them
  const retired = await nodeA.call('DELETE', '/v1/agents/@r', { token: ADMIN_TOKEN });
  expect(retired.status).toBe(200);
  const rotated = await nodeA.call('POST', '/v1/agents/@s/token', { token: ADMIN_TOKEN });
  expect(rotated.status).toBe(201);
  const before = await nodeA.eventCount();

  await double.stop();
  skewMs += 1100; // node B's last read is no longer fresh: each lookup tries the store
  expect((await inbox(t['@r'])).status).toBe(200); // retired through node A, still accepted for reads on node B
  expect((await inbox(t['@s'])).status).toBe(200); // the rotated-away token too
  expect((await inbox(rotated.body.token)).status).toBe(401); // the new one is not known there yet
  const write = await nodeB.call('POST', '/v1/messages', { token: t['@r'], body: { to: '@k', subject: 's', body: 'b' } });
  expect([write.status, write.body.code]).toEqual([503, 'UNAVAILABLE']);

  await double.start();
  await waitFor(async () => (await inbox(t['@r'])).status === 401, { what: "@r's token refused on node B", timeoutMs: 15_000 });
  const refused = await inbox(t['@r']);
  expect(refused.body.message).toContain('was retired');
  expect((await inbox(t['@s'])).body.message).toContain('replaced by a rotation');
  expect((await inbox(rotated.body.token)).status).toBe(200);
  expect((await inbox(t['@k'])).status).toBe(200);
  expect(await nodeA.eventCount()).toBe(before); // nothing was written meanwhile
});

test("a hung store (accepts, never answers): node B's reads wait out its deadline once, then answer from the last read at once", async () => {
  // Found walking the stack: with EventStoreDB frozen, every read on a node whose registry read was a second old (each
  // inbox list or count, served from the views) took the store's whole deadline (5.1 s) before it was answered from
  // the last read: the token lookup read the registry again each time and waited it out.
  const t = await nodeA.register(['@h1', '@h2', '@h3']);
  const sent = await nodeA.call('POST', '/v1/messages', { token: t['@h1'], body: { to: '@h2', subject: 's', body: 'b' } });
  expect(sent.status).toBe(201);
  for (const identity of ['@h1', '@h2', '@h3']) expect((await inbox(t[identity])).status).toBe(200); // node B has read them
  const before = await nodeA.eventCount();

  double.faults.freeze();
  try {
    skewMs += 1100; // node B's last read is no longer fresh
    expect((await inbox(t['@h1'])).status).toBe(200); // the read that finds the store hung waits out its deadline
    const took: number[] = [];
    for (const identity of ['@h1', '@h2', '@h3', '@h2']) {
      const started = performance.now();
      const listed = await inbox(t[identity]);
      took.push(performance.now() - started);
      expect(listed.status).toBe(200);
    }
    expect((await inbox(t['@h2'])).body.messages.map((m: { subject: string }) => m.subject)).toEqual(['s']);
    expect(Math.max(...took)).toBeLessThan(2500); // half the store's deadline (5 s): each read took all of it
    const write = await nodeB.call('POST', '/v1/messages', { token: t['@h3'], body: { to: '@h1', subject: 's', body: 'b' } });
    expect([write.status, write.body.code]).toEqual([503, 'UNAVAILABLE']);
  } finally {
    double.faults.thaw();
  }
  expect(await nodeA.eventCount()).toBe(before); // nothing was written meanwhile
});
