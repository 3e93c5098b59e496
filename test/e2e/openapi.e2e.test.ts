/**
 * The OpenAPI document as outside tools see it: swagger-parser validates it,
 * every operation has an operationId and a success schema, and real answers of
 * a running server conform to the documented success schemas (so the document
 * cannot drift from what the API returns).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { ConcurrencyConflict } from '../../src/errors';
import { tempDir } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';

type Json = Record<string, any>;
let server: TestServer;
let t: Record<string, string>;
const document = buildOpenApiDocument() as Json;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

const operations = (): Array<{ method: string; path: string; op: Json }> =>
  Object.entries(document.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, op]) => ({ method, path, op })),
  );

test('swagger-parser validates the document', async () => {
  const dir = tempDir('mailbox-openapi-');
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(document));
    const { stdout } = await promisify(execFile)(process.execPath, [
      path.join(__dirname, '../../scripts/validateOpenapi.mjs'),
      file,
    ]);
    expect(stdout).toContain('valid OpenAPI 3.1.0');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('servers are relative to wherever the document is served; every operation has a unique operationId and a success schema', () => {
  expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
  const ids = operations().map(({ op }) => op.operationId);
  expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  for (const { method, path, op } of operations()) {
    // One success with a body; another 2xx only as a protocol's bodiless answer (POST /mcp: 202 for notifications).
    const success = Object.entries(op.responses as Json).filter(([status, r]) => status.startsWith('2') && r.content);
    expect([method, path, success.length]).toEqual([method, path, 1]);
    const [, response] = success[0];
    for (const media of Object.values(response.content as Json))
      expect([method, path, media.schema]).toEqual([method, path, expect.any(Object)]);
  }
});

test('real answers conform to the documented success schemas', async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const check = async (method: string, path: string, documented: string, options: Parameters<TestServer['call']>[2] = {}) => {
    const response = await server.call(method, path, options);
    const op = document.paths[documented][method.toLowerCase()];
    const [status, spec] = Object.entries(op.responses as Json).find(([code, r]) => code.startsWith('2') && r.content)!;
    expect([path, response.status]).toEqual([path, Number(status)]);
    const validate = ajv.compile(spec.content['application/json'].schema);
    if (!validate(response.body))
      throw new Error(`${method} ${path}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(response.body)}`);
    return response.body as Json;
  };
  const admin = { token: server.adminToken };
  await check('POST', '/v1/agents', '/v1/agents', { ...admin, body: { identity: '@retiring' } });
  await check('DELETE', '/v1/agents/@retiring', '/v1/agents/{identity}', admin);
  await check('GET', '/v1/agents', '/v1/agents', { token: t['@a'] });
  const task = {
    state: 'submitted', // a task to AGENT:* opens Submitted (claimable): InputRequired is for a direct task's holder
    input: { parts: [{ kind: 'text', text: 'review' }] },
    expiresAt: '2030-01-01T00:00:00Z',
  };
  const sent = await check('POST', '/v1/messages', '/v1/messages', {
    token: t['@a'],
    body: { to: '@nobody', subject: 's', body: 'b', tags: ['x'] },
  });
  expect(sent.warnings).toHaveLength(1);
  const broadcast = await check('POST', '/v1/messages', '/v1/messages', {
    token: t['@a'],
    body: { to: 'AGENT:*', subject: 's', body: 'b', task },
  });
  const direct = await check('POST', '/v1/messages', '/v1/messages', {
    token: t['@a'],
    body: { to: '@b', subject: 's', body: 'b', inReplyTo: broadcast.messageId },
  });
  await check('GET', '/v1/messages?status=unread', '/v1/messages', { token: t['@b'] });
  await check('GET', '/v1/messages?box=outbox', '/v1/messages', { token: t['@a'] });
  await check('GET', `/v1/messages/${broadcast.messageId}`, '/v1/messages/{id}', { token: t['@a'] });
  await check('GET', `/v1/messages/${broadcast.messageId}`, '/v1/messages/{id}', { token: t['@b'] });
  await check('POST', `/v1/messages/${direct.messageId}/read`, '/v1/messages/{id}/read', { token: t['@b'] });
  await check('POST', '/v1/messages/read', '/v1/messages/read', { token: t['@c'], body: { messageId: broadcast.messageId } });
  const bulk = await check('POST', '/v1/messages/read', '/v1/messages/read', {
    token: t['@b'],
    body: { messageIds: [broadcast.messageId, sent.messageId] },
  });
  expect(bulk.results.map((r: Json) => r.status).sort()).toEqual(['error', 'read']);
  await check('POST', `/v1/messages/${direct.messageId}/archive`, '/v1/messages/{id}/archive', { token: t['@b'] });
  expect(await check('GET', '/v1/inbox/count', '/v1/inbox/count', { token: t['@c'] })).toEqual({
    unreadCount: 0,
    unseenCount: 0,
    unread: 0,
    byPriority: { low: 0, normal: 0, high: 0 },
  });
  // A send to a list of identities keeps its `to` as the list: the story's schema said one string (a validating
  // client of GET /v1/audit/messages/{id} refused the answer for every list send).
  const listed = await check('POST', '/v1/messages', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'pair', body: 'b' },
  });
  // A replayed send: the documented 201 and body (the original result), with the header its 201 documents.
  const keyed = { token: t['@a'], body: { to: '@b', subject: 'again', body: 'b' }, headers: { 'idempotency-key': 'oa-1' } };
  const original = await check('POST', '/v1/messages', '/v1/messages', keyed);
  expect(await check('POST', '/v1/messages', '/v1/messages', keyed)).toEqual(original);
  const replayed = (await server.call('POST', '/v1/messages', keyed)).headers.get('idempotent-replayed');
  const documented = document.paths['/v1/messages'].post.responses['201'].headers?.['Idempotent-Replayed'];
  expect([replayed, documented?.schema]).toEqual(['true', { type: 'string', enum: ['true'] }]);
  for (const id of [listed.messageId, broadcast.messageId, direct.messageId])
    await check('GET', `/v1/audit/messages/${id}`, '/v1/audit/messages/{id}', admin);
  await check('GET', `/v1/messages/${listed.messageId}/delivery`, '/v1/messages/{id}/delivery', { token: t['@a'] });
  await check('GET', '/v1/heartbeat', '/v1/heartbeat', admin);
  await check('GET', '/v1/audit/events?limit=5', '/v1/audit/events', admin);
  await check('GET', '/healthz', '/healthz');
  await check('GET', '/readyz', '/readyz');
  await check('GET', '/openapi.json', '/openapi.json');
});

/** A schema with the document's $refs resolved in place (its components hold no cycles). */
const resolved = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(resolved);
  if (!schema || typeof schema !== 'object') return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string') return resolved(document.components.schemas[ref.replace('#/components/schemas/', '')]);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolved(value)]));
};

test("POST /mcp: the transport's own refusals are documented, each status with its real body", async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const documented = document.paths['/mcp'].post.responses as Json;
  const BOTH = 'application/json, text/event-stream';
  const call = (body: unknown, headers: Record<string, string> = {}) =>
    server.call('POST', '/mcp', {
      token: t['@a'],
      rawBody: JSON.stringify(body),
      headers: { 'content-type': 'application/json', accept: BOTH, ...headers },
    });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const answers = {
    notJsonRpc: await call({ hello: 'world' }),
    emptyBatch: await call([]),
    twoInitializeRequests: await call([initialize, { ...initialize, id: 2 }]),
    unsupportedProtocolVersion: await call(list, { 'mcp-protocol-version': '1999-01-01' }),
    notAcceptable: await call(list, { accept: 'application/json' }),
    unsupportedMediaType: await call(list, { 'content-type': 'text/plain' }),
  };
  for (const [name, answer] of Object.entries(answers)) {
    const response = documented[String(answer.status)];
    expect([name, answer.status, response?.content?.['application/json']?.examples?.[name]?.value]).toEqual([
      name,
      answer.status,
      answer.body,
    ]);
    const validate = ajv.compile(resolved(response.content['application/json'].schema) as Json);
    if (!validate(answer.body)) throw new Error(`${name}: ${ajv.errorsText(validate.errors)}`);
  }

  // A request without an id is the envelope, under the same 400; a notification is accepted with no body (202).
  const withoutId = await call({ jsonrpc: '2.0', method: 'tools/list' });
  expect([withoutId.status, withoutId.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  const validate400 = ajv.compile(resolved(documented['400'].content['application/json'].schema) as Json);
  expect(validate400(withoutId.body)).toBe(true);
  const notification = await call({ jsonrpc: '2.0', method: 'notifications/initialized' });
  expect([notification.status, notification.body]).toEqual([202, '']);
  expect(documented['202']).toEqual({ description: expect.any(String) });
});

test('each write documents its body as required exactly when the server refuses the request without one', async () => {
  // A generated client follows requestBody.required: documented required where the server takes none (POST
  // /v1/tasks/{id}/claim, whose lease is optional), a client must send "{}" it does not need; documented optional where
  // the server refuses, it sends a request that fails. So each write is asked without a body and both must agree.
  const task = { state: 'Submitted', input: { parts: [{ kind: 'text', text: 'body or none' }] } };
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: 'AGENT:*', subject: 'claim without a body', body: 'b', task },
  });
  const withBody = operations().filter(({ op }) => op.requestBody);
  expect(withBody.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
    'post /v1/agents',
    'post /v1/messages',
    'post /v1/messages/read',
    'post /v1/tasks/{id}/claim',
    'post /v1/tasks/{id}/transition',
  ]);
  for (const { method, path, op } of withBody) {
    const token = path === '/v1/agents' ? server.adminToken : t['@b'];
    const answer = await server.call(method.toUpperCase(), path.replace('{id}', sent.body.messageId), { token });
    const refused = answer.status === 400 && answer.body.code === 'VALIDATION_FAILED';
    expect([method, path, answer.status < 300 || refused]).toEqual([method, path, true]);
    expect([method, path, op.requestBody.required]).toEqual([method, path, refused]);
  }
});

test('every write under /v1 documents 409 CONCURRENCY_CONFLICT saying to resend, and answers it when its appends keep losing', async () => {
  // The served document, as a client reads it. A write whose append loses the race on every attempt answers 409
  // CONCURRENCY_CONFLICT (commandHandler.ts): a generated client that did not know the 409 treated it as unexpected.
  const { body: served } = await server.call<Json>('GET', '/openapi.json');
  const writes = Object.entries(served.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json)
      .filter(([method]) => method !== 'get' && path.startsWith('/v1/'))
      .map(([method, op]) => ({ route: `${method} ${path}`, op: op as Json })),
  );
  expect(writes.map(({ route }) => route).sort()).toEqual([
    'delete /v1/agents/{identity}',
    'post /v1/agents',
    'post /v1/agents/{identity}/token',
    'post /v1/messages',
    'post /v1/messages/read',
    'post /v1/messages/{id}/archive',
    'post /v1/messages/{id}/read',
    'post /v1/messages/{id}/unarchive',
    'post /v1/tasks/{id}/claim',
    'post /v1/tasks/{id}/transition',
  ]);
  for (const { route, op } of writes) {
    const conflict = op.responses['409'];
    expect([route, conflict?.content?.['application/json']?.schema]).toEqual([
      route,
      { $ref: '#/components/schemas/ErrorEnvelope' },
    ]);
    expect([route, conflict.description]).toEqual([
      route,
      expect.stringMatching(
        /CONCURRENCY_CONFLICT.*none of this request's events was written.*Send the same request again: it is safe/,
      ),
    ]);
    // Only a send takes an Idempotency-Key (the others refuse the header): only its advice names one.
    expect([route, conflict.description.includes('Idempotency-Key')]).toEqual([route, route === 'post /v1/messages']);
  }

  // The real answers: every write, its appends refused by the store's revision check each time.
  const direct = (
    await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: ['@b', '@c'], subject: 's', body: 'b' } })
  ).body.messageId as string;
  const archived = (await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 's', body: 'b' } }))
    .body.messageId as string;
  expect((await server.call('POST', `/v1/messages/${archived}/archive`, { token: t['@b'] })).status).toBe(200);
  const task = { state: 'Submitted', input: { parts: [{ kind: 'text', text: 'raced' }] } };
  const taskId = (
    await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: 'AGENT:*', subject: 't', body: 'b', task } })
  ).body.messageId as string;
  const admin = server.adminToken;
  const keyed = { 'idempotency-key': 'raced-1' };
  const requests: Record<string, [string, string, Parameters<TestServer['call']>[2]]> = {
    'post /v1/agents': ['POST', '/v1/agents', { token: admin, body: { identity: '@late' } }],
    'delete /v1/agents/{identity}': ['DELETE', '/v1/agents/@c', { token: admin }],
    'post /v1/agents/{identity}/token': ['POST', '/v1/agents/@c/token', { token: admin }],
    'post /v1/messages': [
      'POST',
      '/v1/messages',
      { token: t['@a'], body: { to: '@b', subject: 's', body: 'b' }, headers: keyed },
    ],
    'post /v1/messages/read': ['POST', '/v1/messages/read', { token: t['@b'], body: { messageId: direct } }],
    'post /v1/messages/{id}/read': ['POST', `/v1/messages/${direct}/read`, { token: t['@c'] }],
    'post /v1/messages/{id}/archive': ['POST', `/v1/messages/${direct}/archive`, { token: t['@b'] }],
    'post /v1/messages/{id}/unarchive': ['POST', `/v1/messages/${archived}/unarchive`, { token: t['@b'] }],
    'post /v1/tasks/{id}/claim': ['POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'] }],
    'post /v1/tasks/{id}/transition': ['POST', `/v1/tasks/${taskId}/transition`, { token: t['@a'], body: { to: 'Canceled' } }],
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const envelope = ajv.compile(served.components.schemas.ErrorEnvelope as Json);
  const store = server.mailbox.eventStore;
  const append = store.append.bind(store);
  // Every revision-checked append loses (the seen marks a listing writes append at 'any': left alone).
  const losing = jest
    .spyOn(store, 'append')
    .mockImplementation((stream, events, expected) =>
      expected === 'any'
        ? append(stream, events, expected)
        : Promise.reject(new ConcurrencyConflict(stream, String(expected), 'later')),
    );
  try {
    for (const { route } of writes) {
      const before = await server.eventCount();
      const [method, path, options] = requests[route];
      const answer = await server.call(method, path, options);
      expect([route, answer.status, answer.body.code, typeof answer.body.stream]).toEqual([
        route,
        409,
        'CONCURRENCY_CONFLICT',
        'string',
      ]);
      expect([route, envelope(answer.body)]).toEqual([route, true]);
      expect([route, await server.eventCount()]).toEqual([route, before]);
    }
  } finally {
    losing.mockRestore();
  }

  // As the description says: the same request sent again (the send with its key, twice) is written once.
  const [, , send] = requests['post /v1/messages'];
  const first = await server.call('POST', '/v1/messages', send);
  const again = await server.call('POST', '/v1/messages', send);
  expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
  expect(again.body.messageId).toBe(first.body.messageId);
  const claimed = await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'] });
  expect([claimed.status, claimed.body.assignee]).toEqual([200, '@b']);
});

test('every query parameter of the served document says what it does (GET /v1/messages priority had no description)', async () => {
  const { body: served } = await server.call<Json>('GET', '/openapi.json');
  const undescribed = Object.entries(served.paths as Json).flatMap(([route, methods]) =>
    Object.entries(methods as Json).flatMap(([method, operation]) =>
      ((operation as Json).parameters ?? [])
        .filter((parameter: Json) => parameter.in === 'query' && !parameter.description && !parameter.schema?.description)
        .map((parameter: Json) => `${method.toUpperCase()} ${route} ${parameter.name}`),
    ),
  );
  expect(undescribed).toEqual([]);
  const priority = (served.paths['/v1/messages'].get.parameters as Json[]).find((parameter) => parameter.name === 'priority');
  expect(priority!.description).toBe('only messages of this priority (low, normal or high)');
});
