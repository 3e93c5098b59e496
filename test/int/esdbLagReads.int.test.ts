/**
 * On EventStoreDB the projection lag is counted by reading the events behind the views (positions are byte offsets).
 * Each /readyz and each /metrics scrape read every one of them again while a node was behind: 25 events behind, 25
 * events read per check, up to 10,001 per check for a node far behind. A check now reads only what was appended since
 * the last one, and answers the same lag a fresh count gives.
 */
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

let double: EsdbDouble;
let server: TestServer;

afterEach(async () => {
  await server?.close();
  await double?.close();
});

/** Events the double sent to forwards reads of $all since `mark`: counting (the head is read backwards, the projector subscribes). */
const sentSince = (mark: number) =>
  double.readsOfAll.slice(mark).reduce((sum, read) => sum + (read.direction === 'forwards' ? read.sent : 0), 0);

async function lagOf(check: '/readyz' | '/metrics'): Promise<{ lag: number; sent: number }> {
  const mark = double.readsOfAll.length;
  const answer = await server.call('GET', check);
  const lag =
    check === '/readyz'
      ? (answer.body as { checks: { projections: { lag: number } } }).checks.projections.lag
      : Number(/^mailbox_projection_lag_events (\S+)$/m.exec(answer.body as string)?.[1]);
  return { lag, sent: sentSince(mark) };
}

test('/readyz and /metrics read only the events appended since the last check, and say the same lag', async () => {
  double = await EsdbDouble.start();
  server = await startTestServer({ eventStoreUrl: `${double.url}&defaultDeadline=5000`, awaitProjectionMs: 0 });
  const tokens = await server.register(['@a', '@b', '@c']);
  const head = await server.mailbox.eventStore.headPosition();
  await waitFor(async () => (await server.mailbox.projections.checkpoint()) === head, { what: 'the views at the log head' });
  await server.mailbox.runner.stop(); // the projector dies: the sends below reach the log, never the views
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const sent = await server.call('POST', '/v1/messages', {
        token: tokens['@a'],
        body: { to: i % 2 ? '@b' : '@c', subject: `s${i}`, body: 'x' },
      });
      expect(sent.status).toBe(201);
    }
  };
  await send(25);

  const first = await lagOf('/readyz');
  expect(first.lag).toBe(25);
  expect(first.sent).toBeGreaterThanOrEqual(25); // the first count reads them all
  // Before, each of these read the 25 events again.
  expect([await lagOf('/readyz'), await lagOf('/metrics'), await lagOf('/readyz')]).toEqual([
    { lag: 25, sent: 0 },
    { lag: 25, sent: 0 },
    { lag: 25, sent: 0 },
  ]);

  await send(2);
  const after = await lagOf('/metrics');
  expect(after.lag).toBe(27);
  expect(after.sent).toBeLessThanOrEqual(3); // the two new events and the last one known, where the read starts
  expect(await lagOf('/readyz')).toEqual({ lag: 27, sent: 0 });
});
