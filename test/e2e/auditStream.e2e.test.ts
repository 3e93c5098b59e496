/**
 * What the console reads, over real HTTP (issue 16): the admin/auditor event
 * stream (live, resumable, filtered), the recent rejections (written where
 * commands are rejected, never as events), a message's story, the agents table.
 * Agents are refused all of it; every rejection here is shown to write no event.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readSse } from '../../src/adapters/http/client/sseReader';
import { buildOpenApiDocument } from '../../src/adapters/http/openapi';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { subscribe } from './wakeSubscriber';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let server: TestServer;
let t: Record<string, string>;

interface Stream {
  status: number;
  events: Array<{ event: string; data: any; id?: string }>;
  next(predicate: (e: { event: string; data: any }) => boolean): Promise<{ event: string; data: any; id?: string }>;
  /** Settles when the stream ends (the server closed it, or the test did). */
  ended: Promise<void>;
  close(): void;
}
const streams: Stream[] = [];

/** Opens GET /v1/audit/stream and records its events; resolves once the stream said `ready`. */
async function openStream(token: string, query = '', headers: Record<string, string> = {}, url = server.url): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(`${url}/v1/audit/stream${query}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: abort.signal,
  });
  if (response.status !== 200)
    throw Object.assign(new Error('refused'), { status: response.status, body: await response.json() });
  const events: Stream['events'] = [];
  const waiters: Array<() => void> = [];
  const ended = (async () => {
    try {
      for await (const raw of readSse(response.body!)) {
        events.push({ event: raw.event, data: JSON.parse(raw.data), ...(raw.id ? { id: raw.id } : {}) });
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      /* closed by the test */
    }
  })();
  const stream: Stream = {
    status: response.status,
    events,
    ended,
    async next(predicate) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such event; got ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100).unref();
        });
      }
    },
    close: () => abort.abort(),
  };
  streams.push(stream);
  await stream.next((e) => e.event === 'ready');
  return stream;
}
const entries = (stream: Stream) => stream.events.filter((e) => e.event === 'entry').map((e) => e.data);

beforeAll(async () => {
  server = await startTestServer({ wakeSlaMs: 0 }); // every message that woke nobody is unwoken at once;
  t = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@aud'], 'auditor')) };
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server.close();
});

const send = (from: string, body: Record<string, unknown>) => server.call('POST', '/v1/messages', { token: t[from], body });

describe('GET /v1/audit/stream', () => {
  let start: string;
  let direct: string;
  let broadcast: string;
  let reply: string;
  let fromC: string;

  test('an auditor sees every accepted command live, in log order, with a broadcast audience size', async () => {
    const live = await openStream(t['@aud']);
    start = live.events[0].data.after;
    direct = (await send('@a', { to: '@b', subject: 'hello b', body: 'x' })).body.messageId;
    broadcast = (await send('@b', { to: 'AGENT:*', subject: 'all hands', body: 'x' })).body.messageId;
    reply = (await send('@b', { to: '@a', subject: 're', body: 'x', inReplyTo: direct })).body.messageId;
    fromC = (await send('@c', { to: '@a', subject: 'from c', body: 'x' })).body.messageId;
    await server.call('POST', `/v1/messages/${direct}/read`, { token: t['@b'] });
    await live.next((e) => e.data.type === 'ReceiptRead');
    const seen = entries(live);
    expect(seen.map((e) => [e.type, e.actor])).toEqual([
      ['MessageSent', '@a'],
      ['MessageSent', '@b'],
      ['BroadcastDelivered', '@b'],
      ['BroadcastDelivered', '@b'],
      ['MessageSent', '@b'],
      ['MessageSent', '@c'],
      ['ReceiptRead', '@b'],
    ]);
    expect(seen[1]).toMatchObject({ messageId: broadcast, to: 'AGENT:*', audienceSize: 2, subject: 'all hands' }); // @a and @c (auditors get no broadcasts)
    expect(seen.map((e) => BigInt(e.position))).toEqual(
      [...seen.map((e) => BigInt(e.position))].sort((x, y) => (x < y ? -1 : 1)),
    );
    expect(live.events.filter((e) => e.event === 'entry').map((e) => e.id)).toEqual(seen.map((e) => e.position));
  });

  test('filters by agent, by thread (reads included: they carry no thread) and by type, from a position', async () => {
    const byAgent = await openStream(t['@aud'], `?after=${start}&agent=@c`);
    const byThread = await openStream(t['@aud'], `?after=${start}&threadId=${direct}`); // a thread is named by its first message
    const byType = await openStream(t['@aud'], `?after=${start}&type=ReceiptRead,MessageArchived`);
    await byAgent.next((e) => e.data.messageId === fromC);
    await byThread.next((e) => e.data.type === 'ReceiptRead');
    await byType.next((e) => e.data.type === 'ReceiptRead');
    expect(entries(byAgent).map((e) => [e.type, e.messageId])).toEqual([
      ['BroadcastDelivered', broadcast],
      ['MessageSent', fromC],
    ]);
    expect(entries(byThread).map((e) => [e.type, e.messageId])).toEqual([
      ['MessageSent', direct],
      ['MessageSent', reply],
      ['ReceiptRead', direct],
    ]);
    expect(entries(byType).map((e) => e.type)).toEqual(['ReceiptRead']);
  });

  test('resumes after the Last-Event-ID a reconnecting reader sends (the admin token too)', async () => {
    const all = await openStream(server.adminToken, `?after=${start}`);
    const third = (await all.next((e) => e.data.type === 'ReceiptRead')) && entries(all)[2];
    const resumed = await openStream(server.adminToken, '', { 'last-event-id': third.position });
    await resumed.next((e) => e.data.type === 'ReceiptRead');
    expect(entries(resumed).map((e) => e.position)).toEqual(
      entries(all)
        .slice(3)
        .map((e) => e.position),
    );
  });

  test('agents, a wrong token and a query it cannot honour are refused with the envelope, before any stream', async () => {
    const before = await server.eventCount();
    await expect(openStream(t['@a'])).rejects.toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    await expect(openStream('not-a-token')).rejects.toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED' } });
    await expect(openStream(t['@aud'], '?type=MessageSnet')).rejects.toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED' },
    });
    await expect(openStream(t['@aud'], '?agent=neo')).rejects.toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    await expect(openStream(t['@aud'], '?since=1')).rejects.toMatchObject({ status: 400, body: { code: 'UNKNOWN_FIELD' } });
    expect(await server.eventCount()).toBe(before);
  });

  // A start past the head was accepted and waited silently, then skipped every event up to it as they arrived (a
  // Last-Event-ID kept across a restore from an older backup): refused as `mailbox audit replay --from` refuses it.
  // The stream went on showing the log to a token that every request refused (rotated, or its auditor retired).
  test('a rotated or retired auditor token ends its open streams at once with `revoked`; other readers carry on', async () => {
    const { '@aud2': aud2 } = await server.register(['@aud2'], 'auditor');
    const [mine, other] = [await openStream(aud2), await openStream(t['@aud'])];
    const rotated = await server.call('POST', '/v1/agents/@aud2/token', { token: server.adminToken });
    expect(rotated.status).toBe(201);
    expect((await mine.next((e) => e.event === 'revoked')).data).toEqual({ identity: '@aud2', reason: 'token rotated' });
    await mine.ended; // the server closed it
    const retiring = await openStream(rotated.body.token);
    expect((await server.call('DELETE', '/v1/agents/@aud2', { token: server.adminToken })).status).toBe(200);
    expect((await retiring.next((e) => e.event === 'revoked')).data).toEqual({ identity: '@aud2', reason: 'agent retired' });
    await retiring.ended;
    const later = (await send('@a', { to: '@b', subject: 'after the revocations', body: 'x' })).body.messageId;
    await other.next((e) => e.data.messageId === later); // positive signal: entries after the revocations flow
    for (const ended of [mine, retiring]) {
      expect(ended.events[ended.events.length - 1].event).toBe('revoked');
      expect(entries(ended).map((e) => e.messageId)).not.toContain(later);
    }
    expect(other.events.some((e) => e.event === 'revoked')).toBe(false);
    other.close();
  });

  // Each stream reads the log at every append, and an auditor could open them without end (600 doubled a send's
  // latency): capped per auditor like an agent's wake streams; the admin (the operator) is not.
  test('an auditor holds at most MAILBOX_MAX_WAKE_STREAMS_PER_AGENT streams; a closed one frees its place; the admin is not capped', async () => {
    const capped = await startTestServer({ maxWakeStreamsPerAgent: 2 });
    const open = (token: string) =>
      fetch(`${capped.url}/v1/audit/stream`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
    const held: AbortController[] = [];
    try {
      const { '@ops': ops, '@ops2': ops2 } = await capped.register(['@ops', '@ops2'], 'auditor');
      const hold = async (token: string) => {
        const abort = new AbortController();
        const response = await fetch(`${capped.url}/v1/audit/stream`, {
          headers: { authorization: `Bearer ${token}` },
          signal: abort.signal,
        });
        expect(response.status).toBe(200);
        held.push(abort);
        return abort;
      };
      const first = await hold(ops);
      await hold(ops);
      const refused = await open(ops);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', limit: 2 });
      await hold(ops2); // another auditor has places of its own
      for (let i = 0; i < 3; i++) await hold(capped.adminToken);
      first.abort();
      await waitFor(
        async () => {
          const again = await open(ops);
          if (again.status === 200) held.push({ abort: () => void again.body?.cancel() } as AbortController);
          else await again.body?.cancel();
          return again.status === 200;
        },
        { what: 'a place freed by the closed stream' },
      );
    } finally {
      for (const abort of held) abort.abort();
      await capped.close();
    }
  });

  test('a start past the log head is refused, by after and by Last-Event-ID, naming the head', async () => {
    const before = await server.eventCount();
    const head = (await server.mailbox.eventStore.headPosition())!;
    const past = (head + 1000n).toString();
    await expect(openStream(t['@aud'], `?after=${past}`)).rejects.toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND', field: 'after', after: past, head: head.toString() },
    });
    await expect(openStream(server.adminToken, '', { 'last-event-id': past })).rejects.toMatchObject({
      status: 404,
      body: {
        code: 'NOT_FOUND',
        field: 'Last-Event-ID',
        message: expect.stringContaining(`Last-Event-ID ${past} is past the log head (the log head is ${head})`),
      },
    });
    // The head itself is a start the log has: live from there.
    const atHead = await openStream(t['@aud'], `?after=${head}`);
    expect(atHead.events[0]).toEqual({ event: 'ready', data: { after: head.toString() } });
    expect(await server.eventCount()).toBe(before);
  });
});

describe('GET /v1/audit/rejections', () => {
  test('a rejected send is recorded with its agent, code, recipient and suggestion, and writes no event', async () => {
    const before = await server.eventCount();
    const refused = await send('@a', { to: '@b!', subject: 's', body: 'x' });
    const shape = await send('@c', { to: 'AGENT:gpt', subject: 's', body: 'x' });
    const anonymous = await server.call('DELETE', '/v1/agents/@b', { token: 'wrong' });
    expect([refused.status, shape.status, anonymous.status]).toEqual([400, 400, 401]);
    expect(await server.eventCount()).toBe(before);
    const { status, body } = await server.call('GET', '/v1/audit/rejections', { token: t['@aud'] });
    expect(status).toBe(200);
    expect(body).toMatchObject({ capacity: 1000, backend: 'memory' });
    expect(body.rejections.slice(0, 3)).toEqual([
      expect.objectContaining({ agent: null, command: 'retire_agent', surface: 'http', code: 'UNAUTHENTICATED', status: 401 }),
      expect.objectContaining({ agent: '@c', role: 'agent', command: 'send', code: 'INVALID_RECIPIENT_SHAPE', to: 'AGENT:gpt' }),
      expect.objectContaining({ agent: '@a', command: 'send', code: 'INVALID_RECIPIENT_SHAPE', to: '@b!' }),
    ]);
    expect(JSON.stringify(body)).not.toContain('wrong'); // a refused token is never recorded
  });

  // A refused list send was recorded without its recipients (only a string `to` was kept): the console's
  // Rejections showed no recipient for it, though the wrong entry is what an operator looks for.
  test('a rejected send to a list is recorded with the list, the wrong entry in it', async () => {
    const before = await server.eventCount();
    const refused = await send('@a', { to: ['@b', 'neo-gpt'], subject: 's', body: 'x' });
    expect([refused.status, refused.body.code]).toEqual([400, 'INVALID_RECIPIENT_SHAPE']);
    expect(await server.eventCount()).toBe(before);
    const { body } = await server.call('GET', '/v1/audit/rejections?limit=1', { token: t['@aud'] });
    expect(body.rejections).toEqual([
      expect.objectContaining({ agent: '@a', command: 'send', code: 'INVALID_RECIPIENT_SHAPE', to: '@b, neo-gpt' }),
    ]);
  });

  test('a rejected MCP tool call is recorded too, as mcp', async () => {
    const client = new Client({ name: 'console-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t['@b']}` } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'add_message', arguments: { to: 'neo-gpt', subject: 's', body: 'x' } });
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
    const { body } = await server.call('GET', '/v1/audit/rejections?limit=1', { token: server.adminToken });
    expect(body.rejections).toEqual([
      expect.objectContaining({ agent: '@b', command: 'send', surface: 'mcp', code: 'INVALID_RECIPIENT_SHAPE', to: 'neo-gpt' }),
    ]);
  });

  test('agents cannot read the record', async () => {
    const { status, body } = await server.call('GET', '/v1/audit/rejections', { token: t['@a'] });
    expect([status, body.code]).toEqual([403, 'FORBIDDEN']);
  });
});

describe('the console reads', () => {
  test("GET /v1/audit/messages/{id}: a broadcast's story, per recipient; agents refused, unknown ids 404", async () => {
    const sent = await send('@a', { to: 'AGENT:*', subject: 'story', body: 'x' });
    await server.call('POST', `/v1/messages/${sent.body.messageId}/read`, { token: t['@c'] });
    const story = await server.call('GET', `/v1/audit/messages/${sent.body.messageId}`, { token: t['@aud'] });
    expect(story.status).toBe(200);
    expect(story.body.sent).toMatchObject({ from: '@a', to: 'AGENT:*', isBroadcast: true });
    const state = Object.fromEntries(story.body.recipients.map((r: any) => [r.identity, [!!r.deliveredAt, !!r.readAt]]));
    expect(state).toEqual({ '@b': [true, false], '@c': [true, true] }); // auditors are no broadcast's audience
    const refused = await server.call('GET', `/v1/audit/messages/${sent.body.messageId}`, { token: t['@b'] });
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    const unknown = await server.call('GET', '/v1/audit/messages/00000000-0000-4000-8000-000000000000', { token: t['@aud'] });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
  });

  test('GET /v1/audit/unwoken: the alarm as /metrics counts it, oldest first; agents refused, a bad limit refused', async () => {
    const sent = await send('@a', { to: '@b', subject: 'no wake stream', body: 'x' });
    const id = sent.body.messageId as string;
    let alarm: any;
    for (let attempt = 0; attempt < 200; attempt++) {
      alarm = (await server.call('GET', '/v1/audit/unwoken?limit=1000', { token: t['@aud'] })).body;
      if (alarm.messages.some((m: any) => m.messageId === id)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(alarm).toMatchObject({ slaMs: server.mailbox.config.wakeSlaMs, count: alarm.messages.length });
    expect(alarm.messages.find((m: any) => m.messageId === id)).toEqual({
      messageId: id,
      sender: '@a',
      sentAt: expect.any(String),
      recipientCount: 1,
      escalatedAt: null,
    });
    const sentAts = alarm.messages.map((m: any) => m.sentAt);
    expect(sentAts).toEqual([...sentAts].sort());
    const metrics = (await server.call('GET', '/metrics', { token: server.adminToken })).body as string;
    expect(Number(/^mailbox_unwoken_messages (\d+)$/m.exec(metrics)![1])).toBeGreaterThanOrEqual(alarm.count);
    const countOnly = (await server.call('GET', '/v1/audit/unwoken?limit=0', { token: server.adminToken })).body;
    expect([countOnly.count >= alarm.count, countOnly.messages]).toEqual([true, []]);
    const before = await server.eventCount();
    const refused = await server.call('GET', '/v1/audit/unwoken', { token: t['@a'] });
    const bad = await server.call('GET', '/v1/audit/unwoken?limit=1001', { token: t['@aud'] });
    const unknown = await server.call('GET', '/v1/audit/unwoken?sla=1', { token: t['@aud'] });
    expect([refused.status, refused.body.code, bad.status, bad.body.code, unknown.status, unknown.body.code]).toEqual([
      403,
      'FORBIDDEN',
      400,
      'VALIDATION_FAILED',
      400,
      'UNKNOWN_FIELD',
    ]);
    expect(await server.eventCount()).toBe(before);
  });

  test("GET /v1/audit/agents agrees with /v1/heartbeat and /v1/agents; GET /v1/whoami names the token's holder", async () => {
    const [table, heartbeat, agents] = await Promise.all([
      server.call('GET', '/v1/audit/agents', { token: t['@aud'] }),
      server.call('GET', '/v1/heartbeat', { token: server.adminToken }),
      server.call('GET', '/v1/agents', { token: t['@a'] }),
    ]);
    const counts = Object.fromEntries(
      heartbeat.body.agents.map((h: any) => [h.identity, [h.unreadCount, h.oldestUnreadAt, h.lastActivityAt]]),
    );
    expect(table.body.agents.map((a: any) => a.identity)).toEqual(agents.body.agents.map((a: any) => a.identity));
    for (const row of table.body.agents)
      expect([row.unreadCount, row.oldestUnreadAt, row.lastActivityAt]).toEqual(counts[row.identity] ?? [0, null, null]);
    const limits = { maxBodyBytes: 65536 }; // the server's own (the default here): `mailbox mcp` states it
    expect((await server.call('GET', '/v1/whoami', { token: t['@aud'] })).body).toEqual({
      identity: '@aud',
      role: 'auditor',
      limits,
    });
    expect((await server.call('GET', '/v1/whoami', { token: server.adminToken })).body).toEqual({
      identity: 'admin',
      role: 'admin',
      limits,
    });
    expect((await server.call('GET', '/v1/audit/agents', { token: t['@a'] })).status).toBe(403);
  });
});

test('the JSON answers conform to their documented OpenAPI schemas', async () => {
  const document = buildOpenApiDocument() as any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const { body: sent } = await send('@a', { to: '@b', subject: 'documented', body: 'x' });
  for (const [path, documented] of [
    ['/v1/audit/rejections', '/v1/audit/rejections'],
    ['/v1/audit/agents', '/v1/audit/agents'],
    ['/v1/audit/series', '/v1/audit/series'],
    [`/v1/audit/messages/${sent.messageId}`, '/v1/audit/messages/{id}'],
    ['/v1/whoami', '/v1/whoami'],
  ]) {
    const { status, body } = await server.call('GET', path, { token: t['@aud'] });
    const validate = ajv.compile(document.paths[documented].get.responses['200'].content['application/json'].schema);
    expect([path, status, validate(body) ? 'valid' : ajv.errorsText(validate.errors)]).toEqual([path, 200, 'valid']);
  }
  expect(document.paths['/v1/audit/stream'].get.responses['200'].content).toHaveProperty(['text/event-stream']);
});

test("the delivery ledger's events concern their agent and message: a wake, a seen mark and a reply request pass the agent and thread filters, in words", async () => {
  // They had no words and named nobody: ?agent=@c never showed @c woken or seeing its mail, ?threadId= none of them,
  // and the console's row read only the type and 'system:wake-streams'.
  // What earlier tests sent @c is seen first, so that its listing below marks only this test's message.
  expect((await server.call('GET', '/v1/messages?limit=200', { token: t['@c'] })).status).toBe(200);
  await server.mailbox.flushSeenMarks();
  const before = (await server.mailbox.eventStore.headPosition())!.toString();
  const byAgent = await openStream(t['@aud'], `?after=${before}&agent=@c`);
  const wakes = await subscribe(server.url, t['@c']);
  try {
    const sent = await send('@a', { to: '@c', subject: 'answer me', body: 'x', expectsReplyBy: '1h' });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    await wakes.next((e) => e.event === 'wake' && e.data.messageId === id);
    expect((await server.call('GET', '/v1/messages', { token: t['@c'] })).status).toBe(200);
    await server.mailbox.wakeRecorder.flush();
    await server.mailbox.flushSeenMarks();
    const ledger = (await server.call('GET', `/v1/messages/${id}/delivery`, { token: t['@a'] })).body;
    const [row] = ledger.recipients;
    const byThread = await openStream(t['@aud'], `?after=${before}&threadId=${id}`);
    for (const stream of [byAgent, byThread]) await stream.next((e) => e.data.type === 'MessagesSeen');
    await byThread.next((e) => e.data.type === 'WakeObserved');
    await byAgent.next((e) => e.data.type === 'WakeObserved');
    const woken = {
      type: 'WakeObserved',
      actor: 'system:wake-streams',
      agents: ['@c'],
      messageId: id,
      recipient: '@c',
      detail: `woken via stream at ${row.woken.at}`,
    };
    const seen = {
      type: 'MessagesSeen',
      actor: '@c',
      agents: ['@c'],
      recipient: '@c',
      messageIds: [id],
      detail: `saw 1 message at ${row.seen.at} (listed or opened, which does not mark it read)`,
    };
    const requested = {
      type: 'ReplyRequested',
      actor: '@a',
      agents: ['@a', '@c'],
      messageId: id,
      detail: `every recipient's reply expected by ${ledger.replyDueBy}`,
    };
    const sentEntry = { type: 'MessageSent', messageId: id, agents: ['@a', '@c'] };
    const byPosition = (stream: Stream) => entries(stream).sort((x, y) => (BigInt(x.position) < BigInt(y.position) ? -1 : 1));
    // The reply request is the sender's (@a's) act, asked of @c: in @c's thread and in its agent flow.
    expect(byPosition(byAgent)).toEqual([
      expect.objectContaining(sentEntry),
      expect.objectContaining(requested),
      expect.objectContaining(woken),
      expect.objectContaining(seen),
    ]);
    expect(byPosition(byThread)).toEqual([
      expect.objectContaining(sentEntry),
      expect.objectContaining(requested),
      expect.objectContaining(woken),
      expect.objectContaining({ ...seen, threadId: id }),
    ]);
  } finally {
    wakes.close();
  }
});

test("a reply request shows under every agent it was asked of (a list's, a broadcast's audience), even when its send is before the stream's start", async () => {
  // It named its sender alone: ?agent=@c never showed that a reply was asked of @c (the event names no recipient).
  const before = (await server.mailbox.eventStore.headPosition())!.toString();
  const flows = {
    '@a': await openStream(t['@aud'], `?after=${before}&agent=@a`),
    '@b': await openStream(t['@aud'], `?after=${before}&agent=@b`),
    '@c': await openStream(t['@aud'], `?after=${before}&agent=@c`),
  };
  const list = await send('@a', { to: ['@b', '@c'], subject: 'both of you', body: 'x', expectsReplyBy: '1h' });
  const all = await send('@b', { to: 'AGENT:*', subject: 'everyone', body: 'x', expectsReplyBy: '1h' });
  expect([list.status, all.status]).toEqual([201, 201]);
  const requestOf = (stream: Stream, messageId: string) =>
    stream.next((e) => e.data.type === 'ReplyRequested' && e.data.messageId === messageId);
  const concerned = async (messageId: string) =>
    Object.fromEntries(
      await Promise.all(
        Object.entries(flows).map(async ([who, stream]) => [who, (await requestOf(stream, messageId)).data.agents]),
      ),
    );
  expect(await concerned(list.body.messageId)).toEqual({
    '@a': ['@a', '@b', '@c'],
    '@b': ['@a', '@b', '@c'],
    '@c': ['@a', '@b', '@c'],
  });
  expect(await concerned(all.body.messageId)).toEqual({
    '@a': ['@b', '@a', '@c'],
    '@b': ['@b', '@a', '@c'],
    '@c': ['@b', '@a', '@c'],
  });
  // Started right after the send (its recipients not seen by this stream): the request is still @c's.
  const sentAt = entries(flows['@c']).find((e) => e.type === 'MessageSent' && e.messageId === list.body.messageId)!.position;
  const late = await openStream(t['@aud'], `?after=${sentAt}&agent=@c`);
  expect((await requestOf(late, list.body.messageId)).data).toMatchObject({ agents: ['@a', '@b', '@c'], actor: '@a' });
});

test('with Redis configured, rejections are kept in its capped stream (<namespace>:rejections), where every node reads them', async () => {
  const redis = await startRedis();
  const namespace = `console-${process.pid}`;
  const node = await startTestServer({ redisUrl: redis.url, redisNamespace: namespace, redisTimeoutMs: REDIS_TEST_TIMEOUT_MS });
  const reader = await connectRedis(redis.url, { name: 'console-e2e', timeoutMs: REDIS_TEST_TIMEOUT_MS });
  try {
    const [agent] = Object.values(await node.register(['@on-redis']));
    const refused = await node.call('POST', '/v1/messages', { token: agent, body: { to: 'AGENT:all', subject: 's', body: 'x' } });
    expect(refused.status).toBe(400);
    const { body } = await node.call('GET', '/v1/audit/rejections', { token: node.adminToken });
    expect(body).toMatchObject({ backend: 'redis', capacity: 1000 });
    expect(body.rejections).toEqual([
      expect.objectContaining({ agent: '@on-redis', code: 'INVALID_RECIPIENT_SHAPE', to: 'AGENT:all' }),
    ]);
    const stored = await reader.xrange(`${namespace}:rejections`, '-', '+');
    expect(stored.map(([, fields]) => JSON.parse(fields[1]))).toEqual(body.rejections);
  } finally {
    reader.disconnect();
    await node.close();
    await redis.stop();
  }
});

test("a server shutting down ends every open audit stream (the admin's too) with a shutdown event: its close waits for none", async () => {
  // An open console's live flow held `mailbox serve` for its whole 10 s shutdown grace ("shutdown took longer than
  // 10000 ms; exiting"): wake streams were ended at shutdown, audit streams were not, and the admin's were not even kept.
  const node = await startTestServer();
  const { '@aud2': auditor } = await node.register(['@aud2'], 'auditor');
  const admin = await openStream(node.adminToken, '', {}, node.url);
  const read = await openStream(auditor, '', {}, node.url);
  await Promise.all([node.close(), admin.ended, read.ended]);
  for (const stream of [admin, read])
    expect(stream.events.at(-1)).toEqual({ event: 'shutdown', data: { reason: 'server shutting down' } });
});
