/**
 * /readyz's projections.lastError is the failure the projector is in now, not one it has recovered from: after a
 * failed apply the runner resubscribes and applies the later batches fine, yet /readyz kept saying
 * `lastError: "<the old failure>"` next to `ok: true` and lag 0, for as long as the process ran.
 */
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { startTestServer, type TestServer } from '../support/httpServer';
import { failApplies } from '../support/heldApplies';
import { waitFor } from '../support/waitFor';

let server: TestServer;
afterAll(() => server.close());

test('lastError is said while the projector fails, with its time, and cleared once a later batch is applied', async () => {
  server = await startTestServer();
  const tokens = await server.register(['@a', '@b']);
  const applies = failApplies(server.mailbox.projections as ProjectionStore);
  const readiness = async () => (await server.call('GET', '/readyz')).body;

  const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 's', body: 'x' } });
  expect(sent.status).toBe(201);
  await waitFor(async () => (await readiness()).projections?.lastError === 'the views store hiccuped', {
    what: 'the failure in /readyz',
  });
  const failingNow = (await readiness()).projections;
  expect(Date.parse(failingNow.lastErrorAt)).toBeGreaterThan(Date.now() - 60_000);

  applies.recover();
  await waitFor(async () => (await server.call('GET', '/v1/inbox/count', { token: tokens['@b'] })).body.unread === 1, {
    what: 'the message in the views',
  });
  // A later batch lands too: the projector is well.
  await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 't', body: 'y' } });
  const answer = await server.call('GET', '/readyz');
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({
    status: 'ready',
    projections: { ok: true, running: true, lag: 0, lastError: null, lastErrorAt: null },
  });
});
