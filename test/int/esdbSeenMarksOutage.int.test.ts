/**
 * The event log (EventStoreDB, the in-repo double) stopped while agents list their inboxes: the seen marks those
 * listings note cannot be written. Found by an operator's walk: the server logged 'seen marks: not written; retried
 * shortly' at warn with the whole gRPC stack at every retry (every MAILBOX_SEEN_FLUSH_MS: over a hundred lines in 40 s),
 * as if each were a new bug. Now the outage is said once at warn (the retries at debug), once more when the log answers
 * again, and the marks kept meanwhile are written then. Three identities.
 */
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { allEvents } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';
import { recordingLogger } from '../support/recordingLogger';
import { waitFor } from '../support/waitFor';

let double: EsdbDouble;
let server: TestServer | null = null;
beforeAll(async () => {
  double = await EsdbDouble.start();
});
afterAll(async () => {
  await server?.close();
  await double.close();
});

test('seen marks during a log outage: said once, not a stack per retry; written once the log is back', async () => {
  const log = recordingLogger('debug');
  server = await startTestServer(
    { eventStoreUrl: `${double.url}&defaultDeadline=1500`, seenFlushMs: 50 },
    { logger: log.logger },
  );
  const tokens = await server.register(['@a', '@b', '@c']);
  for (const to of ['@b', '@c']) {
    const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to, subject: 'hi', body: 'x' } });
    expect(sent.status).toBe(201);
  }
  const seenEvents = async () => (await allEvents(server!.mailbox)).filter((event) => event.type === 'MessagesSeen');
  expect(await seenEvents()).toEqual([]);

  await double.stop();
  for (const identity of ['@b', '@c']) {
    const listed = await server.call('GET', '/v1/messages', { token: tokens[identity] });
    expect({ identity, status: listed.status, count: listed.body.messages?.length }).toEqual({ identity, status: 200, count: 1 });
  }
  const lines = (text: string) => log.lines.filter((line) => line.msg.startsWith(text));
  // The positive signal: the flush was retried (and failed) three times after the first failure.
  await waitFor(() => lines('seen marks: the event store still does not answer').length >= 3, {
    timeoutMs: 30_000,
    what: 'three retries of the seen marks',
  });
  const seenWarnings = log.lines.filter((line) => line.level >= 40 && line.msg.startsWith('seen marks'));
  expect(seenWarnings.map((line) => line.msg)).toEqual([
    'seen marks: the event store does not answer; the marks noted are kept and written once it does',
  ]);
  expect(seenWarnings[0]).not.toHaveProperty('err'); // no stack: the reason and the store's words
  expect(seenWarnings[0].reason).toContain('EventStoreDB');

  await double.start();
  await waitFor(() => lines('seen marks: the event store answers again').length === 1, {
    timeoutMs: 30_000,
    what: 'the seen marks written again',
  });
  const seen = await seenEvents();
  expect(seen.map((event) => (event.data as { recipient: string }).recipient).sort()).toEqual(['@b', '@c']);
  expect(lines('seen marks: not written')).toEqual([]);
});
