/**
 * The unwoken alarm's escalations do not flood an agent: agents not listening for wakes, many messages past the wake
 * SLA in one tick make ONE nudge per recipient per target, carrying every message escalated to it (`messageIds`,
 * `messageId` the first, `messageCount`), while each message is still claimed once in the log. Nor do reply-overdue
 * escalations: many replies falling overdue in one tick make one nudge per recipient per target. Real targets on
 * loopback: a webhook server (its HTTP calls counted), a redis-server channel (its messages counted), a command hook
 * (its runs counted).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Redis from 'ioredis';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { ADMIN_TOKEN, allEvents, registerAgents, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

// A loaded CI machine: 17 sends, a redis-server, a node process per hook run; the time is not the subject.
jest.setTimeout(120_000);

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const SLA = 60_000;
const silent = pino({ level: 'silent' });
const SECRET = 'webhook-secret-for-tests-0123';

/** A webhook receiver: each request's path and JSON body; a path in `failing` answers 404 (final, not retried). */
async function webhookServer(failing: readonly string[] = []) {
  const received: Array<{ path: string; nudge: Record<string, unknown> }> = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ path: request.url!, nudge: JSON.parse(body) });
      response.writeHead(failing.includes(request.url!) ? 404 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let now = T0;
let mailbox: Mailbox;
let heartbeat: Heartbeat | undefined;

beforeEach(async () => {
  now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: silent, clock },
  );
});
afterEach(async () => {
  await heartbeat?.stop();
  heartbeat = undefined;
  await mailbox.close();
});

/**
 * @s writes 8 messages to @a, @b and @c, 5 to @a alone and 4 to @b and @c; nobody listens for wakes. @a, @b and @c
 * have just been active (no unread nudge is due to them): every nudge here is the alarm's. Returns what each
 * recipient should be told about, oldest first, and every message.
 */
async function unwokenMail(): Promise<{ expected: Record<string, string[]>; all: string[] }> {
  const agents = await registerAgents(mailbox, ['@s', '@a', '@b', '@c']);
  for (const identity of ['@a', '@b', '@c']) {
    await agents[identity].send({ to: '@nobody', subject: 'busy', body: '.', wakeSuppressed: true });
  }
  const expected: Record<string, string[]> = { '@a': [], '@b': [], '@c': [] };
  const all: string[] = [];
  const send = async (to: string[], times: number) => {
    for (let i = 0; i < times; i++) {
      now += 1; // one after the other: oldest first is the order sent
      const { messageId } = await agents['@s'].send({ to, subject: `to ${to.join(' ')} ${i}`, body: '.' });
      all.push(messageId);
      for (const identity of to) expected[identity].push(messageId);
    }
  };
  await send(['@a', '@b', '@c'], 8);
  await send(['@a'], 5);
  await send(['@b', '@c'], 4);
  return { expected, all };
}

/** The heartbeat, past the wake SLA, nobody idle long enough for an unread nudge. */
async function heartbeatWith(settings: Record<string, unknown>) {
  heartbeat = await startHeartbeat(mailbox, {
    logger: silent,
    clock: { now: () => new Date(now) },
    schedule: false,
    settings: {
      idleMs: 24 * 3600_000,
      wakeSlaMs: SLA,
      metricsPort: null,
      webhookSecret: SECRET,
      webhookBackoffMs: 5,
      // Generous: a loaded CI machine (a node process per hook run) is not this test's subject.
      webhookTimeoutMs: 60_000,
      hookTimeoutMs: 60_000,
      ...settings,
    },
  });
  now += SLA + 1;
  return heartbeat;
}

/** @a, @b and @c each served by its own path of the webhook receiver at `base`. */
const webhooksOf = (base: string) =>
  Object.fromEntries(['@a', '@b', '@c'].map((identity) => [identity, { webhook: `${base}/${identity.slice(1)}` }]));

/** A command hook that appends each nudge it is given to a file: its command, and the nudges it was run with. */
function recordingHook(prefix: string) {
  const dir = tempDir(prefix);
  const script = path.join(dir, 'hook.js');
  const runs = path.join(dir, 'runs.jsonl');
  fs.writeFileSync(
    script,
    `let input = ''; process.stdin.on('data', (c) => (input += c));
     process.stdin.on('end', () => require('fs').appendFileSync(process.argv[2], JSON.stringify(JSON.parse(input)) + '\\n'));`,
  );
  const nudges = () =>
    fs
      .readFileSync(runs, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { command: [process.execPath, script, runs], runs: nudges };
}

/** Nudges in identity order (targets are called concurrently). */
const byIdentity = (nudges: Array<Record<string, unknown>>) =>
  [...nudges].sort((x, y) => String(x.identity).localeCompare(String(y.identity)));

const escalationClaims = async () =>
  (await allEvents(mailbox))
    .filter((event) => event.type === 'WakeEscalated')
    .map((event) => (event.data as { messageId: string }).messageId);

/** What a recipient's one nudge carries about `ids` (its first message, all of them, how many). */
const about = (identity: string, ids: string[]) => ({
  identity,
  reason: 'unwoken',
  messageId: ids[0],
  messageIds: ids,
  messageCount: ids.length,
  nudgeId: `unwoken:${ids[0]}:${identity}`,
});

describe('one tick of unwoken escalations: one nudge per recipient per target', () => {
  let redis: TestRedis;
  let subscriber: Redis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });
  afterEach(() => {
    subscriber?.disconnect();
    subscriber = undefined;
  });

  test('17 messages to @a, @b, @c: a webhook call, a Redis message and a hook run per recipient, each carrying all its ids; each message claimed once', async () => {
    const { expected, all } = await unwokenMail();
    const hooks = await webhookServer();
    const hook = recordingHook('mailbox-unwoken-hook-');
    subscriber = new Redis(redis.url);
    const published: Array<Record<string, unknown>> = [];
    subscriber.on('pmessage', (_pattern, _channel, text) => published.push(JSON.parse(text)));
    await subscriber.psubscribe('mailbox:heartbeat:*');
    try {
      await heartbeatWith({
        redisUrl: redis.url,
        hook: hook.command,
        agents: webhooksOf(hooks.base),
      });
      const report = await heartbeat!.settledReport(await heartbeat!.tick());

      expect(report.unwoken.escalated).toEqual(all);
      expect(report.nudged).toEqual(['@a', '@b', '@c']);
      expect(report.failed).toEqual([]);
      const told = ['@a', '@b', '@c'].map((identity) => expect.objectContaining(about(identity, expected[identity])));

      // The webhook: three HTTP calls, one per recipient (13 + 12 + 12 = 37 before, one per message and recipient).
      expect(byIdentity(hooks.received.map((r) => r.nudge))).toEqual(told);
      expect(hooks.received.map((r) => r.path).sort()).toEqual(['/a', '/b', '/c']);
      // The hook: three runs.
      expect(byIdentity(hook.runs())).toEqual(told);
      // Redis: three messages. A publish the test makes after the tick settled arrives after every one of the daemon's.
      const publisher = new Redis(redis.url);
      await publisher.publish('mailbox:heartbeat:@end', JSON.stringify({ identity: '@end' }));
      publisher.disconnect();
      await waitFor(() => published.some((nudge) => nudge.identity === '@end'), {
        what: "the test's own publish",
        timeoutMs: 60_000,
      });
      expect(byIdentity(published.filter((nudge) => nudge.identity !== '@end'))).toEqual(told);

      // Each message claimed exactly once in the log; a delivered nudge woke its recipient for every message it
      // carried, so the alarm is over and the next tick escalates nothing and nudges nobody.
      expect((await escalationClaims()).sort()).toEqual([...all].sort());
      expect((await heartbeat!.metrics.escalations.get()).values[0].value).toBe(all.length);
      expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 60_000)).toBe(true);
      const next = await heartbeat!.settledReport(await heartbeat!.tick());
      expect(next.unwoken).toEqual({ unwoken: 0, escalated: [] });
      expect(hooks.received).toHaveLength(3);
      expect(await escalationClaims()).toHaveLength(all.length);
    } finally {
      await hooks.close();
    }
  });
});

test("a recipient's one nudge that fails is reported for every message it carried (--once's failed), each claimed once", async () => {
  const { expected, all } = await unwokenMail();
  const hooks = await webhookServer(['/a']);
  try {
    await heartbeatWith({ agents: webhooksOf(hooks.base) });
    const report = await heartbeat!.settledReport(await heartbeat!.tick());
    expect(hooks.received.map((r) => r.path).sort()).toEqual(['/a', '/b', '/c']);
    expect(report.unwoken.escalated).toEqual(all);
    expect(report.nudged).toEqual(['@b', '@c']);
    expect(report.failed).toEqual(
      expected['@a'].map((messageId) => ({
        identity: '@a',
        reason: 'unwoken',
        messageId,
        target: 'webhook',
        error: expect.stringContaining('404'),
      })),
    );
    expect((await escalationClaims()).sort()).toEqual([...all].sort());
  } finally {
    await hooks.close();
  }
});

// The nudges go out once per recipient after the tick's claims: a read failing after some claims (the views out
// mid-tick) left the messages already claimed, whose one escalation that is, with no nudge at all.
/** The delivery ledger's reads (one per message looked at) fail after the first `reads`: the views out mid-tick. */
function viewsOutAfterLedgerReads(reads: number) {
  const ledger = mailbox.projections.deliveryLedger.bind(mailbox.projections);
  let made = 0;
  return jest.spyOn(mailbox.projections, 'deliveryLedger').mockImplementation(async (...args) => {
    if (++made > reads) throw new Error('the views are out (the test)');
    return ledger(...args);
  });
}

/** A heartbeat whose tick fails on those reads; resolves once the nudges it dispatched settled. */
async function failingTick(settings: Record<string, unknown>): Promise<void> {
  await heartbeatWith(settings);
  await expect(heartbeat!.tick()).rejects.toThrow('the views are out (the test)');
  await heartbeat!.settled();
}

test('the views failing after three claims: the tick fails, and the three claimed messages are still nudged to @a, @b, @c', async () => {
  const { all } = await unwokenMail();
  const hooks = await webhookServer();
  const failing = viewsOutAfterLedgerReads(3);
  try {
    await failingTick({ agents: webhooksOf(hooks.base) });
    const claimedFirst = all.slice(0, 3); // the oldest three, each to @a, @b and @c
    expect((await escalationClaims()).sort()).toEqual([...claimedFirst].sort());
    expect(byIdentity(hooks.received.map((r) => r.nudge))).toEqual(
      ['@a', '@b', '@c'].map((identity) => expect.objectContaining(about(identity, claimedFirst))),
    );
  } finally {
    failing.mockRestore();
    await hooks.close();
  }
});

describe('one tick of reply-overdue escalations: one nudge per recipient per target', () => {
  /**
   * @a, @b and @c each send 5 messages expecting a reply within 30 s to the other two, and @a 2 more to @b alone; nobody
   * answers. Past the due time, every one is overdue (wake SLA a day: no unwoken escalation). Returns what each
   * recipient owes, oldest first, and every message.
   */
  async function overdueMail(): Promise<{ expected: Record<string, string[]>; all: string[] }> {
    const agents = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const expected: Record<string, string[]> = { '@a': [], '@b': [], '@c': [] };
    const all: string[] = [];
    for (let i = 0; i < 5; i++) {
      for (const [from, to] of [
        ['@a', ['@b', '@c']],
        ['@b', ['@a', '@c']],
        ['@c', ['@a', '@b']],
        ...(i < 2 ? [['@a', ['@b']] as const] : []),
      ] as const) {
        now += 1;
        const sent = await agents[from].send({ to: [...to], subject: `${i}`, body: '.', expectsReplyBy: '30s' });
        all.push(sent.messageId);
        for (const identity of to) expected[identity].push(sent.messageId);
      }
    }
    return { expected, all };
  }
  const replyOverdueClaims = async () =>
    (await allEvents(mailbox))
      .filter((event) => event.type === 'ReplyOverdue')
      .map((event) => (event.data as { messageId: string }).messageId);
  const owes = (identity: string, ids: string[]) => ({
    identity,
    reason: 'reply-overdue',
    messageId: ids[0],
    messageIds: ids,
    messageCount: ids.length,
    nudgeId: `reply-overdue:${ids[0]}:${identity}`,
  });

  test('17 overdue from @a, @b, @c: a webhook call and a hook run per recipient, each carrying all it owes; each claimed once', async () => {
    const { expected, all } = await overdueMail();
    const hooks = await webhookServer();
    const hook = recordingHook('mailbox-overdue-hook-');
    try {
      await heartbeatWith({ wakeSlaMs: 24 * 3600_000, hook: hook.command, agents: webhooksOf(hooks.base) });
      const report = await heartbeat!.settledReport(await heartbeat!.tick());

      expect(report.unwoken.escalated).toEqual([]);
      expect(report.replies.overdue.map((o) => o.messageId)).toEqual(all);
      expect(report.nudged).toEqual(['@a', '@b', '@c']);
      expect(report.failed).toEqual([]);
      const told = ['@a', '@b', '@c'].map((identity) => expect.objectContaining(owes(identity, expected[identity])));
      // Three HTTP calls and three hook runs, one per recipient (32 each before, one per message and recipient).
      expect(byIdentity(hooks.received.map((r) => r.nudge))).toEqual(told);
      expect(hooks.received.map((r) => r.path).sort()).toEqual(['/a', '/b', '/c']);
      expect(byIdentity(hook.runs())).toEqual(told);

      // Each message claimed exactly once; the next tick claims and nudges nothing more.
      expect((await replyOverdueClaims()).sort()).toEqual([...all].sort());
      expect((await heartbeat!.metrics.repliesOverdue.get()).values[0].value).toBe(all.length);
      expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 60_000)).toBe(true);
      const next = await heartbeat!.settledReport(await heartbeat!.tick());
      expect(next.replies.overdue).toEqual([]);
      expect(hooks.received).toHaveLength(3);
      expect(await replyOverdueClaims()).toHaveLength(all.length);
    } finally {
      await hooks.close();
    }
  });

  test('the views failing after three claims: the tick fails, and what @a, @b, @c owe of the three claimed is still nudged', async () => {
    const { all } = await overdueMail();
    const hooks = await webhookServer();
    const failing = viewsOutAfterLedgerReads(3);
    try {
      await failingTick({ wakeSlaMs: 24 * 3600_000, agents: webhooksOf(hooks.base) });
      // The oldest three: @a to @b and @c, @b to @a and @c, @c to @a and @b.
      expect((await replyOverdueClaims()).sort()).toEqual(all.slice(0, 3).sort());
      expect(byIdentity(hooks.received.map((r) => r.nudge))).toEqual([
        expect.objectContaining(owes('@a', [all[1], all[2]])),
        expect.objectContaining(owes('@b', [all[0], all[2]])),
        expect.objectContaining(owes('@c', [all[0], all[1]])),
      ]);
    } finally {
      failing.mockRestore();
      await hooks.close();
    }
  });

  test("a recipient's one reply-overdue nudge that fails is reported for every message it carried, each claimed once", async () => {
    const { expected, all } = await overdueMail();
    const hooks = await webhookServer(['/a']);
    try {
      await heartbeatWith({ wakeSlaMs: 24 * 3600_000, agents: webhooksOf(hooks.base) });
      const report = await heartbeat!.settledReport(await heartbeat!.tick());
      expect(hooks.received.map((r) => r.path).sort()).toEqual(['/a', '/b', '/c']);
      expect(report.nudged).toEqual(['@b', '@c']);
      expect(report.failed).toEqual(
        expected['@a'].map((messageId) => ({
          identity: '@a',
          reason: 'reply-overdue',
          messageId,
          target: 'webhook',
          error: expect.stringContaining('404'),
        })),
      );
      expect((await replyOverdueClaims()).sort()).toEqual([...all].sort());
    } finally {
      await hooks.close();
    }
  });
});
