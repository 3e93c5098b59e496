/**
 * mailbox_projection_lag_events stops counting at LAG_COUNTED_UP_TO (10,001): at that value the views are at least that
 * many events behind, which only its help text said; a scraper (an alert rule, a dashboard) could not tell "exactly
 * 10,001" from "10,001 or far more". /metrics now serves mailbox_projection_lag_events_at_least beside it: 1 when the
 * count stopped there, 0 when it is exact (as the heartbeat's mailbox_heartbeat_projection_lag_events_at_least does).
 */
import { LAG_COUNTED_UP_TO } from '../../src/application/viewsLag';
import { registrationEvent } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

let server: TestServer;
afterEach(() => server?.close());

async function lag(): Promise<{ events: number; atLeast: number }> {
  const { status, body } = await server.call('GET', '/metrics');
  expect(status).toBe(200);
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body as string)?.[1]);
  return { events: value('mailbox_projection_lag_events'), atLeast: value('mailbox_projection_lag_events_at_least') };
}

const atHead = async () => {
  const head = await server.mailbox.eventStore.headPosition();
  await waitFor(async () => (await server.mailbox.projections.checkpoint()) === head, {
    what: 'the views at the log head',
    timeoutMs: 60_000,
  });
};

test(`views caught up, one event behind, more than ${LAG_COUNTED_UP_TO} behind, caught up again: the marker says which counts are "at least"`, async () => {
  server = await startTestServer({ eventStoreUrl: 'memory:', awaitProjectionMs: 0 });
  await server.register(['@a', '@b', '@c']);
  await atHead();
  expect(await lag()).toEqual({ events: 0, atLeast: 0 });

  await server.mailbox.runner.stop(); // the projector stops: what follows reaches the log, never the views
  const append = (identities: string[]) =>
    server.mailbox.eventStore.append('mailbox-lag-test', identities.map(registrationEvent), 'any');
  await append(['@d']);
  expect(await lag()).toEqual({ events: 1, atLeast: 0 }); // an exact count

  const many = Array.from({ length: LAG_COUNTED_UP_TO + 50 }, (_, i) => `@agent-${i}`);
  for (let i = 0; i < many.length; i += 1000) await append(many.slice(i, i + 1000));
  expect(await lag()).toEqual({ events: LAG_COUNTED_UP_TO, atLeast: 1 }); // counted up to the cap: at least

  await server.mailbox.runner.start();
  await atHead();
  expect(await lag()).toEqual({ events: 0, atLeast: 0 });
});
