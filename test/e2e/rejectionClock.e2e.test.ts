/**
 * A rejection's `at` (GET /v1/audit/rejections, the console's Rejections panel) was the wall clock's, while every
 * other time the mailbox records (events, views, the unwoken alarm) is its injected clock's: a mailbox on another
 * clock showed its refusals at a time none of its events had. Each refusal is now stamped by the mailbox's clock, on
 * every path that records one: a refused command, a refused read, a route not found and an MCP tool call refused.
 * None writes an event.
 */
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { apiCaller } from '../support/apiCalls';
import { ADMIN_TOKEN, allEvents } from '../support/fixtures';

const T0 = Date.parse('2001-02-03T04:05:06.000Z'); // far from the wall clock: a wall-clock stamp cannot pass for it
let now = T0;

let server: ClockedApiServer;
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now));
});
afterAll(() => server.close());

const call = apiCaller(() => server.url);

async function newest(count: number): Promise<Array<Record<string, unknown>>> {
  const { status, body } = await call('GET', `/v1/audit/rejections?limit=${count}`, ADMIN_TOKEN);
  expect(status).toBe(200);
  return body.rejections;
}

test('every refusal is recorded at the mailbox clock, over HTTP and MCP, and writes no event', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) {
    const registered = await call('POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(registered.status).toBe(201);
    tokens[identity] = registered.body.token;
  }
  const before = (await allEvents(server.mailbox)).length;

  const at = (ms: number) => new Date(ms).toISOString();
  now = T0 + 1000;
  const send = await call('POST', '/v1/messages', tokens['@a'], { to: '@b', subjct: 's', body: 'b' });
  expect([send.status, send.body.code]).toEqual([400, 'UNKNOWN_FIELD']);
  now = T0 + 2000;
  const read = await call('GET', '/v1/messages?box=sent', tokens['@b']);
  expect(read.status).toBe(400);
  now = T0 + 3000;
  const missing = await call('GET', '/v1/mesages', tokens['@c']);
  expect(missing.status).toBe(404);
  now = T0 + 4000;
  const mcp = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tokens['@a']}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add_mesage', arguments: {} } }),
  });
  expect(mcp.status).toBe(200);
  await mcp.text(); // answered: recorded before the answer

  const [tool, route, listing, command] = await newest(4);
  expect(command).toMatchObject({ at: at(T0 + 1000), agent: '@a', command: 'send', surface: 'http', code: 'UNKNOWN_FIELD' });
  expect(listing).toMatchObject({ at: at(T0 + 2000), agent: '@b', command: 'list_messages', code: 'VALIDATION_FAILED' });
  expect(route).toMatchObject({ at: at(T0 + 3000), agent: '@c', command: 'GET /v1/mesages', code: 'NOT_FOUND' });
  expect(tool).toMatchObject({ at: at(T0 + 4000), agent: '@a', command: 'add_mesage', surface: 'mcp', code: 'NOT_FOUND' });
  expect((await allEvents(server.mailbox)).length).toBe(before);
});
