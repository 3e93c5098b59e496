/**
 * The rejection log hid token-shaped text (mbx_...), but a custom admin token (MAILBOX_ADMIN_TOKEN or admin.token: any
 * 32 characters or more) pasted into a refused request was kept as sent, in its `to`, its route and its message, for
 * every auditor to read and use as the admin. Each form of it (as sent, percent-encoded in a path) now reads
 * <the admin token, not shown>, also where the record's bound cuts through it; the caller's own answer is unchanged.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

/** Of no token's shape, with characters a path encodes. */
const ADMIN = 'Custom/Admin+Token=0123456789abcdefghij';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN });
  const registered = await server.call('POST', '/v1/agents', { token: ADMIN, body: { identity: '@auditor', role: 'auditor' } });
  expect(registered.status).toBe(201);
  t = { '@auditor': registered.body.token };
  for (const identity of ['@a', '@b', '@c']) {
    const { status, body } = await server.call('POST', '/v1/agents', { token: ADMIN, body: { identity } });
    expect(status).toBe(201);
    t[identity] = body.token;
  }
});
afterAll(() => server.close());

test('the admin token pasted into a refused request is never kept in its record', async () => {
  const before = await server.eventCount();
  const send = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@c', ADMIN], subject: 's', body: 'b' },
  });
  expect([send.status, send.body.code]).toEqual([400, 'INVALID_RECIPIENT_SHAPE']);
  expect(JSON.stringify(send.body)).toContain(ADMIN); // the caller is told what it sent
  const path = await server.call('GET', `/v1/mesages/${encodeURIComponent(ADMIN)}`, { token: t['@b'] });
  expect(path.status).toBe(404);
  // The recipient is bounded at 200 characters: the token straddles the cut, and none of it is kept.
  const long = await server.call('POST', '/v1/messages', {
    token: t['@c'],
    body: { to: `${'x'.repeat(190)}${ADMIN}`, subject: 's', body: 'b' },
  });
  expect(long.status).toBe(400);

  const { status, body } = await server.call('GET', '/v1/audit/rejections?limit=3', { token: t['@auditor'] });
  expect(status).toBe(200);
  const records: Array<Record<string, unknown>> = body.rejections;
  expect(records.map((r) => [r.agent, r.command, r.code])).toEqual([
    ['@c', 'send', 'INVALID_RECIPIENT_SHAPE'],
    ['@b', 'GET /v1/mesages/<the admin token, not shown>', 'NOT_FOUND'],
    ['@a', 'send', 'INVALID_RECIPIENT_SHAPE'],
  ]);
  expect(records[2]).toMatchObject({ to: '@c, <the admin token, not shown>' });
  expect(records[0].to).toBe(`${'x'.repeat(190)}<the admin`);
  const kept = JSON.stringify(records);
  for (const part of [ADMIN.slice(0, 10), encodeURIComponent(ADMIN).slice(0, 10), ADMIN.slice(-10)])
    expect(kept).not.toContain(part);
  expect(await server.eventCount()).toBe(before);
});
