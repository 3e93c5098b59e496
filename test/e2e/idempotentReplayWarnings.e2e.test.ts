/**
 * A retried send (the same Idempotency-Key and content) returns the original result (DESIGN §3), warnings included.
 * Its warnings were worked out again from the registry at the retry: a send to @dave before @dave registered was
 * answered UNREGISTERED_RECIPIENT, its retry after the registration answered without it; a send to @carol while she
 * was active was answered without a warning, its retry after her retirement with RETIRED_RECIPIENT ("will never read
 * it"); a near miss's suggestions changed with the agents. The retry now answers the first send's body, byte for byte,
 * and writes nothing.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let now = Date.parse('2030-05-01T10:00:00.000Z');
const tick = () => {
  now += 1000;
};

beforeAll(async () => {
  server = await startTestServer({}, { clock: { now: () => new Date(now) } });
  t = await server.register(['@alice', '@bob', '@carol']);
});
afterAll(() => server.close());

const send = (key: string, body: Record<string, unknown>) =>
  server.call('POST', '/v1/messages', {
    token: t['@alice'],
    body: { subject: 'review', body: 'b', ...body },
    headers: { 'idempotency-key': key },
  });

test('a retry after the registry changed returns the first answer, warnings included, and writes nothing', async () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['to-dave', { to: '@dave' }], // not registered yet: UNREGISTERED_RECIPIENT
    ['to-bob-carol', { to: ['@bob', '@carol'] }], // both active: no warning
    ['to-caroll', { to: '@caroll' }], // a near miss: suggestions of the agents active then
  ];
  const firsts = [];
  for (const [key, body] of cases) {
    tick();
    const first = await send(key, body);
    expect([key, first.status]).toEqual([key, 201]);
    firsts.push(first);
  }
  expect(firsts[0].body.warnings).toMatchObject([{ code: 'UNREGISTERED_RECIPIENT' }]);
  expect(firsts[1].body.warnings).toBeUndefined();
  expect(firsts[2].body.warnings).toMatchObject([{ code: 'UNREGISTERED_RECIPIENT', suggestions: ['@carol'] }]);

  tick();
  await server.register(['@dave', '@carole']);
  tick();
  const retired = await server.call('DELETE', '/v1/agents/@carol', { token: server.adminToken });
  expect(retired.status).toBe(200);

  tick();
  const before = await server.eventCount();
  for (const [i, [key, body]] of cases.entries()) {
    const again = await send(key, body);
    expect([key, again.status, again.headers.get('idempotent-replayed')]).toEqual([key, 201, 'true']);
    expect([key, again.body]).toEqual([key, firsts[i].body]);
  }
  expect(await server.eventCount()).toBe(before);
});
