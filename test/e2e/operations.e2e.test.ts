/** /healthz, /readyz, /metrics and /openapi.json over real HTTP; the OpenAPI document matches the routes served. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { ROUTE_SPECS, UNDOCUMENTED_ROUTES } from '../../src/adapters/http/routeSpecs';
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe } from './wakeSubscriber';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b']);
});
afterAll(() => server.close());

const metric = (text: string, line: RegExp) => {
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? undefined : Number(found.split(' ').pop());
};

test('healthz and readyz need no token; readyz reports store, projections and lag', async () => {
  expect((await server.call('GET', '/healthz')).body).toEqual({ status: 'ok' });
  const ready = await server.call('GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body).toMatchObject({
    status: 'ready',
    eventStore: { ok: true, head: expect.any(String) },
    projectionStore: { ok: true, backend: 'memory' }, // the test server's log and views are in memory
    projections: { ok: true, running: true, lag: 0 },
  });
});

test('readyz is 503 UNAVAILABLE once the projection runner has stopped', async () => {
  const own = await startTestServer();
  await own.mailbox.runner.stop();
  const response = await own.call('GET', '/readyz');
  expect(response.status).toBe(503);
  expect(response.body).toMatchObject({ code: 'UNAVAILABLE', checks: { projections: { ok: false, running: false } } });
  await own.close();
});

// role alone (no lease: this process projects) said node="", though MAILBOX_NODE_ID names the process in /metrics.
test('mailbox_projector_leader{role="alone"} and /readyz name this node (MAILBOX_NODE_ID)', async () => {
  const named = await startTestServer({ nodeId: 'api-7' });
  try {
    const { body } = await named.call('GET', '/metrics');
    const lines = (body as string).split('\n').filter((line) => line.startsWith('mailbox_projector_leader{'));
    expect(lines).toEqual(['mailbox_projector_leader{role="alone",node="api-7",token=""} 1']);
    // /readyz names it too, as README says of MAILBOX_NODE_ID.
    expect((await named.call('GET', '/readyz')).body.projections.leadership).toEqual({ role: 'alone', node: 'api-7' });
  } finally {
    await named.close();
  }
  // Without MAILBOX_NODE_ID: the default name, host name and process id, as in the leases' logs.
  const { body } = await server.call('GET', '/metrics');
  expect(body).toContain(`mailbox_projector_leader{role="alone",node="${os.hostname()}-${process.pid}",token=""} 1`);
});

test('metrics count commands by outcome and code, and observe wake latency', async () => {
  const b = await subscribe(server.url, t['@b']);
  const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'b' } });
  await b.next((e) => e.event === 'wake' && e.data.messageId === sent.body.messageId);
  await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: 'AGENT:gpt', subject: 's', body: 'b' } });
  b.close();

  const { status, body, headers } = await server.call('GET', '/metrics');
  expect(status).toBe(200);
  expect(headers.get('content-type')).toContain('text/plain');
  expect(metric(body, /^mailbox_commands_total\{command="send",surface="http",outcome="accepted",code=""\}/)).toBe(1);
  expect(
    metric(body, /^mailbox_commands_total\{command="send",surface="http",outcome="rejected",code="INVALID_RECIPIENT_SHAPE"\}/),
  ).toBe(1);
  expect(metric(body, /^mailbox_commands_total\{command="register_agent",surface="http",outcome="accepted"/)).toBe(2);
  expect(metric(body, /^mailbox_wake_latency_seconds_count/)).toBe(1);
  expect(metric(body, /^mailbox_projection_lag_events/)).toBe(0);
  expect(body).toMatch(/^mailbox_http_request_duration_seconds_count\{method="POST",route="\/v1\/messages",status="201"\} 1$/m);
  expect(body).toMatch(/^mailbox_process_resident_memory_bytes /m);
});

test('/openapi.json serves the OpenAPI document: every served route is documented (or said why not) and vice versa', async () => {
  const { status, body } = await server.call('GET', '/openapi.json');
  expect(status).toBe(200);
  // The served document states this server's limits (bc50eaf); the checked-in one, the defaults' (below).
  expect(body).toEqual(buildOpenApiDocument({ maxBodyBytes: server.mailbox.config.maxBodyBytes }));
  expect(body.openapi).toBe('3.1.0');
  const documented = ROUTE_SPECS.map((s) => `${s.method.toUpperCase()} ${s.path.replace(/\{(\w+)\}/g, ':$1')}`);
  const undocumented = UNDOCUMENTED_ROUTES.map((r) => `${r.method} ${r.url}`);
  const served = server.http.routes.map((r) => `${r.method} ${r.url}`).sort();
  expect(served).toEqual([...documented, ...undocumented].sort());
  expect(served).toHaveLength(39); // 23 + the four task routes (issue 12) + the console's ten (issue 16: with the unwoken alarm) + unarchive and delivery (issue 13)
  const send = body.paths['/v1/messages'].post;
  expect(send.requestBody.content['application/json'].schema).toMatchObject({
    required: ['to', 'subject', 'body'],
    additionalProperties: false,
  });
  expect(send.responses['400'].description).toContain('INVALID_RECIPIENT_SHAPE');
});

test('openapi.json in the repository is the current document (npm run openapi)', () => {
  const file = path.join(__dirname, '../../openapi.json');
  expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(buildOpenApiDocument());
});
