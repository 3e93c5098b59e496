/**
 * `audit verify`: healthy systems exit 0; a corrupted projection is reported
 * difference by difference and exits 1 — on the memory store (library) and on
 * a real Redis (CLI, a key corrupted by hand).
 */
import path from 'node:path';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import Redis from 'ioredis';
import pino from 'pino';
import { capture, runAuditCli as audit } from '../support/auditCli';
import { runVerify } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import type { ListQuery } from '../../src/projections/listQuery';
import type { AgentView, ProjectionStore } from '../../src/projections/projectionStore';
import type { VerifyOptions } from '../../src/audit/verify/verifyProjections';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { configFromEnv, DEFAULT_WAKE_SLA_MS } from '../../src/config';
import { parseHeartbeatSettings } from '../../src/heartbeat/heartbeatSettings';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import { waitFor } from '../support/waitFor';
import { startHeartbeat } from '../../src/heartbeat/startHeartbeat';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const silent = pino({ level: 'silent' });

/** A, B, C, D: a broadcast, direct mail (one with a task, one a tagged reply), reads and an archive. */
async function populate(mailbox: Mailbox) {
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
  const broadcast = await a.send({ to: 'AGENT:*', subject: 'all hands', body: 'x' });
  const first = await a.send({ to: '@b', subject: 'one', body: 'x' });
  const second = await c.send({ to: '@b', subject: 'two', body: 'y', priority: 'high' });
  await b.markRead({ messageId: broadcast.messageId });
  await c.archive(broadcast.messageId);
  await c.send({
    to: '@d',
    subject: 'task',
    body: 't',
    task: { state: 'Working', input: { parts: [{ kind: 'text', text: 'do it' }] } },
  });
  const reply = await b.send({ to: '@c', subject: 'reply', body: 'z', inReplyTo: broadcast.messageId, tags: ['re'] });
  return { first, second, reply };
}

const ticking = () => {
  let tick = 0;
  return { now: () => new Date(T0 + 1000 * tick++) };
};

/** A mailbox with its log and views in memory, on a clock that ticks a second per look. */
const memoryMailbox = () =>
  createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silent, clock: ticking() });

/** `audit verify` of this mailbox's log against `live` (its own views unless given), stderr discarded; `out` gets stdout. */
const verifyOn = (
  mailbox: Mailbox,
  live: ProjectionStore = mailbox.projections,
  {
    json = false,
    out = capture(),
    settings = {},
    terminal,
  }: {
    json?: boolean;
    out?: ReturnType<typeof capture>;
    settings?: Pick<VerifyOptions, 'now' | 'wakeSlaMs'>;
    /** stderr as a terminal, where the bars are drawn (else they are not, and stderr is discarded). */
    terminal?: ReturnType<typeof capture>;
  } = {},
) =>
  runVerify(
    eventStoreSource(mailbox.eventStore),
    live,
    { json, progress: terminal !== undefined },
    {
      stdout: out.stream,
      stderr: terminal ? Object.assign(terminal.stream, { isTTY: true, columns: 120 }) : capture().stream,
      env: {},
    },
    undefined,
    settings,
  );

describe('audit verify on the memory store', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('a healthy system verifies clean (exit 0)', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox);
    const out = capture();
    const { code, report } = await verifyOn(mailbox, mailbox.projections, { out });
    expect(code).toBe(0);
    expect(report).toMatchObject({
      ok: true,
      differences: [],
      head: '14',
      comparedAt: '14',
      lag: '0',
      eventsRebuilt: 14,
      agentsCompared: 4,
    });
    expect(report.entriesCompared).toBeGreaterThan(8);
    expect(out.text()).toMatch(/^OK: the live projections match the log at checkpoint 14 of log head 14;/);
    // Ledgers counted in the plural but for one (the next test's "1 delivery ledger": it said "1 delivery ledgers").
    expect(out.text()).toMatch(/listing entries, 5 delivery ledgers and 0 task history lines compared\.$/m);
  });

  test('mail to a name nobody registered is compared and counted apart from the agents GET /v1/agents lists', async () => {
    // The summary said "3 agents" for two registered agents and @ghost, whose inbox it compared: an auditor
    // matching the count against GET /v1/agents (2) found one too many.
    mailbox = await memoryMailbox();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b']);
    await a.send({ to: ['@b', '@ghost'], subject: 'to a name', body: 'x' });
    expect((await mailbox.projections.listAgents()).map((agent) => agent.identity)).toEqual(['@a', '@b']);
    const out = capture();
    const { code, report } = await verifyOn(mailbox, mailbox.projections, { out });
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, agentsCompared: 3, unregisteredCompared: 1 });
    expect(out.text()).toContain(
      '3 events rebuilt, 2 agents and 1 unregistered identity with mail, 5 listing entries, 1 delivery ledger and 0 task history lines compared.',
    );
  });

  test('a count of one reads in the singular: "1 event rebuilt, 1 agent, 1 listing entry"', async () => {
    // It said "1 events rebuilt, 1 agents, 1 listing entries": an auditor reading it aloud stumbled on every count.
    mailbox = await memoryMailbox();
    await registerAgents(mailbox, ['@solo']);
    const out = capture();
    const { code, report } = await verifyOn(mailbox, mailbox.projections, { out });
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, eventsRebuilt: 1, agentsCompared: 1 });
    expect(out.text()).toContain(
      '; 1 event rebuilt, 1 agent, 0 listing entries, 0 delivery ledgers and 0 task history lines compared.',
    );
  });

  test('a bogus change applied to the live views is reported exactly, and exits 1', async () => {
    mailbox = await memoryMailbox();
    const { first, second, reply } = await populate(mailbox);
    const forgedAt = '2030-01-02T00:00:00.000Z';
    // Corrupt: mark B's first unread message read in the live views only (no event in the log says so).
    await mailbox.projections.applyBatch([
      {
        position: 15n,
        at: forgedAt,
        changes: [{ kind: 'receiptRead', recipient: '@b', messageId: first.messageId, readAt: forgedAt, priority: 'normal' }],
      },
    ]);

    const out = capture();
    const { code, report } = await verifyOn(mailbox, mailbox.projections, { out });
    expect(code).toBe(1);
    const oldestUnread = first.sentAt; // B's oldest unread per the log is the first message
    expect(report.differences).toEqual([
      { view: 'checkpoint', identity: null, field: 'position', expected: 'at most the log head (14)', actual: '15' },
      { view: 'heartbeat', identity: '@b', field: 'unread', expected: 2, actual: 1 },
      { view: 'heartbeat', identity: '@b', field: 'unseen', expected: 2, actual: 1 },
      { view: 'heartbeat', identity: '@b', field: 'oldestUnreadAt', expected: oldestUnread, actual: second.sentAt },
      { view: 'heartbeat', identity: '@b', field: 'lastActivityAt', expected: reply.sentAt, actual: forgedAt },
      { view: 'heartbeat', identity: '@b', field: 'byPriority.normal', expected: 1, actual: 0 },
      { view: 'unreadCount', identity: '@b', field: 'unread', expected: 2, actual: 1 },
      { view: 'unreadCount', identity: '@b', field: 'byPriority.normal', expected: 1, actual: 0 },
      { view: 'inbox', identity: '@b', messageId: first.messageId, field: 'readAt', expected: null, actual: forgedAt },
      { view: 'unread', identity: '@b', messageId: first.messageId, field: 'presence', expected: 'listed', actual: 'missing' },
      // The forged receipt reached the delivery ledger too: the sender's count of reads, and @b's row.
      {
        view: 'delivery',
        identity: '@a',
        messageId: first.messageId,
        field: 'counts',
        expected: { inView: 1, woken: 0, seen: 0, read: 0, replied: 0 },
        actual: { inView: 1, woken: 0, seen: 0, read: 1, replied: 0 },
      },
      { view: 'delivery', identity: '@b', messageId: first.messageId, field: 'read', expected: null, actual: { at: forgedAt } },
      // Its only recipient read it (so the live views say), so it needs no wake: no longer unwoken there.
      { view: 'unwoken', identity: null, field: 'count', expected: 5, actual: 4 },
      { view: 'unwoken', identity: '@a', messageId: first.messageId, field: 'presence', expected: 'listed', actual: 'missing' },
      { view: 'unwoken', identity: null, field: 'count pending escalation', expected: 5, actual: 4 },
    ]);
    const text = out.text();
    expect(text).toContain(
      `inbox        @b  message ${first.messageId}  readAt: log says null, live projection has "${forgedAt}"`,
    );
    expect(text).toContain('heartbeat    @b  unread: log says 2, live projection has 1');
    expect(text).toMatch(/DRIFT: 15 differences at checkpoint 15 of log head 14/);
  });
});

describe('audit verify compares what each agent archived', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('an archive time changed or an archived message dropped in the live views is reported (the inbox leaves them out)', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox); // @c archived the broadcast
    const clean = await verifyOn(mailbox, mailbox.projections, { json: true });
    expect(clean.report.ok).toBe(true);
    const archived = (await mailbox.projections.listMessages('@c', { box: 'inbox', status: 'archived', limit: 10, before: null }))
      .messages[0];
    const forgedAt = '2020-01-01T00:00:00.000Z';
    // The live views as a damaged store would serve @c's archived listing (`mailbox inbox --status archived`): the
    // archive time changed; @d's as if it had archived the same message too.
    const damaged = new Proxy(mailbox.projections, {
      get(target, property, receiver) {
        if (property === 'listMessages')
          return async (identity: string, query: ListQuery) => {
            const page = await target.listMessages(identity, query);
            if (query.status !== 'archived') return page;
            if (identity === '@c') return { ...page, messages: page.messages.map((m) => ({ ...m, archivedAt: forgedAt })) };
            return identity === '@d' ? { ...page, messages: [archived] } : page;
          };
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const out = capture();
    const { code, report } = await verifyOn(mailbox, damaged, { out });
    expect(code).toBe(1);
    expect(report.differences).toEqual([
      {
        view: 'archived',
        identity: '@c',
        messageId: archived.messageId,
        field: 'archivedAt',
        expected: archived.archivedAt,
        actual: forgedAt,
      },
      {
        view: 'archived',
        identity: '@d',
        messageId: archived.messageId,
        field: 'presence',
        expected: 'absent',
        actual: 'listed',
      },
    ]);
    expect(out.text()).toContain(
      `archived     @c  message ${archived.messageId}  archivedAt: log says "${archived.archivedAt}", live projection has "${forgedAt}"`,
    );
  });
});

describe('audit verify on a terminal', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('after the rebuild’s bar, a bar of the comparison: the agents compared, then the delivery ledgers', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox);
    // stderr as a terminal (only there are bars drawn): the bars' text is what it receives.
    const terminal = capture();
    Object.assign(terminal.stream, { isTTY: true, columns: 120 });
    const { code } = await runVerify(
      eventStoreSource(mailbox.eventStore),
      mailbox.projections,
      { json: false, progress: true },
      { stdout: capture().stream, stderr: terminal.stream, env: {} },
    );
    expect(code).toBe(0);
    const drawn = terminal.text();
    // It went silent after a full rebuild bar for as long again as the rebuild (half of a 1,000,000-event verify).
    expect(drawn).toMatch(/rebuild \[.*\] 100% \| position 14\/14/);
    expect(drawn).toMatch(/compare \[.*\] 100% \| agents 4\/4/);
    expect(drawn).toMatch(/compare \[.*\] 100% \| ledgers 5\/5/);
    expect(drawn.indexOf('agents 4/4')).toBeLessThan(drawn.indexOf('ledgers 5/5'));
  });
});

describe('audit verify on views that move while it reads them (a server under a steady load)', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('views that move during every re-check are UNSETTLED (exit 3), not DRIFT; once they stand still: OK', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox);
    const sender = mailbox.asActor({ identity: '@a', role: 'agent' });
    // Each listing read first lets one more send reach the views, as three API nodes sending through it would (found by a
    // probe of the scaled deployment: verify printed DRIFT, exit 1, for messages the views took while it read them).
    let loading = true;
    let sends = 0;
    const views = mailbox.projections;
    const moving = new Proxy(views, {
      get(target, key, receiver) {
        if (key !== 'listMessages') return Reflect.get(target, key, receiver);
        return async (...args: Parameters<typeof views.listMessages>) => {
          if (loading) {
            await sender.send({ to: ['@b', '@c'], subject: `load ${sends++}`, body: 'x' });
          }
          return target.listMessages(...args);
        };
      },
    });
    const verify = async () => {
      const out = capture();
      const terminal = capture();
      const result = await verifyOn(mailbox, moving, { out, terminal });
      return { ...result, text: out.text(), drawn: terminal.text() };
    };

    const underLoad = await verify();
    expect(sends).toBeGreaterThan(0);
    // The re-checks draw a bar of their own, after the comparison's (they ran silent, as long as it or longer).
    const rechecks = underLoad.drawn.match(/recheck \[.*?\] 100% \| rechecks (\d+)\/(\d+)/);
    expect(rechecks).not.toBeNull();
    expect(rechecks![1]).toBe(rechecks![2]);
    expect(Number(rechecks![2])).toBeGreaterThan(0);
    expect(underLoad.drawn.indexOf('ledgers')).toBeLessThan(underLoad.drawn.indexOf('recheck ['));
    expect(underLoad.report).toMatchObject({ ok: false, settled: false });
    expect(underLoad.report.differences.length).toBeGreaterThan(0);
    expect(underLoad.code).toBe(3);
    expect(underLoad.text).toMatch(
      /^UNSETTLED: \d+ differences neither confirmed nor cleared at checkpoint \d+ of log head \d+/m,
    );
    expect(underLoad.text).toContain('so they are not known to be drift; run verify again when the load is lighter');
    expect(underLoad.text).not.toContain('DRIFT');

    loading = false;
    const still = await verify();
    expect(still.report).toMatchObject({ ok: true, settled: true, differences: [] });
    expect(still.code).toBe(0);
    expect(still.text).toMatch(/^OK: /);
  });

  test('a re-check of one agent reads that agent’s entries, not every agent’s: views that move for several agents, drift in one still reported', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox);
    const sender = mailbox.asActor({ identity: '@a', role: 'agent' });
    const views = mailbox.projections;
    const retired = (agent: AgentView): AgentView =>
      agent.identity === '@d' ? { ...agent, retired: true, retiredAt: '2030-01-01T13:00:00.000Z' } : agent;
    const calls = { listAgents: 0, allHeartbeats: 0, agentEntries: [] as string[] };
    let sends = 0;
    // The first 40 listing reads each let one more send to @b and @c reach the views (a server under load, as above), then
    // they stand still; @d reads as retired in the live views (drift the log never made).
    const moving = new Proxy(views, {
      get(target, key, receiver) {
        if (key === 'listMessages') {
          return async (...args: Parameters<typeof views.listMessages>) => {
            if (sends < 40) await sender.send({ to: ['@b', '@c'], subject: `load ${sends++}`, body: 'x' });
            return target.listMessages(...args);
          };
        }
        if (key === 'listAgents') {
          return async () => {
            calls.listAgents++;
            return (await target.listAgents()).map(retired);
          };
        }
        if (key === 'allHeartbeats') {
          return async () => {
            calls.allHeartbeats++;
            return target.allHeartbeats();
          };
        }
        if (key === 'agentEntries') {
          return async (identity: string) => {
            calls.agentEntries.push(identity);
            const entries = await target.agentEntries(identity);
            return { ...entries, agent: entries.agent && retired(entries.agent) };
          };
        }
        return Reflect.get(target, key, receiver);
      },
    });

    const { code, report } = await verifyOn(mailbox, moving, { json: true });
    expect(sends).toBe(40);
    expect(report.rounds).toBeGreaterThan(1); // the views moved: what differed was re-read
    expect(report).toMatchObject({ ok: false, settled: true });
    expect(report.differences).toEqual([
      { view: 'agents', identity: '@d', field: 'retired', expected: false, actual: true },
      { view: 'agents', identity: '@d', field: 'retiredAt', expected: null, actual: '2030-01-01T13:00:00.000Z' },
    ]);
    expect(code).toBe(1);
    expect(calls).toMatchObject({ listAgents: 1, allHeartbeats: 1 }); // the first comparison's
    expect(new Set(calls.agentEntries)).toEqual(new Set(['@a', '@b', '@c', '@d']));
    expect(calls.agentEntries.length).toBeGreaterThan(4); // some re-read more than once, each time only its own
  });
});

describe('audit verify compares the delivery views', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('a wake the log never observed, applied to the live views, is reported on the ledger, the unwoken list and the last nudge, and exits 1', async () => {
    mailbox = await memoryMailbox();
    const { first } = await populate(mailbox);
    const clean = await verifyOn(mailbox);
    expect(clean.report).toMatchObject({ ok: true, ledgersCompared: 5 }); // one per message sent
    const head = (await mailbox.eventStore.headPosition())!;
    const forgedAt = '2030-01-02T00:00:00.000Z';
    // Corrupt: a webhook nudge woke @b about the first message, in the live views only (no WakeObserved in the log).
    await mailbox.projections.applyBatch([
      {
        position: head + 1n,
        at: forgedAt,
        changes: [{ kind: 'wakeObserved', messageId: first.messageId, recipient: '@b', via: 'webhook', at: forgedAt }],
      },
    ]);

    const out = capture();
    const { code, report } = await verifyOn(mailbox, mailbox.projections, { out });
    expect(code).toBe(1);
    const delivery = report.differences.filter((d) => ['delivery', 'unwoken', 'lastNudge'].includes(d.view));
    expect(delivery).toEqual([
      {
        view: 'delivery',
        identity: '@a',
        messageId: first.messageId,
        field: 'counts',
        expected: { inView: 1, woken: 0, seen: 0, read: 0, replied: 0 },
        actual: { inView: 1, woken: 1, seen: 0, read: 0, replied: 0 },
      },
      {
        view: 'delivery',
        identity: '@b',
        messageId: first.messageId,
        field: 'woken',
        expected: null,
        actual: { at: forgedAt, via: 'webhook' },
      },
      { view: 'unwoken', identity: null, field: 'count', expected: 5, actual: 4 },
      { view: 'unwoken', identity: '@a', messageId: first.messageId, field: 'presence', expected: 'listed', actual: 'missing' },
      { view: 'unwoken', identity: null, field: 'count pending escalation', expected: 5, actual: 4 },
      { view: 'lastNudge', identity: '@b', field: 'lastNudge', expected: null, actual: { at: forgedAt, via: 'webhook' } },
    ]);
    expect(out.text()).toContain(
      `delivery     @b  message ${first.messageId}  woken: log says null, live projection has {"at":"${forgedAt}","via":"webhook"}`,
    );
    expect(out.text()).toMatch(/listing entries, 5 delivery ledgers and 0 task history lines compared\.$/m);
  });

  test("nudges about tasks alone, recorded under their tasks' messages (the holder's, the asked sender's), verify clean", async () => {
    mailbox = await memoryMailbox();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const held = await a.send({ to: '@b', subject: 'port it', body: 'x', task: {} });
    const asked = await a.send({ to: '@c', subject: 'review it', body: 'y', task: {} });
    await b.markRead({ messageId: held.messageId });
    await c.markRead({ messageId: asked.messageId });
    await c.updateTask({ taskId: asked.messageId, to: 'working' });
    await c.updateTask({ taskId: asked.messageId, to: 'input-required', note: 'which branch?' });
    const heartbeat = await startHeartbeat(mailbox, {
      targets: [new RecordingNudgeTarget('webhook')],
      logger: silent,
      clock: { now: () => new Date(T0 + 3_600_000) }, // an hour after the mailbox's clock began
      schedule: false,
      settings: { idleMs: 0, wakeGraceMs: 0, metricsPort: null },
    });
    expect((await heartbeat.tick()).nudged).toEqual(['@a', '@b']); // each about one task waiting on it, nothing unread
    await heartbeat.stop(); // its recorder writes the two WakeObserved
    const nudges = async () => [...(await mailbox.projections.lastNudges()).keys()].sort();
    await waitFor(async () => (await nudges()).length === 2, { what: 'both nudges in the views' });
    expect(await nudges()).toEqual(['@a', '@b']);

    const { code, report } = await verifyOn(mailbox);
    expect({ code, ok: report.ok, differences: report.differences }).toEqual({ code: 0, ok: true, differences: [] });
  });

  test('a ledger or a recipient row missing from the live views, or a row they forged, is reported (read a batch at a time)', async () => {
    mailbox = await memoryMailbox();
    const { first, second } = await populate(mailbox);
    const real = mailbox.projections;
    const forged = { recipient: '@z', inView: null, woken: null, seen: null, read: null, replied: null };
    // The live views as a damaged store would serve them: no ledger for `second`, and `first` with @b's row swapped for @z's.
    const damaged = new Proxy(real, {
      get(target, property, receiver) {
        if (property !== 'deliveryLedgers') return Reflect.get(target, property, receiver) as unknown;
        return async (messageIds: readonly string[]) => {
          const ledgers = await target.deliveryLedgers(messageIds);
          ledgers.delete(second.messageId);
          const one = ledgers.get(first.messageId);
          if (one) ledgers.set(first.messageId, { ...one, rows: [forged] });
          return ledgers;
        };
      },
    });
    const { code, report } = await verifyOn(mailbox, damaged, { json: true });
    expect(code).toBe(1);
    expect(report.ledgersCompared).toBe(5);
    const delivery = report.differences.filter((d) => d.view === 'delivery');
    expect(delivery).toEqual(
      expect.arrayContaining([
        {
          view: 'delivery',
          identity: '@c',
          messageId: second.messageId,
          field: 'presence',
          expected: 'a ledger',
          actual: 'missing',
        },
        { view: 'delivery', identity: '@b', messageId: first.messageId, field: 'presence', expected: 'a row', actual: 'missing' },
        { view: 'delivery', identity: '@z', messageId: first.messageId, field: 'presence', expected: 'absent', actual: 'a row' },
      ]),
    );
    expect(delivery).toHaveLength(3);
  });

  test('a ledger whose count, header or row differs from the log only by a value or by a field more is reported field by field', async () => {
    mailbox = await memoryMailbox();
    const { first, second, reply } = await populate(mailbox);
    const real = mailbox.projections;
    const ids = [first.messageId, second.messageId, reply.messageId];
    const logged = await real.deliveryLedgers(ids);
    const [one, two, three] = ids.map((id) => logged.get(id)!);
    // The live views as a drifted store would serve them: one more read counted on `first`, a field no ledger has on
    // `second`'s header, and one on @c's row of the reply.
    const changed = new Map([
      [first.messageId, { ...one, counts: { ...one.counts, read: one.counts.read + 1 } }],
      [second.messageId, { ...two, message: { ...two.message, origin: 'elsewhere' } }],
      [reply.messageId, { ...three, rows: three.rows.map((row) => ({ ...row, note: 'forged' })) }],
    ]);
    const damaged = new Proxy(real, {
      get(target, property, receiver) {
        if (property !== 'deliveryLedgers') return Reflect.get(target, property, receiver) as unknown;
        return async (messageIds: readonly string[]) => {
          const ledgers = await target.deliveryLedgers(messageIds);
          for (const [id, ledger] of changed) if (ledgers.has(id)) ledgers.set(id, ledger);
          return ledgers;
        };
      },
    });
    const { code, report } = await verifyOn(mailbox, damaged, { json: true });
    expect(code).toBe(1);
    expect(report.differences.filter((d) => d.view === 'delivery')).toEqual([
      {
        view: 'delivery',
        identity: '@a',
        messageId: first.messageId,
        field: 'counts',
        expected: one.counts,
        actual: { ...one.counts, read: one.counts.read + 1 },
      },
      {
        view: 'delivery',
        identity: '@c',
        messageId: second.messageId,
        field: 'message',
        expected: two.message,
        actual: { ...two.message, origin: 'elsewhere' },
      },
      { view: 'delivery', identity: '@c', messageId: reply.messageId, field: 'note', expected: null, actual: 'forged' },
    ]);
  });

  test('a ledger the live views keep that the log does not explain is reported, named by its sender', async () => {
    mailbox = await memoryMailbox();
    const { first } = await populate(mailbox);
    const real = mailbox.projections;
    const forgedId = '00000000-0000-4000-8000-00000000f0f0';
    // The live views as a forged store would serve them: one more ledger (a copy of `first`'s) under an id no send made.
    const forged = new Proxy(real, {
      get(target, property, receiver) {
        if (property === 'deliveryLedgerIds')
          return async (after: string | null, limit: number) => {
            const page = await target.deliveryLedgerIds(after, limit);
            return page.next === null ? { ...page, messageIds: [...page.messageIds, forgedId] } : page;
          };
        if (property === 'deliveryLedgers')
          return async (messageIds: readonly string[]) => {
            const ledgers = await target.deliveryLedgers(messageIds.filter((id) => id !== forgedId));
            if (messageIds.includes(forgedId)) {
              const copy = (await target.deliveryLedgers([first.messageId])).get(first.messageId)!;
              ledgers.set(forgedId, { ...copy, message: { ...copy.message, messageId: forgedId } });
            }
            return ledgers;
          };
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const out = capture();
    const { code, report } = await verifyOn(mailbox, forged, { out });
    expect(code).toBe(1);
    expect(report.differences).toEqual([
      { view: 'delivery', identity: '@a', messageId: forgedId, field: 'presence', expected: 'absent', actual: 'a ledger' },
    ]);
    expect(out.text()).toContain(
      `delivery     @a  message ${forgedId}  presence: log says "absent", live projection has "a ledger"`,
    );
  });
});

describe('audit verify compares the task views', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('a claim the log never made, applied to the live views, is reported on the task lists and counts, and exits 1', async () => {
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', taskSweepMs: 0 },
      { logger: silent, clock: ticking() },
    );
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { messageId: taskId, sentAt } = await a.send({ to: 'AGENT:*', subject: 'a task', body: 'x', task: {} });
    const head = (await mailbox.eventStore.headPosition())!;
    // Corrupt: @c holds the task in the live views only.
    await mailbox.projections.applyBatch([
      {
        position: head + 1n,
        at: sentAt,
        changes: [
          {
            kind: 'taskChanged',
            eventId: 'a-claim-the-log-never-made',
            actor: '@c',
            at: sentAt,
            event: { type: 'TaskClaimed', data: { taskId, claimant: '@c', claimedAt: sentAt, leaseExpiresAt: null } },
          },
        ],
      },
    ]);
    const { code, report } = await verifyOn(mailbox, mailbox.projections, { json: true });
    expect(code).toBe(1);
    // The sender's record of the task (its sent list), the holder's count and lists, and every audience member's claimable list.
    expect(report.differences.filter((d) => d.view !== 'checkpoint')).toEqual([
      { view: 'heartbeat', identity: '@c', field: 'tasksWaiting', expected: 0, actual: 1 },
      // When a task began waiting on @c (the heartbeat's mark): the claim the log never made.
      {
        view: 'heartbeat',
        identity: '@c',
        field: 'tasksWaitingSince',
        expected: null,
        actual: expect.objectContaining({ taskId: expect.any(String) as string }) as object,
      },
      { view: 'tasks', identity: '@a', field: 'assignee', expected: null, actual: '@c' },
      { view: 'tasks', identity: '@a', field: 'claimedAt', expected: null, actual: sentAt },
      { view: 'tasks', identity: '@a', field: 'updatedBy', expected: '@a', actual: '@c' },
      { view: 'tasks', identity: '@a', field: 'updatedPosition', expected: Number(head) - 2, actual: Number(head) + 1 },
      { view: 'tasks', identity: '@b', field: 'claimable', expected: [taskId], actual: [] },
      { view: 'tasks', identity: '@c', field: 'assigned', expected: [], actual: [taskId] },
      { view: 'tasks', identity: '@c', field: 'claimable', expected: [taskId], actual: [] },
      // The claim's line in the task's history, which no event of the log made.
      {
        view: 'taskLines',
        identity: '@a',
        messageId: taskId,
        field: 'history line a-claim-the-log-never-made',
        expected: 'absent',
        actual: taskId,
      },
    ]);
  });
});

describe('audit verify compares the unwoken alarm as the server counts it', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('a message moved out of the alarm in the live views (its count now one short, the whole list as long) is reported', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox); // five sends from 2030-01-01T12:00 on, none woke anybody
    const now = () => new Date(T0 + 3_600_000);
    const clean = await verifyOn(mailbox, mailbox.projections, { json: true, settings: { now, wakeSlaMs: 60_000 } });
    expect(clean.report.ok).toBe(true);
    // The live views as a moved index would serve them: one message's place in the list set later than its send, past
    // the alarm's cutoff (the SQLite views' unwoken_ms, the Redis unwoken score): listed in all, not counted by the alarm.
    const moved = new Proxy(mailbox.projections, {
      get(target, property, receiver) {
        if (property === 'unwoken')
          return async (query: Parameters<Mailbox['projections']['unwoken']>[0]) => {
            const page = await target.unwoken(query);
            return query.sentBefore.startsWith('9999') ? page : { ...page, count: page.count - 1 };
          };
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const out = capture();
    const { code, report } = await verifyOn(mailbox, moved, { out, settings: { now, wakeSlaMs: 60_000 } });
    expect(code).toBe(1);
    const cutoff = '2030-01-01T12:59:00.000Z';
    expect(report.differences).toEqual([
      {
        view: 'unwoken',
        identity: null,
        field: `count sent before ${cutoff} (now minus the wake SLA: the alarm's)`,
        expected: 5,
        actual: 4,
      },
      {
        view: 'unwoken',
        identity: null,
        field: `count pending escalation sent before ${cutoff} (now minus the wake SLA: the alarm's)`,
        expected: 5,
        actual: 4,
      },
    ]);
  });
});

describe('the wake SLA default', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  // It was written three times (the server's config, the heartbeat's settings, this option's default): one could change
  // alone, and verify would compare the alarm at another cutoff than the server counts it at.
  test('verify without one compares the alarm at now minus the default the server and the heartbeat take', async () => {
    mailbox = await memoryMailbox();
    await populate(mailbox);
    const at = T0 + 3_600_000;
    const oneShort = new Proxy(mailbox.projections, {
      get(target, property, receiver) {
        if (property === 'unwoken')
          return async (query: Parameters<Mailbox['projections']['unwoken']>[0]) => {
            const page = await target.unwoken(query);
            return query.sentBefore.startsWith('9999') ? page : { ...page, count: page.count - 1 };
          };
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const { report } = await verifyOn(mailbox, oneShort, { settings: { now: () => new Date(at) } });
    const cutoff = new Date(at - DEFAULT_WAKE_SLA_MS).toISOString();
    expect(report.differences.map((d) => d.field)).toEqual([
      `count sent before ${cutoff} (now minus the wake SLA: the alarm's)`,
      `count pending escalation sent before ${cutoff} (now minus the wake SLA: the alarm's)`,
    ]);
    expect(configFromEnv({}).wakeSlaMs).toBe(DEFAULT_WAKE_SLA_MS);
    expect(parseHeartbeatSettings({}).wakeSlaMs).toBe(DEFAULT_WAKE_SLA_MS);
  });
});

describe('audit verify compares the due lists (the task sweeper’s and the heartbeat’s)', () => {
  let mailbox: Mailbox;
  afterEach(() => mailbox.close());

  test('a task deadline or a reply due time dropped from the live due lists, or due earlier there, is reported, and exits 1', async () => {
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', taskSweepMs: 0 },
      { logger: silent, clock: ticking() },
    );
    const { '@a': a, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const task = await a.send({ to: 'AGENT:*', subject: 'a task', body: 'x', task: { expiresAt: '2030-06-01T00:00:00.000Z' } });
    const asked = await c.send({ to: '@b', subject: 'answer me', body: 'y', expectsReplyBy: '1h' });
    const clean = await verifyOn(mailbox, mailbox.projections, { json: true });
    expect(clean.report.ok).toBe(true);
    // The live views as damaged indexes would serve them: the task's deadline and the reply's due time gone (the sweeper
    // never ends the task, the heartbeat never finds the reply overdue), and the reply due now, an hour early.
    const endOfTime = '9999-12-31T23:59:59.999Z';
    const damaged = new Proxy(mailbox.projections, {
      get(target, property, receiver) {
        if (property === 'dueTasks') return async () => [];
        if (property === 'dueReplies')
          return async (dueBy: string, limit: number) =>
            dueBy === endOfTime ? [] : (await target.dueReplies(endOfTime, limit)).slice(0, limit);
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const out = capture();
    const { code, report } = await verifyOn(mailbox, damaged, { out });
    expect(code).toBe(1);
    expect(report.differences).toEqual([
      { view: 'dueTasks', identity: '@a', messageId: task.messageId, field: 'presence', expected: 'listed', actual: 'missing' },
      {
        view: 'dueReplies',
        identity: '@c',
        messageId: asked.messageId,
        field: 'presence',
        expected: 'listed',
        actual: 'missing',
      },
    ]);
    expect(out.text()).toContain(
      `dueTasks     @a  message ${task.messageId}  presence: log says "listed", live projection has "missing"`,
    );

    // Due earlier than the log says: listed among what is due now.
    const early = new Proxy(mailbox.projections, {
      get(target, property, receiver) {
        if (property === 'dueReplies') return async (_dueBy: string, limit: number) => target.dueReplies(endOfTime, limit);
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const moved = await verifyOn(mailbox, early, { json: true });
    expect(moved.code).toBe(1);
    expect(moved.report.differences).toEqual([
      {
        view: 'dueReplies',
        identity: '@c',
        messageId: asked.messageId,
        field: expect.stringMatching(/^presence \(due by \d{4}-\d\d-\d\dT[\d:.]+Z\)$/),
        expected: 'absent',
        actual: 'listed',
      },
    ]);
  });
});

describe('mailbox audit verify (CLI)', () => {
  test('embedded default (SQLite log and views file): verifies the views the server left, and finds a counter changed by hand and a ledger no send made', async () => {
    const dataDir = tempDir('mailbox-verify-');
    const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silent });
    await populate(mailbox);
    await mailbox.close(); // the views stay in views.sqlite
    const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' };
    const healthy = await audit(['verify'], env);
    expect(healthy.stderr).toBe('');
    expect(healthy.stdout).toMatch(/^OK: the live projections match the log at checkpoint 14 of log head 14;/);
    expect(healthy.code).toBe(0);

    const db = openSqliteDatabase(path.join(dataDir, 'views.sqlite'));
    try {
      db.prepare("UPDATE g1_identities SET unread_high = 7 WHERE identity = '@b'").run(); // B has 1 unread high, per the log
      // A ledger no send made (no message row either: the store cannot say whose it is).
      db.prepare(
        `INSERT INTO g1_ledgers (msg, message_id, position, sender, thread_id, sent_at, recipient_count, wake_expected)
         VALUES (999, 'forged-ledger', '99', '@a', 'forged-ledger', '2026-01-01T00:00:00.000Z', 1, 0)`,
      ).run();
    } finally {
      db.close();
    }
    const drifted = await audit(['verify', '--json'], env);
    expect(drifted.code).toBe(1);
    expect(JSON.parse(drifted.stdout).differences).toEqual(
      expect.arrayContaining([
        { view: 'heartbeat', identity: '@b', field: 'byPriority.high', expected: 1, actual: 7 },
        { view: 'unreadCount', identity: '@b', field: 'byPriority.high', expected: 1, actual: 7 },
        {
          view: 'delivery',
          identity: null,
          messageId: 'forged-ledger',
          field: 'presence',
          expected: 'absent',
          actual: 'a ledger',
        },
      ]),
    );
  });

  test('embedded default: a task state column changed by hand is reported on the lists filtered by state (the records agree)', async () => {
    const dataDir = tempDir('mailbox-verify-');
    const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silent });
    await populate(mailbox); // @c sends @d a task, Working
    await mailbox.close();
    const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' };
    const db = openSqliteDatabase(path.join(dataDir, 'views.sqlite'));
    let taskId: string;
    try {
      taskId = (db.prepare('SELECT task_id FROM g1_tasks').get() as { task_id: string }).task_id;
      db.prepare("UPDATE g1_tasks SET state = 'Completed'").run(); // the column list_tasks filters on; the record stays Working
    } finally {
      db.close();
    }
    const drifted = await audit(['verify', '--json'], env);
    expect(drifted.code).toBe(1);
    const differences = JSON.parse(drifted.stdout).differences;
    expect(differences).toEqual(
      expect.arrayContaining([
        { view: 'tasks', identity: '@d', field: 'assigned in state Working', expected: [taskId], actual: [] },
        { view: 'tasks', identity: '@d', field: 'assigned in state Completed', expected: [], actual: [taskId] },
        { view: 'tasks', identity: '@c', field: 'sent in state Working', expected: [taskId], actual: [] },
        { view: 'tasks', identity: '@c', field: 'sent in state Completed', expected: [], actual: [taskId] },
      ]),
    );
    expect(differences.every((d: { view: string; field: string }) => d.view === 'tasks' && / in state /.test(d.field))).toBe(
      true,
    );
  });

  test('MAILBOX_VIEWS=memory: verifies clean and says what it compared', async () => {
    const dataDir = tempDir('mailbox-verify-');
    const mailbox = await createMailbox(
      { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent', views: 'memory' },
      { logger: silent },
    );
    await populate(mailbox);
    await mailbox.close();
    const { code, stdout, stderr } = await audit(['verify'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_LOG_LEVEL: 'silent',
      MAILBOX_VIEWS: 'memory',
    });
    expect(stderr).toBe('');
    // It cannot see the server's in-memory views, and says so instead of claiming "the live projections match".
    expect(stdout).toMatch(
      /^OK: views built from the log by this process's projector \(the running server's in-memory views cannot be read from here; unset MAILBOX_VIEWS for the SQLite views file, which verify can read\) match the log at checkpoint 14 of log head 14;/,
    );
    expect(stdout).not.toContain('live projections');
    expect(code).toBe(0);
  });

  test('verify refuses --url: it needs the stores themselves', async () => {
    const { code, stderr } = await audit(['verify', '--url', 'http://127.0.0.1:1', '--json'], {});
    expect(code).toBe(2);
    expect(JSON.parse(stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: '--url' });
  });

  describe('on Redis', () => {
    let redis: TestRedis;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis.stop());

    /** A mailbox on a namespace of its own in this Redis (its data dir a new one), and the environment verify reads it with. */
    const redisMailbox = async (prefix: string, options: { taskSweepMs?: number } = {}) => {
      const namespace = `${prefix}${process.pid}x${Date.now()}`;
      const dataDir = tempDir('mailbox-verify-redis-');
      const config = {
        dataDir,
        adminToken: ADMIN_TOKEN,
        logLevel: 'silent' as const,
        redisUrl: redis.url,
        redisNamespace: namespace,
        redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
        ...options,
      };
      const mailbox = await createMailbox(config, { logger: silent });
      const env = {
        MAILBOX_DATA_DIR: dataDir,
        MAILBOX_REDIS_URL: redis.url,
        MAILBOX_REDIS_NAMESPACE: namespace,
        MAILBOX_LOG_LEVEL: 'silent',
        ...REDIS_TEST_TIMEOUT_ENV,
      };
      return { namespace, mailbox, env };
    };

    /** Deletes a task's record from the namespace's task views (its list and due entries stay); the records' key. */
    const deleteTaskRecord = async (namespace: string, taskId: string): Promise<string> => {
      const client = new Redis(redis.url);
      try {
        const [recordsKey] = (await client.keys(`*{${namespace}}:tasks`)) as string[];
        expect(await client.hdel(recordsKey, taskId)).toBe(1);
        return recordsKey;
      } finally {
        client.disconnect();
      }
    };

    test('healthy -> exit 0; a counts key corrupted and a ledger forged by hand -> the exact differences and exit 1', async () => {
      const { namespace, mailbox, env } = await redisMailbox('audit');
      const { first } = await populate(mailbox);
      await mailbox.close(); // the views stay in Redis

      const healthy = await audit(['verify'], env);
      expect(healthy.stderr).toBe('');
      expect(healthy.stdout).toMatch(/^OK: the live projections match the log at checkpoint 14 of log head 14;/);
      expect(healthy.code).toBe(0);

      const client = new Redis(redis.url);
      try {
        await client.hset(`${namespace}:v1:{@b}:counts`, 'high', '7'); // B has 1 unread high-priority message, per the log
        // A ledger no send made: a copy of @a's ledger of `first` under another id.
        const ledger = `${namespace}:v1:{${namespace}}:ledger:`;
        await client.copy(`${ledger}${first.messageId}`, `${ledger}forged-ledger`);
      } finally {
        client.disconnect();
      }
      const drifted = await audit(['verify', '--json'], env);
      expect(drifted.code).toBe(1);
      expect(JSON.parse(drifted.stdout)).toMatchObject({
        ok: false,
        comparedAt: '14',
        differences: [
          { view: 'heartbeat', identity: '@b', field: 'byPriority.high', expected: 1, actual: 7 },
          { view: 'unreadCount', identity: '@b', field: 'byPriority.high', expected: 1, actual: 7 },
          {
            view: 'delivery',
            identity: '@a',
            messageId: 'forged-ledger',
            field: 'presence',
            expected: 'absent',
            actual: 'a ledger',
          },
        ],
      });
      expect(JSON.parse(drifted.stdout).differences).toHaveLength(3);

      // An index naming a message whose ledger is gone (evicted, deleted by hand): said as damaged views, with the
      // remedy. It read "Redis projections is unavailable; retry later" (and so did the heartbeat and the console).
      const unwoken = `${namespace}:v1:{${namespace}}:unwoken`;
      const damage = new Redis(redis.url);
      try {
        await damage.zadd(unwoken, 1, 'gone-ledger');
      } finally {
        damage.disconnect();
      }
      const damaged = await audit(['verify', '--json'], env);
      expect(damaged.code).toBe(2);
      expect(JSON.parse(damaged.stderr)).toEqual({
        error: 'Views damaged',
        code: 'UNAVAILABLE',
        message:
          `The Redis views are damaged: ${unwoken} names message gone-ledger, which has no ledger (evicted, or deleted by ` +
          'hand). Rebuild them from the log: mailbox projections rebuild.',
        messageId: 'gone-ledger',
        key: unwoken,
      });
    });

    test('a tasks:timed entry whose task record is gone is reported as the record missing, not as the due entry', async () => {
      const { namespace, mailbox, env } = await redisMailbox('auditTimed', { taskSweepMs: 0 });
      const { '@a': a } = await registerAgents(mailbox, ['@a', '@b']);
      const task = await a.send({ to: '@b', subject: 'a task', body: 'x', task: { expiresAt: '2030-06-01T00:00:00.000Z' } });
      await mailbox.close();
      await deleteTaskRecord(namespace, task.messageId); // its tasks:timed entry and list entries stay
      const { code, stdout } = await audit(['verify'], env);
      expect(code).toBe(1);
      // It read 'presence: log says "listed", live projection has "missing"', as if the due entry were gone.
      expect(stdout).toContain(
        `dueTasks     @a  message ${task.messageId}  task record: log says "present", live projection has "missing"\n`,
      );
      expect(stdout).not.toContain('presence');
    });

    test('a task whose record is gone from the task lists is reported as the record missing, not as the list entries', async () => {
      const { namespace, mailbox, env } = await redisMailbox('auditListed', { taskSweepMs: 0 });
      const { '@a': a } = await registerAgents(mailbox, ['@a', '@b']);
      const kept = await a.send({ to: '@b', subject: 'kept', body: 'x', task: {} });
      const task = await a.send({ to: '@b', subject: 'a task', body: 'x', task: {} }); // no deadline: no tasks:timed entry
      await mailbox.close();
      const recordsKey = await deleteTaskRecord(namespace, task.messageId); // its entries in @a's sent, @b's assigned lists stay
      const { code, stdout } = await audit(['verify'], env);
      expect(code).toBe(1);
      // It read 'tasks @a  sent: log says ["<kept>","<id>"], live projection has ["<kept>"]', as if the list entry were gone.
      const recordMissing = (identity: string, list: string) =>
        `tasks        ${identity}  message ${task.messageId}  task record (${list} list): log says "present", live projection has "missing"\n`;
      expect(stdout).toContain(recordMissing('@a', 'sent'));
      expect(stdout).toContain(recordMissing('@b', 'assigned'));
      expect(stdout).not.toMatch(/ (sent|assigned): log says/); // the rest of each list agrees: no list line
      expect(stdout).not.toContain(kept.messageId); // the task whose record stays agrees, in every list and state

      // A list entry dropped while its record stays is still the list's difference, said without the gone record.
      const dropper = new Redis(redis.url);
      try {
        const assigned = `${recordsKey}:assigned:@b`;
        const [entry] = (await dropper.zrange(assigned, '0', '-1')).filter((member) => member.endsWith(`:${kept.messageId}`));
        expect(await dropper.zrem(assigned, entry)).toBe(1);
      } finally {
        dropper.disconnect();
      }
      const dropped = await audit(['verify'], env);
      expect(dropped.code).toBe(1);
      expect(dropped.stdout).toContain(recordMissing('@b', 'assigned'));
      expect(dropped.stdout).toContain(
        `tasks        @b  assigned: log says ${JSON.stringify([kept.messageId])}, live projection has []\n`,
      );
    });
  });
});
