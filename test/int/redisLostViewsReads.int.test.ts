/**
 * Redis lost its data while the mailbox runs (restarted empty): until the projector has rebuilt the views as far as
 * they stood before the loss, a read is refused (503 UNAVAILABLE, saying the views are being rebuilt), never answered
 * from views that hold only part of the log. Found by a black-box run: during the rebuild GET /v1/inbox/count
 * answered 200 with 0 for an agent with unread mail, and the inbox listed nothing.
 */
import Redis from 'ioredis';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { READ_MODEL_VERSION } from '../../src/projections/readModel/readModelVersion';
import { holdApplies } from '../support/heldApplies';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
const restartable = process.env.REDIS_URL ? it.skip : it;
let namespaces = 0;
let server: TestServer | null = null;
/** Lets a held rebuild go on, so that the server can close after a failed test. */
let releaseHeld: (() => void) | null = null;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  releaseHeld?.();
  releaseHeld = null;
  await server?.close();
  server = null;
});

async function send(token: string, to: string, subject: string): Promise<string> {
  const { status, body } = await server!.call('POST', '/v1/messages', { token, body: { to, subject, body: 'x' } });
  expect(status).toBe(201);
  return body.messageId as string;
}

const READS = ['/v1/inbox/count', '/v1/messages', '/v1/agents', '/v1/tasks'];

/**
 * Holds the projector's look at the views (each second, and at each apply) until the returned function is called, so
 * that reads made meanwhile come before it finds the views gone, as they may in production.
 */
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

describe('Redis restarted empty while the mailbox runs: no read is answered from the half-rebuilt views', () => {
  restartable(
    'reads answer 503 naming the rebuild until the views hold what they held before; then the exact counts',
    async () => {
      server = await startTestServer({ redisUrl: redis.url, redisNamespace: `lostreads${process.pid}n${++namespaces}` });
      const tokens = await server.register(['@a', '@b', '@c']);
      const toB = [
        await send(tokens['@a'], '@b', 'one'),
        await send(tokens['@c'], '@b', 'two'),
        await send(tokens['@a'], '@b', 'three'),
      ];
      await send(tokens['@a'], 'AGENT:*', 'to all');
      const read = await server.call('POST', '/v1/messages/read', { token: tokens['@b'], body: { messageIds: toB.slice(0, 2) } });
      expect(read.status).toBe(200);
      const counts = async (identity: string) => server!.call('GET', '/v1/inbox/count', { token: tokens[identity] });
      expect((await counts('@b')).body.unreadCount).toBe(2);
      expect((await counts('@c')).body.unreadCount).toBe(1);

      const eventsBefore = await server.eventCount();
      const held = holdApplies(server.mailbox.projections);
      releaseHeld = () => held.release();
      await redis.restartEmpty!();
      // The positive signal: the projector found the views gone and its rebuild's first batch waits at the gate.
      await waitFor(() => held.waiting > 0, { timeoutMs: 15_000, everyMs: 20, what: 'the rebuild of the lost views started' });
      await waitFor(
        async () => /are being rebuilt/.test((await server!.call('GET', '/readyz')).body.checks?.projections?.viewsProblem ?? ''),
        { timeoutMs: 15_000, everyMs: 20, what: 'the projector found the views lost' },
      );

      const refused = async (method: string, path: string, token: string, body?: object) => {
        const answer = await server!.call(method, path, { token, ...(body ? { body } : {}) });
        expect({ path, status: answer.status, code: answer.body.code }).toEqual({ path, status: 503, code: 'UNAVAILABLE' });
        expect(answer.body.message).toContain('are being rebuilt from the event log');
      };
      for (const identity of ['@a', '@b', '@c']) for (const path of READS) await refused('GET', path, tokens[identity]);
      await refused('GET', '/v1/heartbeat', server.adminToken);
      await refused('GET', `/v1/messages/${toB[2]}/delivery`, tokens['@a']);
      // Read-all lists the unread mail from the views: from half of them it would mark half, and say it marked all.
      await refused('POST', '/v1/messages/read', tokens['@b'], { all: true });
      const ready = await server.call('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.projections.viewsProblem).toContain('are being rebuilt from the event log');

      held.release();
      await waitFor(async () => (await counts('@b')).status === 200, {
        timeoutMs: 15_000,
        everyMs: 20,
        what: 'reads served again',
      });
      expect((await counts('@b')).body.unreadCount).toBe(2);
      expect((await counts('@c')).body.unreadCount).toBe(1);
      expect((await counts('@a')).body.unreadCount).toBe(0);
      expect(await server.eventCount()).toBe(eventsBefore); // nothing refused was written (a listing writes its seen marks)
      const inbox = await server.call('GET', '/v1/messages', { token: tokens['@b'] });
      expect(inbox.status).toBe(200);
      expect(inbox.body.messages).toHaveLength(4);
      expect((await server.call('GET', '/readyz')).status).toBe(200);
    },
  );

  restartable(
    'between Redis coming back empty and the projector finding out, a read is refused, never answered from nothing',
    async () => {
      server = await startTestServer({ redisUrl: redis.url, redisNamespace: `lostreads${process.pid}n${++namespaces}` });
      const tokens = await server.register(['@a', '@b', '@c']);
      await send(tokens['@a'], '@c', 'unread by c');
      const count = () => server!.call('GET', '/v1/inbox/count', { token: tokens['@c'] });
      expect((await count()).body.unreadCount).toBe(1);

      // The projector looks at the views each second (and at each apply; no mail is sent meanwhile): that look is
      // held, so that the reads below come before it finds the views gone, as they may in production.
      releaseHeld = holdProjectorLook(server);
      await redis.restartEmpty!();
      // The positive signal: the first answer that is not the outage's own (the server reached Redis again).
      let answer = await count();
      await waitFor(
        async () => {
          answer = await count();
          return !(
            answer.status === 503 &&
            /Redis/.test(answer.body.message) &&
            /unavailable|unreachable|reach/i.test(answer.body.message)
          );
        },
        { timeoutMs: 15_000, everyMs: 10, what: 'Redis reached again' },
      );
      expect({ status: answer.status, code: answer.body.code, unread: answer.body.unreadCount }).toEqual({
        status: 503,
        code: 'UNAVAILABLE',
        unread: undefined,
      });
      expect(answer.body.message).toContain("hold nothing of this mailbox's event log (Redis lost them, e.g. restarted empty)");
      releaseHeld();
      releaseHeld = null;
      await waitFor(async () => (await count()).status === 200, { timeoutMs: 15_000, everyMs: 20, what: 'reads served again' });
      expect((await count()).body.unreadCount).toBe(1);
    },
  );

  // FLUSHALL (or FLUSHDB) empties Redis while the server's connections stay open: the views' owner the server had
  // cached went on vouching for them, and until the projector's next look (each second) GET /v1/inbox/count answered
  // 200 with 0 and the inbox listed nothing for an agent with unread mail (found by a swarm run on a flushed Redis).
  restartable(
    'Redis flushed under a running server: reads are refused until the views are back, never answered from nothing',
    async () => {
      const namespace = `lostreads${process.pid}n${++namespaces}`;
      server = await startTestServer({ redisUrl: redis.url, redisNamespace: namespace });
      const tokens = await server.register(['@a', '@b', '@c']);
      await send(tokens['@a'], '@c', 'from a');
      await send(tokens['@b'], '@c', 'from b');
      await send(tokens['@a'], '@b', 'to b');
      const count = (identity: string) => server!.call('GET', '/v1/inbox/count', { token: tokens[identity] });
      const inbox = (identity: string) => server!.call('GET', '/v1/messages', { token: tokens[identity] });
      expect((await count('@c')).body.unreadCount).toBe(2);
      expect((await count('@b')).body.unreadCount).toBe(1);
      expect((await inbox('@c')).body.messages).toHaveLength(2);

      // The projector's look at the views (each second) is held, so that the reads below come before it finds them gone.
      releaseHeld = holdProjectorLook(server);
      const eventsBefore = await server.eventCount();
      const admin = new Redis(redis.url);
      try {
        expect(await admin.flushall()).toBe('OK');
      } finally {
        admin.disconnect();
      }

      for (const identity of ['@c', '@b', '@a']) {
        const counted = await count(identity);
        expect({ identity, status: counted.status, code: counted.body.code, unread: counted.body.unreadCount }).toEqual({
          identity,
          status: 503,
          code: 'UNAVAILABLE',
          unread: undefined,
        });
        expect(counted.body.message).toContain("hold nothing of this mailbox's event log (Redis lost them");
        const listed = await inbox(identity);
        expect({ identity, status: listed.status, code: listed.body.code, messages: listed.body.messages }).toEqual({
          identity,
          status: 503,
          code: 'UNAVAILABLE',
          messages: undefined,
        });
      }
      expect(await server.eventCount()).toBe(eventsBefore); // a refused listing wrote no seen marks

      releaseHeld();
      releaseHeld = null;
      await waitFor(async () => (await count('@c')).status === 200, {
        timeoutMs: 15_000,
        everyMs: 20,
        what: 'reads served again',
      });
      expect((await count('@c')).body.unreadCount).toBe(2);
      expect((await count('@b')).body.unreadCount).toBe(1);
      expect((await count('@a')).body.unreadCount).toBe(0);
      expect((await inbox('@c')).body.messages.map((m: { subject: string }) => m.subject).sort()).toEqual(['from a', 'from b']);
      // Rebuilt from nothing by this version's rules, and recorded so: the next start took them for views of rules
      // version 1 (none recorded) and rebuilt them all again beside the served ones.
      const keys = new RedisKeys(namespace);
      const look = new Redis(redis.url);
      try {
        expect(await look.get(keys.rulesOf(keys.defaultPrefix))).toBe(READ_MODEL_VERSION);
      } finally {
        look.disconnect();
      }
    },
  );

  // A load balancer routes by /readyz. Right after a FLUSHALL the reads above were refused while /readyz, which looked
  // only at the lag (checkpoint null, lag 4) and at what the projector had found (nothing yet: its look comes each
  // second), answered 200: traffic kept coming to a node that refused it.
  restartable('Redis flushed: /readyz is not ready before the first refused read, and ready once reads are served', async () => {
    server = await startTestServer({ redisUrl: redis.url, redisNamespace: `lostreads${process.pid}n${++namespaces}` });
    const tokens = await server.register(['@a', '@b', '@c']);
    await send(tokens['@a'], '@c', 'from a');
    await send(tokens['@b'], '@c', 'from b');
    await send(tokens['@c'], '@b', 'to b');
    const count = (identity: string) => server!.call('GET', '/v1/inbox/count', { token: tokens[identity] });
    expect((await server.call('GET', '/readyz')).status).toBe(200);

    // The projector's look is held, so that this is the window before it finds the views gone, as in production.
    releaseHeld = holdProjectorLook(server);
    const eventsBefore = await server.eventCount();
    const admin = new Redis(redis.url);
    try {
      expect(await admin.flushall()).toBe('OK');
    } finally {
      admin.disconnect();
    }

    const ready = await server.call('GET', '/readyz');
    expect({ status: ready.status, code: ready.body.code, retryAfter: ready.headers.get('retry-after') }).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      retryAfter: '5',
    });
    expect(ready.body.retryAfterSeconds).toBe(5);
    expect(ready.body.checks.projections.ok).toBe(false);
    expect(ready.body.checks.projections.viewsProblem).toContain("hold nothing of this mailbox's event log (Redis lost them");
    for (const identity of ['@a', '@b', '@c']) {
      const refused = await count(identity);
      expect({ identity, status: refused.status, code: refused.body.code }).toEqual({
        identity,
        status: 503,
        code: 'UNAVAILABLE',
      });
      expect((await server.call('GET', '/readyz')).status).toBe(503); // not ready for as long as reads are refused
    }
    expect(await server.eventCount()).toBe(eventsBefore);

    releaseHeld();
    releaseHeld = null;
    await waitFor(async () => (await server!.call('GET', '/readyz')).status === 200, {
      timeoutMs: 15_000,
      everyMs: 20,
      what: 'ready again',
    });
    const served = await Promise.all(
      ['@a', '@b', '@c'].map(async (identity) => [identity, (await count(identity)).body.unreadCount]),
    );
    expect(Object.fromEntries(served)).toEqual({ '@a': 0, '@b': 1, '@c': 2 });
  });
});
