/**
 * Acceptance (issue 5): the whole mailbox on EventStoreDB (adapter + real
 * client over gRPC, against the in-repo test double) when things go wrong:
 * a lost append acknowledgement, the server restarting under a live
 * subscription, the server down or hung. Three identities throughout.
 * (The core scenarios themselves run on this store in test/int/core*.int.test.ts.)
 */
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { isMailboxError, retryAfterSecondsOf } from '../../src/errors';
import {
  DELIVERY_STREAM,
  escalationStream,
  messageStream,
  replyOverdueStream,
  seenStream,
  taskStream,
} from '../../src/events/streams';
import { REFUSED_KEPT } from '../../src/application/seenMarks';
import { REFUSED_RETRY_MS } from '../../src/application/refusedStreams';
import { buildApiServer } from '../../src/server';
import type { HttpServer } from '../../src/adapters/http/httpServer';
import { startHeartbeat, type Heartbeat, type StartHeartbeatOptions } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { apiCaller } from '../support/apiCalls';
import { subscribe, type WakeSubscriber } from '../e2e/wakeSubscriber';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { ADMIN_TOKEN, allEvents, registerAgents, registrationEvent, tempDir } from '../support/fixtures';
import { EsdbEventStore } from '../../src/adapters/eventstore/esdbEventStore';
import { capture, runAuditCli } from '../support/auditCli';
import { runStatusCommand } from '../../src/cli/commands/projections';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let double: EsdbDouble;
let mailbox: Mailbox;

/** The mailbox's clock: real time plus whatever a test skipped ahead (time is the injected clock, not a sleep). */
let skippedMs = 0;
const clock = { now: () => new Date(Date.now() + skippedMs) };

/** The mailbox's warnings, as they are logged (a test waits for one as its signal that something was noticed). */
let warnings: string[] = [];
const recordingLogger = () =>
  pino({ level: 'warn' }, { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) });

/** Resolves once a warning containing `text` was logged. */
async function warned(text: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!warnings.some((message) => message.includes(text))) {
    if (Date.now() > deadline) throw new Error(`no warning '${text}' within ${timeoutMs} ms; got ${JSON.stringify(warnings)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A short deadline keeps "fails fast" fast in tests; production defaults to 5 s. Not shorter: at 400 ms the first read
 * of a freshly started mailbox (its log identity, over a new gRPC channel) once missed it during a full run (CI load).
 */
async function openMailbox(views: { redisUrl?: string; redisNamespace?: string; redisTimeoutMs?: number } = {}) {
  double = await EsdbDouble.start();
  skippedMs = 0;
  warnings = [];
  mailbox = await createMailbox(
    { eventStoreUrl: `${double.url}&defaultDeadline=1500`, adminToken: ADMIN_TOKEN, logLevel: 'silent', ...views },
    { logger: recordingLogger(), clock },
  );
  return registerAgents(mailbox, ['@a', '@b', '@c']);
}

/** Closed after each test, before the mailbox: an HTTP server, wake streams, heartbeat daemons a test opened. */
let closers: Array<() => unknown> = [];

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
  await mailbox?.close();
  await double?.close();
});

/** The mailbox's HTTP API on a free loopback port (closed after the test). */
async function serveHttp(served: Mailbox = mailbox): Promise<string> {
  const http: HttpServer = buildApiServer(served, pino({ level: 'silent' }));
  const url = await http.listen('127.0.0.1', 0);
  closers.push(() => http.close());
  return url;
}

/** An agent's wake stream over HTTP, synced (closed after the test). */
async function wakeStream(url: string, token: string): Promise<WakeSubscriber> {
  const stream = await subscribe(url, token);
  closers.push(() => stream.close());
  await stream.next((event) => event.event === 'sync');
  return stream;
}

const unreadOf = async (client: { unreadCount(): Promise<{ unread: number }> }) => (await client.unreadCount()).unread;

/** Polls (bounded) until `check` holds; the assertion after it states what must be true. */
async function eventually(check: () => Promise<boolean>, attempts = 100, everyMs = 50): Promise<void> {
  for (let i = 0; i < attempts && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, everyMs));
}

/** A mailbox started on the double's log, which must refuse to start (the refusal). */
const startRefused = () =>
  rejection(
    createMailbox(
      { eventStoreUrl: `${double.url}&defaultDeadline=1500`, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: recordingLogger(), clock },
    ),
  );

async function rejection(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isMailboxError(error)) throw new Error(`expected a MailboxError, got ${String(error)}`);
  return error;
}

describe.each(['error', 'silence'] as const)('an append whose acknowledgement is lost (%s)', (mode) => {
  it('is retried with the same event ids: the broadcast is stored exactly once and B and C each see it once', async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const appendsBefore = double.log.appendRequests;
    double.faults.dropNextAppendReply(mode);
    const sent = await a.send({ to: 'AGENT:*', subject: 'deploy', body: 'at 14:00' });
    expect(sent.recipients.sort()).toEqual(['@b', '@c']);
    expect(double.log.appendRequests - appendsBefore).toBe(2); // the lost one and its retry

    const ofMessage = (await allEvents(mailbox)).filter((e) => (e.data as { messageId?: string }).messageId === sent.messageId);
    expect(ofMessage.map((e) => e.type)).toEqual(['MessageSent', 'BroadcastDelivered', 'BroadcastDelivered']);
    expect(new Set(ofMessage.map((e) => e.eventId)).size).toBe(3);
    await eventually(async () => (await unreadOf(b)) === 1 && (await unreadOf(c)) === 1);
    expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([0, 1, 1]);
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([sent.messageId]);
  });
});

describe('the server restarts under the live projection subscription', () => {
  it('the projector resubscribes from its checkpoint and the views converge with no duplicate counts', async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const first = await a.send({ to: 'AGENT:*', subject: 'one', body: '1' });
    const direct = await b.send({ to: '@c', subject: 'two', body: '2' });
    expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([0, 1, 2]);
    const checkpoint = mailbox.runner.getStatus().checkpoint;
    const requestsBefore = double.subscriptionRequests.length;

    await double.stop();
    await warned('subscription dropped'); // the subscription noticed and started retrying
    await double.start();

    const third = await c.send({ to: 'AGENT:*', subject: 'three', body: '3' });
    await b.markRead({ messageId: first.messageId });
    await eventually(async () => (await unreadOf(a)) === 1 && (await unreadOf(b)) === 1 && (await unreadOf(c)) === 2);

    // Views converge exactly: A has C's broadcast; B has C's broadcast (A's was read); C has A's broadcast and B's note.
    expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([1, 1, 2]);
    expect((await c.listMessages({ status: 'unread' })).messages.map((m) => m.messageId).sort()).toEqual(
      [first.messageId, direct.messageId].sort(),
    );
    const heartbeats = await mailbox.asActor(ADMIN_ACTOR).heartbeats();
    expect(Object.fromEntries(heartbeats.agents.map((h) => [h.identity, h.unread]))).toEqual({ '@a': 1, '@b': 1, '@c': 2 });
    expect((await b.listMessages({ status: 'all' })).messages.map((m) => m.messageId).sort()).toEqual(
      [first.messageId, third.messageId].sort(),
    );

    // It resumed where it had stopped, not from the start of the log.
    const resubscriptions = double.subscriptionRequests.slice(requestsBefore);
    expect(resubscriptions.length).toBeGreaterThanOrEqual(1);
    expect(resubscriptions[0]).toMatchObject({ target: '$all', from: BigInt(checkpoint!) });
  });
});

describe('the event store is down', () => {
  it('commands fail fast with 503 UNAVAILABLE, write nothing, and reads from the projections keep working', async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const sent = await a.send({ to: '@b', subject: 'before', body: 'x' });
    const before = await allEvents(mailbox);

    await double.stop();
    const down = await rejection(a.send({ to: '@c', subject: 'during', body: 'y' }));
    expect(down.toJSON()).toMatchObject({ code: 'UNAVAILABLE', error: 'Service unavailable' });
    expect(down.status).toBe(503);
    expect((await rejection(b.markRead({ messageId: sent.messageId }))).code).toBe('UNAVAILABLE');

    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([sent.messageId]);
    expect(await b.unreadCount()).toMatchObject({ unread: 1 });
    expect(await unreadOf(c)).toBe(0);
    // Authentication (every HTTP request) keeps working from the last registry read once it is stale.
    skippedMs += 1100;
    const bAgain = await mailbox.as(b.token);
    expect(await unreadOf(bAgain)).toBe(1);
    expect((await rejection(mailbox.as('not-a-token'))).code).toBe('UNAUTHENTICATED');

    await double.start();
    // No command wrote anything. (B's listing above noted a seen mark, written off the request path once the
    // store answers again: a read's record, not a command's write; whether it lands before this look is timing.)
    expect((await allEvents(mailbox)).filter((event) => event.type !== 'MessagesSeen')).toEqual(before);
    await c.send({ to: '@a', subject: 'after', body: 'z' });
    await eventually(async () => (await unreadOf(a)) === 1);
    expect(await unreadOf(a)).toBe(1);
  });

  it('a hung server (accepts connections, never answers) fails commands at the deadline instead of hanging them', async () => {
    const { '@a': a, '@b': b } = await openMailbox();
    await a.send({ to: '@b', subject: 'before', body: 'x' });
    double.faults.freeze();
    const hung = await rejection(a.send({ to: '@b', subject: 'during', body: 'y' }));
    expect(hung.code).toBe('UNAVAILABLE');
    expect(await unreadOf(b)).toBe(1);
    double.faults.thaw();
    expect((await allEvents(mailbox)).filter((e) => e.type === 'MessageSent')).toHaveLength(1);
  });
});

describe('the node refuses what no retry mends: Operator action needed, no Retry-After, nothing written', () => {
  it('credentials refused (wrong, or changed under a running mailbox): the remedy names MAILBOX_EVENTSTORE_URL', async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const sent = await a.send({ to: ['@b', '@c'], subject: 'before', body: 'x' });
    const before = await allEvents(mailbox);

    double.faults.denyAccess();
    for (const attempt of [
      () => a.send({ to: '@c', subject: 'during', body: 'y' }),
      () => b.markRead({ messageId: sent.messageId }),
      () => c.markRead({ messageId: sent.messageId }),
    ]) {
      const refused = await rejection(attempt());
      expect(refused.toJSON()).toMatchObject({
        code: 'UNAVAILABLE',
        error: 'Operator action needed',
        message: expect.stringMatching(
          /^The event store \(EventStoreDB\) refused the mailbox access \(access-denied: .*\); the request was not applied\.$/,
        ),
        operatorAction: expect.stringContaining('MAILBOX_EVENTSTORE_URL'),
      });
      expect(retryAfterSecondsOf(refused)).toBeNull(); // no Retry-After: a client stops and reports it
    }
    double.faults.allowAccess();
    expect((await allEvents(mailbox)).filter((event) => event.type !== 'MessagesSeen')).toEqual(before);
  });

  it('a message stream deleted for good (tombstoned) under the mailbox: the remedy is a restore, not a retry', async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const sent = await a.send({ to: ['@b', '@c'], subject: 'doomed', body: 'x' });
    double.log.tombstone(messageStream(sent.messageId), { kind: 'any' });
    const before = await allEvents(mailbox);

    for (const reader of [b, c]) {
      const refused = await rejection(reader.markRead({ messageId: sent.messageId }));
      expect(refused.toJSON()).toMatchObject({
        code: 'UNAVAILABLE',
        error: 'Operator action needed',
        operatorAction: expect.stringContaining('restore the event log from a backup'),
      });
      expect(retryAfterSecondsOf(refused)).toBeNull();
    }
    // The rest of the mailbox works: another message is sent and read.
    const other = await c.send({ to: '@a', subject: 'unharmed', body: 'y' });
    await a.markRead({ messageId: other.messageId });
    expect((await allEvents(mailbox)).slice(0, before.length)).toEqual(before);
    expect((await allEvents(mailbox)).slice(before.length).map((event) => event.type)).toEqual(['MessageSent', 'ReceiptRead']);
  });
});

describe('a mailbox stream soft-deleted under the mailbox: loud (Operator action needed naming it), never decided on as empty', () => {
  const softDeleted = expect.stringMatching(
    /^The event store \(EventStoreDB\) holds mailbox stream mailbox-\S+ deleted under the mailbox \(a soft delete/,
  );

  it("a message's stream: its recipients' reads and receipts are refused, nothing written; other mail goes on", async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const sent = await a.send({ to: ['@b', '@c'], subject: 'acknowledged', body: 'x' });
    double.log.softDelete(messageStream(sent.messageId), { kind: 'any' });
    const before = await allEvents(mailbox);

    for (const attempt of [
      () => b.markRead({ messageId: sent.messageId }), // the write side holds it from the send: reads what came since
      () => c.getMessage(sent.messageId),
      () => a.getMessage(sent.messageId),
    ]) {
      const refused = await rejection(attempt());
      expect(refused.toJSON()).toMatchObject({
        code: 'UNAVAILABLE',
        error: 'Operator action needed',
        message: softDeleted,
        stream: messageStream(sent.messageId),
        operatorAction: expect.stringContaining('restore the event log from a backup'),
      });
      expect(retryAfterSecondsOf(refused)).toBeNull();
    }
    const other = await c.send({ to: '@a', subject: 'unharmed', body: 'y' });
    await a.markRead({ messageId: other.messageId });
    const after = await allEvents(mailbox);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((event) => event.type)).toEqual(['MessageSent', 'ReceiptRead']);
  });

  it('the agent registry: a registration is refused, not written to a stream that would then hold it alone', async () => {
    const { '@a': a } = await openMailbox();
    double.log.softDelete('mailbox-agents', { kind: 'any' });
    const appendsBefore = double.log.appendRequests;
    const before = await allEvents(mailbox);

    const refused = await rejection(mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@d' }));
    expect(refused.toJSON()).toMatchObject({
      code: 'UNAVAILABLE',
      error: 'Operator action needed',
      message: softDeleted,
      stream: 'mailbox-agents',
    });
    expect(retryAfterSecondsOf(refused)).toBeNull();
    expect(double.log.appendRequests).toBe(appendsBefore);
    expect(await allEvents(mailbox)).toEqual(before);
    expect(double.log.streamRecords('mailbox-agents')).toBe('not_found'); // not undeleted by a write
    // A send decides on the registry (its audience, its recipients): refused the same way, not decided on nobody.
    const send = await rejection(a.send({ to: '@b', subject: 'on an empty registry?', body: 'z' }));
    expect(send.toJSON()).toMatchObject({ error: 'Operator action needed', stream: 'mailbox-agents' });
    expect(double.log.appendRequests).toBe(appendsBefore);
  });

  it("the log's identity: the next start is refused, not given a second identity", async () => {
    await openMailbox();
    await mailbox.close();
    double.log.softDelete('mailbox.log-identity', { kind: 'any' });
    const appendsBefore = double.log.appendRequests;
    const refused = await startRefused();
    expect(refused.toJSON()).toMatchObject({
      error: 'Operator action needed',
      message: expect.stringContaining('holds mailbox stream mailbox.log-identity deleted under the mailbox'),
      stream: 'mailbox.log-identity',
    });
    expect(double.log.appendRequests).toBe(appendsBefore);
    expect(double.log.streamRecords('mailbox.log-identity')).toBe('not_found');
  });

  it("the log's identity deleted between a new log's look and its write: the start is refused, not given a second identity", async () => {
    double = await EsdbDouble.start();
    // Another start wrote the new log's identity after this one looked (none found), then an operator soft-deleted it:
    // the node takes this start's write and undeletes the stream from revision 1, the first identity hidden for good.
    double.faults.beforeNextAppendTo('mailbox.log-identity', () => {
      const first = { logIdentity: 'the-first-identity' };
      double.log.append('mailbox.log-identity', { kind: 'no_stream' }, [
        {
          id: '6f1c0a34-4b8e-4c55-9a43-2d7f6f0d1e01',
          type: 'LogIdentityAssigned',
          contentType: 'application/json',
          data: Buffer.from(JSON.stringify(first)),
          customMetadata: new Uint8Array(),
        },
      ]);
      double.log.softDelete('mailbox.log-identity', { kind: 'any' });
    });
    const refused = await startRefused();
    expect(refused.toJSON()).toMatchObject({
      error: 'Operator action needed',
      message: expect.stringContaining(
        'held mailbox stream mailbox.log-identity deleted under the mailbox (a soft delete) when this write reached it: ' +
          'the node took the write and made the stream readable again from revision 1 on',
      ),
      stream: 'mailbox.log-identity',
      operatorAction: expect.stringContaining('restore the event log from a backup'),
    });
    // Nothing of the mailbox was written under the second identity: no registration, no event in $all's mailbox streams.
    expect(double.log.records.filter((record) => record.streamName.startsWith('mailbox-'))).toEqual([]);
  });

  it('written to again after the soft delete (its earlier events hidden for good): a read from the start is refused', async () => {
    double = await EsdbDouble.start();
    const store = EsdbEventStore.connect(`${double.url}&defaultDeadline=1500`);
    try {
      const stream = 'mailbox-agents';
      await store.append(stream, [registrationEvent('@a'), registrationEvent('@b')], 'no_stream');
      double.log.softDelete(stream, { kind: 'any' });
      // A write expecting no stream that does not look first (another tool, an older mailbox, or a delete between a
      // look and the write): the node takes it and undeletes the stream from this revision on, @a and @b hidden for
      // good. The adapter learns it from the write's result and says so, not a success.
      const written = await rejection(store.append(stream, [registrationEvent('@c')], 'no_stream'));
      expect(written.toJSON()).toMatchObject({
        error: 'Operator action needed',
        message: expect.stringContaining(
          `held mailbox stream ${stream} deleted under the mailbox (a soft delete) when this write reached it: the node ` +
            'took the write and made the stream readable again from revision 2 on',
        ),
        stream,
        operatorAction: expect.stringContaining('restore the event log from a backup'),
      });
      expect(retryAfterSecondsOf(written)).toBeNull();
      const refused = await rejection(store.readStream(stream));
      expect(refused.toJSON()).toMatchObject({
        error: 'Operator action needed',
        message: expect.stringContaining(
          `holds mailbox stream ${stream} with its events before revision 2 deleted under the mailbox`,
        ),
        stream,
      });
      expect((await store.readStream(stream, 2n)).map((event) => event.revision)).toEqual([2n]); // from where it stands: read
    } finally {
      await store.close();
    }
  });
});

describe("a soft-deleted stream whose name is not new (a keyed send's message, a task): read before it is claimed new, refused, never undeleted", () => {
  /** Another node on the same log (or this one restarted): it holds nothing of any stream yet. Served over HTTP. */
  async function otherNodeServed(): Promise<string> {
    const other = await createMailbox(
      { eventStoreUrl: `${double.url}&defaultDeadline=1500`, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: recordingLogger(), clock },
    );
    closers.push(() => other.close());
    return serveHttp(other);
  }
  const post = (url: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const refusal = (stream: string) => ({
    code: 'UNAVAILABLE',
    error: 'Operator action needed',
    message: expect.stringMatching(
      new RegExp(
        `^The event store \\(EventStoreDB\\) holds mailbox stream ${stream} deleted under the mailbox \\(a soft delete.*` +
          'the request was not applied\\.$',
      ),
    ),
    stream,
    operatorAction: expect.stringContaining('restore the event log from a backup'),
  });

  it("a send repeated with its idempotency key on a node that never read the message: 503 Operator action needed, 'not applied', nothing written, the stream still deleted; restored, the repeat is the original's replay", async () => {
    const { '@a': a } = await openMailbox();
    const input = { to: ['@b', '@c'], subject: 'once', body: 'x' };
    const { messageId } = await a.send({ ...input, idempotencyKey: 'k-1' });
    const stream = messageStream(messageId);
    const url = await otherNodeServed();
    double.log.softDelete(stream, { kind: 'any' });
    const appendsBefore = double.log.appendRequests;

    const response = await post(url, '/v1/messages', a.token, input, { 'idempotency-key': 'k-1' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeNull(); // no retry mends it
    const body = (await response.json()) as { message: string };
    expect(body).toMatchObject(refusal(stream));
    expect(body.message).not.toContain("The write's own events are stored");
    expect(double.log.appendRequests).toBe(appendsBefore); // not one append, to that stream or any other
    expect(double.log.streamRecords(stream)).toBe('not_found'); // still soft-deleted: not undeleted by a write
    expect(double.log.currentRevision(stream)).toBe(0n); // its one event (the send) is kept, hidden, nothing after it

    // The operator's restore: the same repeat is answered as the original send's replay, nothing written.
    double.log.restore(stream);
    const replay = await post(url, '/v1/messages', a.token, input, { 'idempotency-key': 'k-1' });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toMatchObject({ messageId, status: 'sent', recipients: ['@b', '@c'] });
    expect(double.log.appendRequests).toBe(appendsBefore);
  });

  it('the agent registry, a registration by the admin on a node that never read it: 503 Operator action needed, nothing written, the registry still deleted', async () => {
    await openMailbox();
    const url = await otherNodeServed();
    double.log.softDelete('mailbox-agents', { kind: 'any' });
    const appendsBefore = double.log.appendRequests;

    const response = await post(url, '/v1/agents', ADMIN_TOKEN, { identity: '@d' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(await response.json()).toMatchObject(refusal('mailbox-agents'));
    expect(double.log.appendRequests).toBe(appendsBefore);
    expect(double.log.streamRecords('mailbox-agents')).toBe('not_found');
    expect(double.log.currentRevision('mailbox-agents')).toBe(2n); // @a, @b and @c, hidden; no @d after them
  });

  it("a task's stream, claimed on a node that never read it: 503 Operator action needed, nothing written, the first claim not hidden by a second", async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const { messageId: taskId } = await a.send({ to: 'AGENT:*', subject: 'for anyone', body: 'x', task: {} });
    await b.claimTask(taskId);
    const stream = taskStream(taskId);
    const url = await otherNodeServed();
    double.log.softDelete(stream, { kind: 'any' });
    const appendsBefore = double.log.appendRequests;

    const response = await post(url, `/v1/tasks/${taskId}/claim`, c.token, {});
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(await response.json()).toMatchObject(refusal(stream));
    expect(double.log.appendRequests).toBe(appendsBefore);
    expect(double.log.streamRecords(stream)).toBe('not_found');
    expect(double.log.currentRevision(stream)).toBe(0n); // @b's claim, hidden; no claim by @c after it
  });
});

describe('soft-deleted streams written without a look first (unchecked, or claimed new): refused, never undeleted by the write', () => {
  const softDeleted = (stream: string) =>
    expect.stringContaining(`holds mailbox stream ${stream} deleted under the mailbox (a soft delete`);
  const restore = expect.stringContaining('restore the event log from a backup');
  const mailboxEventTypes = (events: Array<{ type: string; data: unknown }>) =>
    events.map((event) => `${event.type} ${(event.data as { recipient?: string }).recipient ?? ''}`.trim());

  it("the delivery ledger's stream and a recipient's seen marks: nothing written to them, said once naming them and the remedy; the other recipient's marks are written", async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const url = await serveHttp();
    const call = apiCaller(() => url);
    const streams = { '@b': await wakeStream(url, b.token), '@c': await wakeStream(url, c.token) };
    const sendAndSee = async (subject: string) => {
      const sent = await call('POST', '/v1/messages', a.token, { to: ['@b', '@c'], subject, body: 'x' });
      expect(sent.status).toBe(201);
      const messageId = sent.body.messageId as string;
      for (const [identity, stream] of Object.entries(streams)) {
        await stream.next((event) => event.event === 'wake' && event.data.messageId === messageId);
        const listed = await call('GET', '/v1/messages', identity === '@b' ? b.token : c.token);
        expect(listed.body.messages.map((m: { messageId: string }) => m.messageId)).toContain(messageId);
      }
      return messageId;
    };
    // The first message's wakes and seen marks are written (the streams now hold events), then both streams are
    // soft-deleted under the mailbox.
    const first = await sendAndSee('before');
    const before = await allEvents(mailbox);
    expect(mailboxEventTypes(before.filter((e) => e.type === 'WakeObserved' || e.type === 'MessagesSeen')).sort()).toEqual([
      'MessagesSeen @b',
      'MessagesSeen @c',
      'WakeObserved @b',
      'WakeObserved @c',
    ]);
    double.log.softDelete('mailbox-deliveries', { kind: 'any' });
    double.log.softDelete(seenStream('@b'), { kind: 'any' });

    const second = await sendAndSee('after');
    const after = await allEvents(mailbox); // flushes the seen marks and the observed wakes first
    // What the second message wrote: its own events and @c's seen mark; no observed wake, no mark of @b's.
    const added = after.slice(before.length);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(mailboxEventTypes(added.filter((e) => e.type === 'WakeObserved' || e.type === 'MessagesSeen'))).toEqual([
      'MessagesSeen @c',
    ]);
    expect(double.log.streamRecords('mailbox-deliveries')).toBe('not_found'); // not undeleted by a write
    expect(double.log.streamRecords(seenStream('@b'))).toBe('not_found');

    // What the sender sees: the first message woken and seen by both; the second seen by @c only, woken by nobody
    // (those observations are not in the log: the ledger says what it can prove).
    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
    const ledger = async (messageId: string) => {
      const answer = await call('GET', `/v1/messages/${messageId}/delivery`, a.token);
      expect(answer.status).toBe(200);
      return Object.fromEntries(
        answer.body.recipients.map((row: { recipient: string; woken: unknown; seen: unknown }) => [
          row.recipient,
          { woken: row.woken !== null, seen: row.seen !== null },
        ]),
      );
    };
    expect(await ledger(first)).toEqual({ '@b': { woken: true, seen: true }, '@c': { woken: true, seen: true } });
    expect(await ledger(second)).toEqual({ '@b': { woken: false, seen: false }, '@c': { woken: false, seen: true } });

    // The log says each once, at error, naming the stream and the remedy (not "the store does not answer").
    const said = (stream: string) => warnings.filter((line) => line.includes(`holds mailbox stream ${stream} deleted`));
    expect(said('mailbox-deliveries')).toEqual([
      expect.stringMatching(
        /^could not record observed wakes \(the delivery ledger\): .*An operator must act: .*restore the event log from a backup/,
      ),
    ]);
    expect(said(seenStream('@b'))).toEqual([
      expect.stringMatching(
        /^seen marks: not written to mailbox-seen-@b \(kept, nothing written\): .*restore the event log from a backup/,
      ),
    ]);
    expect(warnings.some((line) => line.includes('does not answer'))).toBe(false);
  });

  it("a refused seen stream and delivery ledger: /readyz says so (degraded, naming them and the remedy), /metrics counts them; a refused recipient's marks never crowd out another's", async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const url = await serveHttp();
    const call = apiCaller(() => url);
    const sendAndList = async (subject: string, readers: Array<{ token: string }>) => {
      const sent = await call('POST', '/v1/messages', a.token, { to: ['@b', '@c'], subject, body: 'x' });
      expect(sent.status).toBe(201);
      for (const reader of readers) expect((await call('GET', '/v1/messages', reader.token)).status).toBe(200);
      return sent.body.messageId as string;
    };
    await sendAndList('before', [b, c]); // both seen streams and the ledger's hold events
    await allEvents(mailbox);
    const readyBefore = await call('GET', '/readyz', '');
    expect(readyBefore.status).toBe(200);
    expect(readyBefore.body.status).toBe('ready');
    mailbox.wakeRecorder.observed('m-0', '@b', 'stream'); // a wake the ledger keeps (the stream is refused below)
    double.log.softDelete('mailbox-deliveries', { kind: 'any' });
    double.log.softDelete(seenStream('@b'), { kind: 'any' });

    const second = await sendAndList('refused', [b]); // @b's mark of it: refused, kept
    await warned(`seen marks: not written to ${seenStream('@b')}`);
    const before = await allEvents(mailbox);
    // @b reads on for as long as nobody mends the stream: a hundred thousand marks, each kept until written.
    mailbox.seenMarks.note(
      '@b',
      Array.from({ length: 100_000 }, (_, i) => `msg-${i}`),
    );
    const third = await sendAndList('after', [c]);
    const after = await allEvents(mailbox);
    const added = after.slice(before.length);
    // @c's marks of the second and third messages are written (they were dropped: @b's marks filled the bound they
    // shared), @b's none.
    expect(mailboxEventTypes(added.filter((e) => e.type === 'WakeObserved' || e.type === 'MessagesSeen'))).toEqual([
      'MessagesSeen @c',
    ]);
    const seenByC = (added.find((e) => e.type === 'MessagesSeen')!.data as { messageIds: string[] }).messageIds;
    expect([...seenByC].sort()).toEqual([second, third].sort());
    expect(double.log.streamRecords('mailbox-deliveries')).toBe('not_found');
    expect(double.log.streamRecords(seenStream('@b'))).toBe('not_found');

    // Where an operator looks: /readyz serves (200) and says degraded, naming each stream, its remedy, what waits.
    const ready = await call('GET', '/readyz', '');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'degraded',
      eventStore: {
        ok: true,
        refusedStreams: {
          count: 2,
          streams: [
            {
              writer: 'delivery ledger',
              stream: 'mailbox-deliveries',
              error: softDeleted('mailbox-deliveries'),
              operatorAction: restore,
              waiting: expect.any(Number),
              dropped: 0,
            },
            {
              writer: 'seen marks',
              stream: seenStream('@b'),
              error: softDeleted(seenStream('@b')),
              operatorAction: restore,
              waiting: REFUSED_KEPT,
              dropped: 100_001 - REFUSED_KEPT,
            },
          ],
        },
      },
    });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain(`mailbox_seen_marks_dropped_total ${100_001 - REFUSED_KEPT}`);
    expect(metrics).toContain('mailbox_wake_observations_dropped_total 0');
    expect(metrics).toContain('mailbox_refused_streams{writer="seen marks"} 1');
    expect(metrics).toContain('mailbox_refused_streams{writer="delivery ledger"} 1');
    // Said once, naming the stream: the marks not kept for @b are never shown seen.
    expect(warnings.filter((line) => line.includes('new marks are not recorded'))).toEqual([
      `seen marks: ${seenStream('@b')} is refused and holds as many kept marks as it may (${REFUSED_KEPT}); @b's new ` +
        "marks are not recorded until an operator acts (the other recipients' marks are)",
    ]);
  });

  // Its `dropped` counted only the marks dropped after a flush first met the refusal: those dropped under the bound all
  // recipients share (an outage's backlog), before any flush tried the stream, were left out (/readyz said 0).
  it("a refused seen stream's dropped counts its marks dropped since it last took one, before the refusal was seen too", async () => {
    const { '@a': a, '@b': b } = await openMailbox();
    const url = await serveHttp();
    const call = apiCaller(() => url);
    const stream = seenStream('@b');
    expect((await call('POST', '/v1/messages', a.token, { to: ['@b', '@c'], subject: 'x', body: 'x' })).status).toBe(201);
    expect((await call('GET', '/v1/messages', b.token)).status).toBe(200);
    await allEvents(mailbox); // @b's seen stream holds a mark
    double.log.softDelete(stream, { kind: 'any' });
    const refusedStream = async () => {
      const listed: Array<{ stream: string }> = (await call('GET', '/readyz', '')).body.eventStore.refusedStreams?.streams ?? [];
      return listed.find((refused) => refused.stream === stream);
    };
    // Before a flush tries @b's stream: one mark of @b's kept, @c's backlog fills the bound the marks share, and @b's
    // next two marks are dropped under it.
    mailbox.seenMarks.note('@b', ['m-kept']);
    mailbox.seenMarks.note(
      '@c',
      Array.from({ length: 99_999 }, (_, i) => `m-${i}`),
    );
    mailbox.seenMarks.note('@b', ['m-dropped-1', 'm-dropped-2']);
    await mailbox.seenMarks.flush();
    await warned(`seen marks: not written to ${stream}`);
    expect(await refusedStream()).toMatchObject({ writer: 'seen marks', waiting: 1, dropped: 2 });
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('mailbox_seen_marks_dropped_total 2');

    // Restored, the stream takes the kept mark; deleted again, a later refusal counts from that mark.
    double.log.restore(stream);
    skippedMs += REFUSED_RETRY_MS;
    await mailbox.seenMarks.flush();
    expect(await refusedStream()).toBeUndefined();
    double.log.softDelete(stream, { kind: 'any' });
    mailbox.seenMarks.note('@b', ['m-later']);
    await mailbox.seenMarks.flush();
    expect(await refusedStream()).toMatchObject({ writer: 'seen marks', waiting: 1, dropped: 0 });
  });

  it('a refused seen stream is tried again every 5 s of the clock, not at every flush; restored, its kept marks are written and /readyz is ready again', async () => {
    const { '@a': a, '@b': b, '@c': c } = await openMailbox();
    const url = await serveHttp();
    const call = apiCaller(() => url);
    const sendAndList = async (subject: string) => {
      const sent = await call('POST', '/v1/messages', a.token, { to: ['@b', '@c'], subject, body: 'x' });
      expect(sent.status).toBe(201);
      for (const reader of [b, c]) expect((await call('GET', '/v1/messages', reader.token)).status).toBe(200);
      return sent.body.messageId as string;
    };
    await sendAndList('before');
    await allEvents(mailbox); // both seen streams hold a mark
    const stream = seenStream('@b');
    double.log.softDelete(stream, { kind: 'any' });
    // Every append the mailbox sends to @b's seen stream, taken or refused.
    let attempts = 0;
    const append = double.log.append.bind(double.log);
    double.log.append = (streamName, expected, events) => {
      if (streamName === stream) attempts += 1;
      return append(streamName, expected, events);
    };
    const marksOf = (events: Array<{ type: string; data: unknown }>, recipient: string) =>
      events
        .filter((e) => e.type === 'MessagesSeen' && (e.data as { recipient: string }).recipient === recipient)
        .flatMap((e) => (e.data as { messageIds: string[] }).messageIds);

    const refused = await sendAndList('while refused');
    await warned(`seen marks: not written to ${stream}`);
    const before = await allEvents(mailbox);
    expect(marksOf(before, '@c')).toContain(refused);
    expect(marksOf(before, '@b')).not.toContain(refused);
    // 12.4 s of the clock, a flush each 200 ms (a request that flushes, or the flush timer): the first refusal, then
    // one try 5 s after it and one 10 s after it. Each flush tried it (about 62 here, five a second in production).
    attempts = 0;
    for (let step = 0; step < 62; step++) {
      skippedMs += 200;
      await mailbox.seenMarks.flush();
    }
    expect(attempts).toBe(2);
    expect(double.log.streamRecords(stream)).toBe('not_found');
    expect(marksOf(await allEvents(mailbox), '@b')).toEqual(marksOf(before, '@b')); // nothing written to it meanwhile
    const ready = await call('GET', '/readyz', '');
    expect(ready.body).toMatchObject({
      status: 'degraded',
      eventStore: { refusedStreams: { count: 1, streams: [{ writer: 'seen marks', stream, waiting: 1, dropped: 0 }] } },
    });
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('mailbox_refused_streams{writer="seen marks"} 1');

    // An operator restores the stream: at its next try (the flush timer, no call of the test's) @b's kept mark is written.
    double.log.restore(stream);
    skippedMs += 5_000;
    await waitFor(async () => (await call('GET', '/readyz', '')).body.status === 'ready', {
      what: "@b's kept mark written after the restore",
      timeoutMs: 10_000,
    });
    const after = await allEvents(mailbox);
    expect(marksOf(after.slice(before.length), '@b')).toEqual([refused]);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('mailbox_refused_streams{writer="seen marks"} 0');
  });

  /** A heartbeat nudging idle agents (idle after 1 s) to `target`, ticking when asked, /metrics on a free port. */
  const heartbeatNudging = async (target: RecordingNudgeTarget, options: Partial<StartHeartbeatOptions> = {}) => {
    const heartbeat: Heartbeat = await startHeartbeat(mailbox, {
      targets: [target],
      logger: recordingLogger(),
      clock,
      schedule: false,
      settings: { idleMs: 1_000, metricsPort: 0 },
      ...options,
    });
    closers.push(() => heartbeat.stop());
    return heartbeat;
  };

  it("the delivery ledger's stream deleted under the heartbeat: its nudges' wakes are kept, nothing written, /healthz 503 wakes_refused names the stream and the remedy, /metrics has its drop counter", async () => {
    const { '@a': a } = await openMailbox();
    await a.send({ to: ['@b', '@c'], subject: 'for two', body: 'x', wakeSuppressed: true });
    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
    double.log.softDelete(DELIVERY_STREAM, { kind: 'any' });
    const before = await allEvents(mailbox);
    const target = new RecordingNudgeTarget('webhook');
    const heartbeat = await heartbeatNudging(target);
    skippedMs += 60_000; // @b and @c idle with unread mail: nudged

    await heartbeat.tick();
    await heartbeat.settled();
    expect(new Set(target.nudges.map((nudge) => nudge.identity))).toEqual(new Set(['@b', '@c']));
    let health: Response | undefined;
    await eventually(async () => (health = await fetch(`${heartbeat.metricsUrl}/healthz`)).status === 503);
    expect(health!.status).toBe(503);
    expect(await health!.json()).toMatchObject({
      healthy: false,
      alarms: [
        {
          alarm: 'wakes_refused',
          writer: 'delivery ledger',
          stream: DELIVERY_STREAM,
          error: softDeleted(DELIVERY_STREAM),
          operatorAction: restore,
          dropped: 0,
        },
      ],
    });
    expect(await allEvents(mailbox)).toEqual(before);
    expect(double.log.streamRecords(DELIVERY_STREAM)).toBe('not_found'); // not undeleted by the recorder
    const metrics = await (await fetch(`${heartbeat.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^mailbox_heartbeat_wake_observations_dropped_total 0$/m);
  });

  it("the heartbeat's wakes beyond its bound while the ledger's stream is refused: dropped, counted on /metrics and in the /healthz alarm; the kept one written once restored", async () => {
    const { '@a': a } = await openMailbox();
    double.log.softDelete(DELIVERY_STREAM, { kind: 'any' });
    const target = new RecordingNudgeTarget('webhook');
    const heartbeat = await heartbeatNudging(target, { wakeObservationsKept: 1 });
    const nudgeAbout = async (to: string) => {
      const { messageId } = await a.send({ to, subject: `for ${to}`, body: 'x', wakeSuppressed: true });
      expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
      skippedMs += 60_000; // idle with unread mail: nudged
      const nudged = target.nudges.length;
      await heartbeat.tick();
      await heartbeat.settled();
      expect(target.nudges.slice(nudged).map((nudge) => nudge.identity)).toEqual([to]); // its newest unread: this one
      return messageId;
    };
    const wakesObserved = async () =>
      (await allEvents(mailbox))
        .filter((event) => event.type === 'WakeObserved')
        .map((event) => (event.data as { recipient: string; messageId: string }).messageId);
    const toB = await nudgeAbout('@b'); // its wake kept (the stream refused), as many as the bound keeps
    const toC = await nudgeAbout('@c'); // its wake dropped
    expect(await wakesObserved()).toEqual([]);
    const health = await fetch(`${heartbeat.metricsUrl}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      healthy: false,
      alarms: [{ alarm: 'wakes_refused', stream: DELIVERY_STREAM, operatorAction: restore, waiting: 1, dropped: 1 }],
    });
    const metrics = async () =>
      (await (await fetch(`${heartbeat.metricsUrl}/metrics`)).text()).match(
        /^mailbox_heartbeat_wake_observations_dropped_total .*$/m,
      )?.[0];
    expect(await metrics()).toBe('mailbox_heartbeat_wake_observations_dropped_total 1');

    // An operator restores the stream: the kept wake is written, the dropped one is not (counted, and only that one).
    double.log.restore(DELIVERY_STREAM);
    skippedMs += REFUSED_RETRY_MS; // its next try, due that long (the clock) after the last
    await heartbeat.settled();
    expect(await wakesObserved()).toEqual([toB]);
    expect(await wakesObserved()).not.toContain(toC);
    expect((await fetch(`${heartbeat.metricsUrl}/healthz`)).status).toBe(200);
    expect(await metrics()).toBe('mailbox_heartbeat_wake_observations_dropped_total 1');
  });

  // Wakes of one tick beyond the bound were dropped before its flush met the refusal: the alarm said dropped 0 while
  // /metrics counted them.
  it("the heartbeat's wakes_refused alarm counts the wakes dropped before the refusal was first seen", async () => {
    const { '@a': a } = await openMailbox();
    double.log.softDelete(DELIVERY_STREAM, { kind: 'any' });
    const target = new RecordingNudgeTarget('webhook');
    const heartbeat = await heartbeatNudging(target, { wakeObservationsKept: 1 });
    for (const to of ['@b', '@c']) await a.send({ to, subject: `for ${to}`, body: 'x', wakeSuppressed: true });
    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
    skippedMs += 60_000; // idle with unread mail: both nudged in one tick, one wake kept
    await heartbeat.tick();
    await heartbeat.settled();
    expect(new Set(target.nudges.map((nudge) => nudge.identity))).toEqual(new Set(['@b', '@c']));
    const health = await fetch(`${heartbeat.metricsUrl}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      alarms: [{ alarm: 'wakes_refused', stream: DELIVERY_STREAM, waiting: 1, dropped: 1 }],
    });
    expect(await (await fetch(`${heartbeat.metricsUrl}/metrics`)).text()).toMatch(
      /^mailbox_heartbeat_wake_observations_dropped_total 1$/m,
    );
  });

  describe.each([
    ['escalation', escalationStream, 'unwoken'],
    ['reply-overdue', replyOverdueStream, 'replies'],
  ] as const)("a message's %s stream (the heartbeat's once-only claim)", (_kind, streamOf, part) => {
    it('a second claim, by a daemon whose views do not show the first yet, is refused: not escalated again, nothing written, /healthz names the stream and the remedy', async () => {
      const SLA = 60_000;
      const { '@a': a, '@b': b, '@c': c } = await openMailbox();
      // @b and @c have just acted (a send that wakes nobody): no unread nudge is due to anyone, only the claims'.
      for (const agent of [b, c]) await agent.send({ to: '@a', subject: 'busy', body: '.', wakeSuppressed: true });
      const sent = await a.send({ to: ['@b', '@c'], subject: 'answer me', body: 'x', expectsReplyBy: '30s' });
      expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 5000)).toBe(true);
      // From here the views stay where they are: the state of a daemon's views that have not applied a claim yet.
      await mailbox.runner.stop();
      const daemon = async (target: RecordingNudgeTarget, metricsPort: number | null) => {
        const started: Heartbeat = await startHeartbeat(mailbox, {
          targets: [target],
          logger: recordingLogger(),
          clock,
          schedule: false,
          settings: { idleMs: 24 * 3600_000, wakeSlaMs: SLA, metricsPort },
        });
        closers.push(() => started.stop());
        return started;
      };
      skippedMs += SLA + 1_000; // past the wake SLA and the reply's due time

      const [first, second] = [new RecordingNudgeTarget('webhook'), new RecordingNudgeTarget('webhook')];
      const earlier = await daemon(first, null);
      const claimed = await earlier.tick();
      await earlier.settled();
      expect(claimed.unwoken.escalated).toEqual([sent.messageId]);
      expect(claimed.replies.overdue).toEqual([{ messageId: sent.messageId, waitingOn: ['@b', '@c'] }]);
      expect(first.nudges.filter((nudge) => nudge.messageId === sent.messageId)).toHaveLength(4); // @b and @c, twice
      const stream = streamOf(sent.messageId);
      double.log.softDelete(stream, { kind: 'any' });
      const before = await allEvents(mailbox);
      const appendsBefore = double.log.appendRequests;

      const late = await daemon(second, 0);
      const report = await late.tick();
      await late.settled();
      expect(report[part].refused).toEqual([
        { messageId: sent.messageId, stream, error: softDeleted(stream), operatorAction: restore },
      ]);
      expect(report.unwoken.escalated).toEqual([]); // the other claim is found made: not made again
      expect(report.replies.overdue).toEqual([]);
      expect(second.nudges.filter((nudge) => nudge.messageId === sent.messageId)).toEqual([]);
      expect(double.log.appendRequests).toBe(appendsBefore);
      expect(await allEvents(mailbox)).toEqual(before);
      expect(double.log.streamRecords(stream)).toBe('not_found'); // not undeleted by a claim

      expect(warnings.filter((line) => line.includes(`${stream} was refused (nothing written`))).toHaveLength(1);
      const health = await fetch(`${late.metricsUrl}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({
        healthy: false,
        alarms: [
          {
            alarm: 'escalation_refused',
            messageId: sent.messageId,
            stream,
            error: softDeleted(stream),
            operatorAction: restore,
          },
        ],
      });
    });
  });
});

describe('the production pair: EventStoreDB (test double) with the views in a real Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('broadcast, per-recipient read, a store restart under the subscription: exact counts in Redis', async () => {
    const views = {
      redisUrl: redis.url,
      redisNamespace: `esdb${process.pid}`,
      redisTimeoutMs: 10_000, // Redis's deadline is not the subject (the default 1 s can pass on a loaded machine)
    };
    const { '@a': a, '@b': b, '@c': c } = await openMailbox(views);
    const first = await a.send({ to: 'AGENT:*', subject: 'one', body: '1' });
    await c.markRead({ messageId: first.messageId });
    expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([0, 1, 0]);

    await double.restart();
    const second = await b.send({ to: 'AGENT:*', subject: 'two', body: '2' });
    await eventually(async () => (await unreadOf(a)) === 1 && (await unreadOf(c)) === 1);
    expect([await unreadOf(a), await unreadOf(b), await unreadOf(c)]).toEqual([1, 1, 1]);
    expect((await c.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([second.messageId]);
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([first.messageId]);
    expect(mailbox.runner.getStatus().checkpoint).toBe((await mailbox.eventStore.headPosition())!.toString());
  });
});

describe('the commands outside the server, on EventStoreDB without Redis (views in memory by default)', () => {
  it('audit verify and projections status teach MAILBOX_VIEWS=sqlite, not to unset a MAILBOX_VIEWS that is not set', async () => {
    const { '@a': a } = await openMailbox();
    await a.send({ to: '@b', subject: 'one', body: '1' });
    const env = {
      MAILBOX_EVENTSTORE_URL: double.url,
      MAILBOX_DATA_DIR: tempDir('mailbox-esdb-cli-'),
      MAILBOX_LOG_LEVEL: 'silent',
    };

    const verified = await runAuditCli(['verify', '--no-progress'], env);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain(
      "views built from the log by this process's projector (the running server's in-memory views cannot be read from here; " +
        'set MAILBOX_VIEWS=sqlite on the server and here for the SQLite views file, which verify can read)',
    );

    const err = capture();
    process.exitCode = undefined;
    await runStatusCommand({ stdout: capture().stream, stderr: err.stream, env }, { json: true });
    expect(process.exitCode).toBe(2);
    process.exitCode = undefined;
    const refusal = JSON.parse(err.text()) as { message: string };
    expect(refusal.message).toContain(
      'the SQLite views file (set MAILBOX_VIEWS=sqlite on the server and here: on EventStoreDB the views are in memory unless it is set)',
    );
    expect(refusal.message).not.toContain('unset MAILBOX_VIEWS');
  });
});
