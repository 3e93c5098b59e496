/**
 * Every 503 says when to come back: Retry-After (seconds), and the envelope's retryAfterSeconds agreeing with it, as a
 * 429 RATE_LIMITED always did. Before, a 503 (Redis away, views lost and being rebuilt, /readyz not ready) carried no
 * Retry-After: clients and proxies retried at once, adding load to a node that was already struggling, and an MCP
 * model was never told when to try again.
 */
import path from 'node:path';
import Redis from 'ioredis';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { tempDir } from '../support/fixtures';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { startTestServer, type HttpResult, type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
const restartable = process.env.REDIS_URL ? it.skip : it;
let namespaces = 0;
let server: TestServer | null = null;
let releaseLook: (() => void) | null = null;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  releaseLook?.();
  releaseLook = null;
  await server?.close();
  server = null;
});

/** A 503 UNAVAILABLE whose Retry-After is a whole number of seconds, the one its envelope states. */
function expectRetryLater(what: string, answer: HttpResult): void {
  const retryAfter = answer.headers.get('retry-after');
  expect({ what, status: answer.status, code: answer.body.code, retryAfter }).toEqual({
    what,
    status: 503,
    code: 'UNAVAILABLE',
    retryAfter: expect.stringMatching(/^[1-9]\d*$/),
  });
  expect({ what, retryAfterSeconds: answer.body.retryAfterSeconds }).toEqual({ what, retryAfterSeconds: Number(retryAfter) });
}

/** Holds the projector's look at the views until the returned function is called (reads come before it finds them gone). */
function holdProjectorLook(held: TestServer): () => void {
  const views = held.mailbox.projections;
  const binding = views.binding.bind(views);
  let lookAgain: () => void = () => undefined;
  const looked = new Promise<void>((resolve) => (lookAgain = resolve));
  views.binding = async () => {
    await looked;
    return binding();
  };
  return () => {
    views.binding = binding;
    lookAgain();
  };
}

const toolCall = (name: string, args: object = {}) => ({
  headers: { accept: 'application/json, text/event-stream' },
  body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } },
});

describe('a 503 says when to retry (Retry-After, and retryAfterSeconds in its envelope)', () => {
  restartable('views lost (Redis flushed): each refused read, over HTTP and MCP, says when to retry', async () => {
    server = await startTestServer({ redisUrl: redis.url, redisNamespace: `retryafter${process.pid}n${++namespaces}` });
    const tokens = await server.register(['@a', '@b', '@c']);
    const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 's', body: 'x' } });
    expect(sent.status).toBe(201);
    releaseLook = holdProjectorLook(server);
    const before = await server.eventCount();
    const admin = new Redis(redis.url);
    try {
      expect(await admin.flushall()).toBe('OK');
    } finally {
      admin.disconnect();
    }

    for (const identity of ['@a', '@b', '@c']) {
      const count = await server.call('GET', '/v1/inbox/count', { token: tokens[identity] });
      expectRetryLater(`GET /v1/inbox/count as ${identity}`, count);
      expect(count.body.message).toContain('hold nothing of this mailbox');
      expectRetryLater(`GET /v1/messages as ${identity}`, await server.call('GET', '/v1/messages', { token: tokens[identity] }));
    }
    // A tool call is answered as the call (200), its envelope saying when to retry, as a rate-limited call's does.
    const overMcp = await server.call('POST', '/mcp', { token: tokens['@b'], ...toolCall('unread_count') });
    expect(overMcp.status).toBe(200);
    const envelope = overMcp.body.result.structuredContent;
    expect({ isError: overMcp.body.result.isError, code: envelope.code, retryAfterSeconds: envelope.retryAfterSeconds }).toEqual({
      isError: true,
      code: 'UNAVAILABLE',
      retryAfterSeconds: 5,
    });
    expect(JSON.parse(overMcp.body.result.content[0].text)).toEqual(envelope);
    expect(await server.eventCount()).toBe(before); // a refused listing wrote no seen marks

    releaseLook();
    releaseLook = null;
    await waitFor(async () => (await server!.call('GET', '/v1/inbox/count', { token: tokens['@b'] })).status === 200, {
      timeoutMs: 15_000,
      everyMs: 20,
      what: 'reads served again',
    });
    const served = await server.call('GET', '/v1/inbox/count', { token: tokens['@b'] });
    expect({ unread: served.body.unreadCount, retryAfter: served.headers.get('retry-after') }).toEqual({
      unread: 1,
      retryAfter: null,
    });
  });

  restartable('Redis down: reads, /readyz and the MCP endpoint say when to retry; Redis back: no Retry-After', async () => {
    server = await startTestServer({
      redisUrl: redis.url,
      redisNamespace: `retryafter${process.pid}n${++namespaces}`,
      redisTimeoutMs: 1_000,
    });
    const tokens = await server.register(['@a', '@b', '@c']);
    await redis.kill!();
    try {
      // The positive signal: readiness has seen Redis gone.
      let ready = await server.call('GET', '/readyz');
      await waitFor(
        async () => {
          ready = await server!.call('GET', '/readyz');
          return ready.status === 503;
        },
        { timeoutMs: 15_000, everyMs: 50, what: '/readyz to see Redis gone' },
      );
      expectRetryLater('GET /readyz', ready);
      expect(ready.body.checks.projectionStore.ok).toBe(false);
      for (const identity of ['@a', '@b', '@c']) {
        const count = await server.call('GET', '/v1/inbox/count', { token: tokens[identity] });
        expectRetryLater(`GET /v1/inbox/count as ${identity}`, count);
        expect(count.body.message).toMatch(/Redis/);
      }
      const mcpList = await server.call('POST', '/mcp', {
        token: tokens['@c'],
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_messages', arguments: {} } },
      });
      expect(mcpList.status).toBe(200);
      expect(mcpList.body.result.structuredContent).toMatchObject({ code: 'UNAVAILABLE', retryAfterSeconds: 5 });
    } finally {
      await redis.start!();
    }
    await waitFor(async () => (await server!.call('GET', '/readyz')).status === 200, {
      timeoutMs: 20_000,
      everyMs: 50,
      what: 'ready again',
    });
    expect((await server.call('GET', '/readyz')).headers.get('retry-after')).toBeNull();
  });

  // Views of another log stay so until an operator acts: told to retry every 5 s, a client retried forever.
  it('views of another log: no Retry-After, "Operator action needed" naming the remedy, over HTTP and MCP', async () => {
    const namespace = `retryafter${process.pid}n${++namespaces}`;
    server = await startTestServer({ redisUrl: redis.url, redisNamespace: namespace });
    const tokens = await server.register(['@a', '@b', '@c']);
    const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 's', body: 'x' } });
    expect(sent.status).toBe(201);
    releaseLook = holdProjectorLook(server);
    const before = await server.eventCount();
    const keys = new RedisKeys(namespace);
    const admin = new Redis(redis.url);
    try {
      const active = (await admin.get(keys.active)) ?? keys.defaultPrefix;
      expect(await admin.set(keys.logOf(active), 'another-log')).toBe('OK');
    } finally {
      admin.disconnect();
    }
    for (const identity of ['@a', '@b', '@c']) {
      const count = await server.call('GET', '/v1/inbox/count', { token: tokens[identity] });
      expect({
        status: count.status,
        code: count.body.code,
        error: count.body.error,
        retryAfter: count.headers.get('retry-after'),
      }).toEqual({
        status: 503,
        code: 'UNAVAILABLE',
        error: 'Operator action needed',
        retryAfter: null,
      });
      expect(count.body.retryAfterSeconds).toBeUndefined();
      expect(count.body.operatorAction).toContain('mailbox projections rebuild --take-over');
      expect(count.body.message).toContain('belong to another event log (another-log)');
    }
    const overMcp = await server.call('POST', '/mcp', { token: tokens['@b'], ...toolCall('unread_count') });
    const envelope = overMcp.body.result.structuredContent;
    expect({
      isError: overMcp.body.result.isError,
      error: envelope.error,
      retryAfterSeconds: envelope.retryAfterSeconds,
    }).toEqual({
      isError: true,
      error: 'Operator action needed',
      retryAfterSeconds: undefined,
    });
    expect(envelope.operatorAction).toContain('--take-over');
    expect(await server.eventCount()).toBe(before);
  });

  // The embedded default (SQLite log, SQLite views file) answered the same refusal with Retry-After: 5.
  it('views of another log in the SQLite views file: no Retry-After, "Operator action needed" naming the remedy, over HTTP and MCP', async () => {
    const dir = tempDir('retryafter-sqlite-');
    server = await startTestServer({ eventStoreUrl: `sqlite:${dir}/events.sqlite` });
    const tokens = await server.register(['@a', '@b', '@c']);
    const sent = await server.call('POST', '/v1/messages', { token: tokens['@a'], body: { to: '@b', subject: 's', body: 'x' } });
    expect(sent.status).toBe(201);
    await waitFor(async () => (await server!.call('GET', '/v1/inbox/count', { token: tokens['@b'] })).body.unreadCount === 1, {
      timeoutMs: 15_000,
      everyMs: 20,
      what: "@b's unread count to show the message",
    });
    const before = await server.eventCount();
    // Another log's views in the file (as a copy of another mailbox's views file, or a take-over by another log, leaves it).
    const db = openSqliteDatabase(path.join(dir, 'views.sqlite'));
    try {
      db.pragma('busy_timeout = 5000');
      const active = (db.prepare("SELECT value FROM views_meta WHERE key = 'active'").get() as { value: string }).value;
      db.prepare(`UPDATE ${active}_state SET log_identity = 'another-log' WHERE id = 1`).run();
    } finally {
      db.close();
    }
    for (const identity of ['@a', '@b', '@c']) {
      for (const route of ['/v1/inbox/count', '/v1/messages']) {
        const answer = await server.call('GET', route, { token: tokens[identity] });
        expect({
          what: `GET ${route} as ${identity}`,
          status: answer.status,
          code: answer.body.code,
          error: answer.body.error,
          retryAfter: answer.headers.get('retry-after'),
          retryAfterSeconds: answer.body.retryAfterSeconds,
        }).toEqual({
          what: `GET ${route} as ${identity}`,
          status: 503,
          code: 'UNAVAILABLE',
          error: 'Operator action needed',
          retryAfter: null,
          retryAfterSeconds: undefined,
        });
        expect(answer.body.operatorAction).toContain('mailbox projections rebuild --take-over');
        expect(answer.body.message).toContain('belong to another event log (another-log)');
        expect(answer.body.message).not.toContain('retry later');
      }
    }
    const overMcp = await server.call('POST', '/mcp', { token: tokens['@c'], ...toolCall('unread_count') });
    const envelope = overMcp.body.result.structuredContent;
    expect({
      isError: overMcp.body.result.isError,
      error: envelope.error,
      retryAfterSeconds: envelope.retryAfterSeconds,
    }).toEqual({
      isError: true,
      error: 'Operator action needed',
      retryAfterSeconds: undefined,
    });
    expect(envelope.operatorAction).toContain('--take-over');
    // Readiness says the same once the projector has looked (its look comes each second).
    let ready = await server.call('GET', '/readyz');
    await waitFor(
      async () => {
        ready = await server!.call('GET', '/readyz');
        return ready.status === 503;
      },
      { timeoutMs: 15_000, everyMs: 50, what: '/readyz to see the views are another log' },
    );
    expect({ error: ready.body.error, retryAfter: ready.headers.get('retry-after') }).toEqual({
      error: 'Operator action needed',
      retryAfter: null,
    });
    expect(ready.body.operatorAction).toContain('mailbox projections rebuild --take-over');
    expect(await server.eventCount()).toBe(before);
  });
});
