/**
 * An auditor who reads the log with `mailbox audit replay --from N` asks its route the same way, GET
 * /v1/audit/events?from=N, and was told "... does not accept 'from'; allowed fields: after, limit. Your identity comes
 * from your token, never from the request.": the sender hint, about a position. It is now told the field meant and how
 * it counts: "(did you mean 'after'?) ... after=N lists the events after position N (from N+1): to read from position N,
 * as mailbox audit replay --from N does, pass after=N-1." A send given `from` keeps the sender hint.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

const HINT =
  'after=N lists the events after position N (from N+1): to read from position N, as mailbox audit replay --from N ' +
  'does, pass after=N-1.';

test.each(['from', 'since'])("?%s=2 is told 'after' and how it counts, not the sender hint", async (key) => {
  const refused = await server.call('GET', `/v1/audit/events?${key}=2`, { token: server.adminToken });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({ code: 'UNKNOWN_FIELD', field: key, suggestions: ['after'] });
  expect(refused.body.message).toBe(
    `GET /v1/audit/events does not accept '${key}' (did you mean 'after'?); allowed fields: after, limit. ${HINT}`,
  );
  // As told: after=1 reads from position 2.
  const read = await server.call('GET', '/v1/audit/events?after=1&limit=1', { token: server.adminToken });
  expect(read.body.events.map((event: { position: string }) => event.position)).toEqual(['2']);
});

test('a send given from keeps the sender hint, and writes nothing', async () => {
  const before = await server.eventCount();
  const refused = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@b', subject: 's', body: 'b', from: '@c' },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.message).toContain(' Your identity comes from your token, never from the request.');
  expect(refused.body.message).not.toContain('after=N');
  expect(await server.eventCount()).toBe(before);
});
