/**
 * The heartbeat daemon against a real mailbox (memory adapters, shared fake
 * clock): who gets nudged, how often, and at what scale.
 */
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';
import type { NudgeTarget } from '../../src/heartbeat/nudgeTarget';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { ADMIN_TOKEN, allEvents, registerAgents } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

const MIN = 60_000;
const T0 = Date.parse('2030-01-01T12:00:00.000Z');
const silent = pino({ level: 'silent' });
/** These tests are about the unread nudges: no message here waits a day unwoken (the alarm: heartbeatUnwoken.int.test.ts). */
const NO_ALARM = 24 * 60 * MIN;

function fakeClock() {
  let now = T0;
  return { clock: { now: () => new Date(now) }, at: (ms: number) => (now = T0 + ms) };
}

async function setup(settings: Record<string, unknown> = {}, logger = silent) {
  const time = fakeClock();
  const mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: silent, clock: time.clock },
  );
  const target = new RecordingNudgeTarget();
  const heartbeat = await startHeartbeat(mailbox, {
    targets: [target],
    logger,
    clock: time.clock,
    schedule: false,
    settings: { idleMs: 10 * MIN, cooldownMs: 15 * MIN, wakeGraceMs: MIN, metricsPort: null, wakeSlaMs: NO_ALARM, ...settings },
  });
  return { mailbox, heartbeat, target, at: time.at, clock: time.clock };
}

async function tickAndSettle(heartbeat: Heartbeat) {
  const report = await heartbeat.tick();
  await heartbeat.settled();
  return report;
}

describe('heartbeat nudges', () => {
  let mailbox: Mailbox;
  let heartbeat: Heartbeat;
  afterEach(async () => {
    await heartbeat?.stop();
    await mailbox?.close();
  });

  test('mail to an unregistered identity: not nudged, not counted as an agent, reported as unregistered', async () => {
    const s = await setup();
    ({ mailbox, heartbeat } = s);
    const { '@a': a, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await tickAndSettle(heartbeat);
    await a.send({ to: '@nobody', subject: 'lost', body: 'x' });
    await c.send({ to: '@b', subject: 'for b', body: 'y' });
    s.at(20 * MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@b']); // the positive signal: the registered idle agent is nudged
    expect(report).toMatchObject({ agents: 3, withUnread: 1, unregisteredWithMail: 1 });
    expect(s.target.nudges.map((nudge) => nudge.identity)).toEqual(['@b']);
  });

  test('mail to an auditor: not nudged (it has no inbox: it can neither list nor mark read), not counted as an agent', async () => {
    const s = await setup();
    ({ mailbox, heartbeat } = s);
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b']);
    await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@aud', role: 'auditor' });
    await tickAndSettle(heartbeat);
    const sent = await a.send({ to: '@aud', subject: 'for the auditor', body: 'x' });
    expect(sent.warnings?.map((warning) => warning.code)).toEqual(['UNREGISTERED_RECIPIENT']); // "it has no inbox"
    await a.send({ to: '@b', subject: 'for b', body: 'y' });
    s.at(20 * MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@b']); // the positive signal: the idle agent is nudged
    expect(report).toMatchObject({ agents: 2, withUnread: 1, unregisteredWithMail: 1 });
    expect(s.target.nudges.map((nudge) => nudge.identity)).toEqual(['@b']);
  });

  test('an auditor (or an unregistered identity) with no unread mail is not counted under unregisteredWithMail', async () => {
    const s = await setup();
    ({ mailbox, heartbeat } = s);
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@aud', role: 'auditor' });
    await tickAndSettle(heartbeat);
    await a.send({ to: '@b', subject: 'for b', body: 'y' });
    s.at(20 * MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@b']); // the positive signal: the tick ran over the views holding the send
    // The auditor has counts (all zero) but no mail: it was reported as 1 identity "with mail", sending an operator
    // after misaddressed mail that does not exist.
    expect(report).toMatchObject({ agents: 3, withUnread: 1, unregisteredWithMail: 0 });
  });

  test('B idle with 2 unread: one nudge; none again for the same set; one more for new mail; none once B read all', async () => {
    const s = await setup();
    ({ mailbox, heartbeat } = s);
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await tickAndSettle(heartbeat); // subscribes to every agent's wakes
    const first = await a.send({ to: '@b', subject: 'one', body: 'x' });
    const second = await c.send({ to: '@b', subject: 'two', body: 'y' });

    s.at(30_000);
    expect((await tickAndSettle(heartbeat)).verdicts).toEqual({ no_mail: 2, wake_grace: 1 }); // B just got a wake

    s.at(2 * MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@b']);
    expect(s.target.nudges).toHaveLength(1);
    expect(s.target.nudges[0]).toMatchObject({
      identity: '@b',
      unread: 2,
      newestUnreadId: second.messageId,
      oldestUnreadAt: new Date(T0).toISOString(),
      lastActivityAt: null,
    });

    s.at(3 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual([]);
    s.at(40 * MIN); // long past the cooldown: still the same unread set
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ same_set: 1 });
    expect(s.target.nudges).toHaveLength(1);

    const third = await a.send({ to: '@b', subject: 'three', body: 'z' });
    s.at(42 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
    expect(s.target.nudges).toHaveLength(2);
    expect(s.target.nudges[1]).toMatchObject({ identity: '@b', unread: 3, newestUnreadId: third.messageId });

    await b.markRead({ messageIds: [first.messageId, second.messageId, third.messageId] });
    s.at(120 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toEqual({ no_mail: 3 });
    expect(s.target.nudges.map((n) => n.identity)).toEqual(['@b', '@b']);
  });

  test('one daemon: a set that only shrank (a read, an archive) or got back what left it (unarchive) is not nudged again', async () => {
    const s = await setup({ wakeGraceMs: 0 });
    ({ mailbox, heartbeat } = s);
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const one = await a.send({ to: '@b', subject: 'one', body: 'x' });
    s.at(MIN);
    const two = await c.send({ to: '@b', subject: 'two', body: 'y' });
    s.at(20 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);

    s.at(21 * MIN);
    await b.markRead({ messageId: two.messageId }); // the newest of the two it was told about: 'one' is left
    s.at(60 * MIN); // idle again, long past the cooldown: what is left unread is what it was told about at 20 min
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ same_set: 1 });

    s.at(61 * MIN);
    const three = await a.send({ to: '@b', subject: 'three', body: 'z' });
    s.at(80 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']); // new mail: a new set

    s.at(81 * MIN);
    await b.archive(one.messageId); // archiving is no attention: @b stays idle
    s.at(100 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ same_set: 1 });
    s.at(101 * MIN);
    await b.unarchive(one.messageId);
    s.at(120 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ same_set: 1 });

    // What @b's receiver saw: one nudge per set that brought new mail (before: "1 unread" at 60 and 100 min, and at
    // 120 min the nudge of 80 min again, under the same nudgeId).
    expect(s.target.nudges.map((nudge) => [nudge.unread, nudge.newestUnreadId])).toEqual([
      [2, two.messageId],
      [2, three.messageId],
    ]);
  });

  test('one daemon: a task that ended and a new one between two ticks (the same count) is a new set, nudged again', async () => {
    const s = await setup({ optOut: ['@h'] }); // @h, the holder, works the tasks: not the subject here
    ({ mailbox, heartbeat } = s);
    const { '@a': a, '@h': h, '@w': w, '@x': x, '@y': y } = await registerAgents(mailbox, ['@a', '@h', '@w', '@x', '@y']);
    await tickAndSettle(heartbeat); // subscribes to every agent's wakes
    // @w sent two tasks to @h: one ends without it (it waits on @w until @w gets it), the other is worked on.
    const one = await w.send({ to: '@h', subject: 'one', body: 'x', task: {} });
    const two = await w.send({ to: '@h', subject: 'two', body: 'x', task: {} });
    await h.updateTask({ taskId: one.messageId, to: 'Rejected', reason: 'not mine' });
    await h.updateTask({ taskId: two.messageId, to: 'Working' });
    // @x holds a task it read (nothing unread); @y has mail.
    const held = await a.send({ to: '@x', subject: 'port it', body: 'y', task: {} });
    await x.markRead({ messageId: held.messageId });
    const m1 = await a.send({ to: '@y', subject: 'first', body: 'z' });
    const tasksWaiting = async () =>
      Promise.all(['@w', '@x'].map(async (id) => (await mailbox.projections.heartbeat(id)).tasksWaiting));
    expect(await tasksWaiting()).toEqual([1, 1]);

    s.at(20 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@w', '@x', '@y']);
    const first = new Map(s.target.nudges.map((nudge) => [nudge.identity, nudge]));
    expect(first.get('@w')).toMatchObject({ unread: 0, tasksWaiting: 1 });

    // Between two ticks: @w gets the first task's outcome (it no longer waits on @w) and the second fails (it does):
    // still one task waiting, another one. @y reads its mail and gets more.
    s.at(25 * MIN);
    await w.getTask(one.messageId);
    await h.updateTask({ taskId: two.messageId, to: 'Failed', reason: 'no access' });
    expect(await tasksWaiting()).toEqual([1, 1]);
    await y.markRead({ messageId: m1.messageId });
    const m2 = await a.send({ to: '@y', subject: 'second', body: 'z' });

    s.at(30 * MIN); // within @w's cooldown (nudged at 20 minutes); by the count alone it was the same set
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ cooldown: 1, same_set: 1, active: 1 });
    s.at(40 * MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@w', '@y']);
    expect(report.verdicts).toMatchObject({ nudge: 2, same_set: 1 }); // @x: the same task waits
    const again = new Map(s.target.nudges.slice(3).map((nudge) => [nudge.identity, nudge]));
    expect(again.get('@w')).toMatchObject({ unread: 0, tasksWaiting: 1 });
    expect(again.get('@w')!.nudgeId).not.toBe(first.get('@w')!.nudgeId);
    expect(again.get('@y')).toMatchObject({ unread: 1, newestUnreadId: m2.messageId });
    expect(again.get('@y')!.nudgeId).not.toBe(first.get('@y')!.nudgeId);

    s.at(80 * MIN); // long past the cooldown, nothing changed: nobody nudged
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ same_set: 3 });
    expect(s.target.nudges).toHaveLength(5);
  });

  /**
   * Daemons started one after another on one mailbox (restarts, cron runs of --once), each nudging through one webhook
   * target whose delivered nudges are recorded in the log (a WakeObserved via 'webhook'): what a later daemon reads.
   */
  async function daemonsInTurn() {
    const s = await setup();
    ({ mailbox } = s);
    await s.heartbeat.stop();
    const webhook = new RecordingNudgeTarget('webhook');
    const settings = { idleMs: 10 * MIN, cooldownMs: 15 * MIN, wakeGraceMs: 0, metricsPort: null, wakeSlaMs: NO_ALARM };
    const daemon = () =>
      startHeartbeat(mailbox, { targets: [webhook], logger: silent, clock: s.clock, schedule: false, settings });
    return { s, webhook, daemon };
  }

  test('a new daemon (a restart, a cron job of --once) remembers the nudges the log recorded: the same set is not nudged again', async () => {
    const { s, webhook, daemon } = await daemonsInTurn();
    const nudged = () => webhook.nudges.map((nudge) => [nudge.identity, nudge.unread]);
    const { '@a': a, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    await a.send({ to: '@b', subject: 'one', body: 'x' });
    heartbeat = await daemon();
    s.at(20 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
    await heartbeat.stop(); // its recorder writes what it observed
    await waitFor(async () => (await mailbox.projections.lastNudges()).has('@b'), { what: "@b's nudge in the views" });

    // Mail for @d, never nudged: the next daemon nudges it at once, and only it.
    await c.send({ to: '@d', subject: 'for d', body: 'y' });
    heartbeat = await daemon();
    s.at(40 * MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@d']);
    expect(report.verdicts).toMatchObject({ same_set: 1 }); // @b: the set its last nudge (at 20 min) was about
    expect(nudged()).toEqual([
      ['@b', 1],
      ['@d', 1],
    ]);

    // New mail for @b 10 minutes after its last nudge: a new set, nudged once 15 minutes have passed since that nudge.
    await heartbeat.stop();
    s.at(30 * MIN);
    await c.send({ to: '@b', subject: 'two', body: 'z' });
    heartbeat = await daemon();
    s.at(34 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ cooldown: 1 }); // @b, nudged at 20 min
    s.at(36 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
    expect(nudged()).toEqual([
      ['@b', 1],
      ['@d', 1],
      ['@b', 2],
    ]);
  });

  test('a nudge about tasks alone is in the log too: a new daemon does not nudge the same waiting tasks again', async () => {
    const { s, webhook, daemon } = await daemonsInTurn();
    const { '@a': a, '@w': w, '@x': x } = await registerAgents(mailbox, ['@a', '@w', '@x', '@q']);
    // @w holds a task it read (nothing unread); @a sent one that @x asks it about (input required: it waits on @a).
    const held = await a.send({ to: '@w', subject: 'port it', body: 'x', task: {} });
    const asked = await a.send({ to: '@x', subject: 'review it', body: 'y', task: {} });
    await w.markRead({ messageId: held.messageId });
    await x.markRead({ messageId: asked.messageId });
    await x.updateTask({ taskId: asked.messageId, to: 'working' });
    await x.updateTask({ taskId: asked.messageId, to: 'input-required', note: 'which branch?' });
    const events = async () => (await allEvents(mailbox)).length;
    heartbeat = await daemon();
    s.at(20 * MIN);
    const first = await tickAndSettle(heartbeat);
    expect(first.nudged).toEqual(['@a', '@w']);
    expect(webhook.nudges.map((n) => [n.identity, n.unread, n.tasksWaiting])).toEqual([
      ['@a', 0, 1],
      ['@w', 0, 1],
    ]);
    await heartbeat.stop(); // its recorder writes what it observed: each under its task's message
    await waitFor(async () => (await mailbox.projections.lastNudges()).size === 2, { what: 'both nudges in the views' });
    const recorded = (await allEvents(mailbox)).filter((event) => event.type === 'WakeObserved');
    expect(recorded.map((event) => event.data)).toEqual([
      { messageId: asked.messageId, recipient: '@a', via: 'webhook', observedAt: new Date(T0 + 20 * MIN).toISOString() },
      { messageId: held.messageId, recipient: '@w', via: 'webhook', observedAt: new Date(T0 + 20 * MIN).toISOString() },
    ]);

    // Long past the cooldown, the same tasks waiting: nobody nudged, and nothing written (it nudged both again).
    heartbeat = await daemon();
    s.at(60 * MIN);
    const before = await events();
    const again = await tickAndSettle(heartbeat);
    expect(again.verdicts).toEqual({ same_set: 2, no_mail: 2 });
    expect(again.nudged).toEqual([]);
    await heartbeat.stop();
    expect(await events()).toBe(before);
    expect(webhook.nudges).toHaveLength(2);

    // A new task for @w after its nudge: a new set, nudged; @a's still the same.
    s.at(70 * MIN);
    await x.send({ to: '@w', subject: 'and this', body: 'z', task: {} });
    heartbeat = await daemon();
    s.at(90 * MIN);
    const third = await tickAndSettle(heartbeat);
    expect(third.nudged).toEqual(['@w']);
    expect(third.verdicts).toMatchObject({ same_set: 1, nudge: 1 });
    expect(webhook.nudges.at(-1)).toMatchObject({ identity: '@w', unread: 1, tasksWaiting: 2 });
  });

  test('a task that leaves its holder (asks its sender) and comes back is news: to a running daemon and to a new one', async () => {
    const { s, webhook, daemon } = await daemonsInTurn();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    // @a sent a task to @b and one to @c; each read its own (nothing unread): tasks alone wait on them.
    const t = await a.send({ to: '@b', subject: 'port it', body: 'x', task: {} });
    const u = await a.send({ to: '@c', subject: 'review it', body: 'y', task: {} });
    await b.markRead({ messageId: t.messageId });
    await c.markRead({ messageId: u.messageId });
    heartbeat = await daemon();
    s.at(20 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b', '@c']);
    const first = webhook.nudges.find((nudge) => nudge.identity === '@b')!;

    // @b asks @a (the task waits on @a, no more on @b), @a answers: the same task waits on @b again, the same count.
    s.at(22 * MIN);
    await b.updateTask({ taskId: t.messageId, to: 'working' });
    await b.updateTask({ taskId: t.messageId, to: 'input-required', note: 'which branch?' });
    await a.updateTask({ taskId: t.messageId, to: 'Working', note: 'main' });
    expect((await mailbox.projections.heartbeat('@b')).tasksWaiting).toBe(1);
    s.at(40 * MIN); // @b idle again, past the cooldown: told (by which tasks wait alone, the same set, never told)
    const back = await tickAndSettle(heartbeat);
    expect(back.nudged).toEqual(['@b']);
    expect(back.verdicts).toMatchObject({ nudge: 1, same_set: 1 }); // @c: its task waits as it did
    const again = webhook.nudges.at(-1)!;
    expect(again).toMatchObject({ identity: '@b', unread: 0, tasksWaiting: 1 });
    expect(again.nudgeId).not.toBe(first.nudgeId);
    await heartbeat.stop();
    await waitFor(async () => (await mailbox.projections.lastNudges()).has('@c'), { what: "@c's nudge in the views" });

    // After that nudge, the task leaves @b and comes back once more; a new daemon (a restart) tells @b, not @c.
    s.at(50 * MIN);
    await b.updateTask({ taskId: t.messageId, to: 'input-required', note: 'and the tag?' });
    await a.updateTask({ taskId: t.messageId, to: 'Working', note: 'v2' });
    heartbeat = await daemon();
    s.at(70 * MIN);
    const restarted = await tickAndSettle(heartbeat);
    expect(restarted.nudged).toEqual(['@b']);
    expect(restarted.verdicts).toMatchObject({ nudge: 1, same_set: 1 });
    expect(webhook.nudges.map((nudge) => nudge.identity)).toEqual(['@b', '@c', '@b', '@b']);
  });

  test("an agent active at the new daemon's first tick is judged by the log's record once it is idle again", async () => {
    const { s, webhook, daemon } = await daemonsInTurn();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'one', body: 'x' });
    const two = await c.send({ to: '@b', subject: 'two', body: 'y' });
    heartbeat = await daemon();
    s.at(20 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
    await heartbeat.stop();
    await waitFor(async () => (await mailbox.projections.lastNudges()).has('@b'), { what: "@b's nudge in the views" });

    s.at(21 * MIN);
    await b.markRead({ messageId: two.messageId }); // @b reads one of the two it was nudged about: active
    heartbeat = await daemon();
    s.at(22 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ active: 1 });
    s.at(60 * MIN); // idle again, long past the cooldown: what is left unread was sent before its last nudge
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ same_set: 1 });
    expect(webhook.nudges.map((nudge) => nudge.identity)).toEqual(['@b']);
  });

  test('settings naming an unregistered or retired identity: reported each tick, warned once per change', async () => {
    const logs: Array<{ level: number; msg: string; unregistered?: string[]; retired?: string[] }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) });
    const s = await setup(
      { optOut: ['@c', '@bb'], agents: { '@zz': { optOut: true }, '@d': { optOut: true } }, wakeGraceMs: 0 },
      logger,
    );
    ({ mailbox, heartbeat } = s);
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    await a.send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    await mailbox.asActor(ADMIN_ACTOR).retireAgent('@d');
    s.at(MIN);
    const first = await tickAndSettle(heartbeat);
    expect(first.settingsForNobody).toEqual({ unregistered: ['@bb', '@zz'], retired: ['@d'] });
    expect(first.nudged).toEqual(['@b']); // the settings that name someone still apply
    const warnings = () => logs.filter((entry) => entry.msg.startsWith('heartbeat settings'));
    expect(warnings()).toEqual([
      expect.objectContaining({
        level: 40,
        unregistered: ['@bb', '@zz'],
        retired: ['@d'],
        msg:
          'heartbeat settings (--opt-out, --agents-file) name identities that no active agent answers to ' +
          '(not registered: @bb, @zz; retired: @d); their entries apply to nobody: check the spelling, or register the agent',
      }),
    ]);
    s.at(2 * MIN);
    expect((await tickAndSettle(heartbeat)).settingsForNobody).toEqual(first.settingsForNobody);
    expect(warnings()).toHaveLength(1); // the same news is not repeated every tick
    await registerAgents(mailbox, ['@zz']);
    s.at(3 * MIN);
    expect((await tickAndSettle(heartbeat)).settingsForNobody).toEqual({ unregistered: ['@bb'], retired: ['@d'] });
    expect(warnings().map((entry) => entry.unregistered)).toEqual([['@bb', '@zz'], ['@bb']]);
  });

  test('an agent that read recently is left alone until it has been idle for the threshold', async () => {
    const s = await setup({ wakeGraceMs: 0 });
    ({ mailbox, heartbeat } = s);
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const old = await a.send({ to: '@b', subject: 'old', body: 'x' });
    await b.markRead({ messageId: old.messageId }); // B active at T0
    await c.send({ to: '@b', subject: 'new', body: 'y' });
    s.at(9 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toMatchObject({ active: 1 });
    s.at(11 * MIN);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
  });

  test('opted-out and retired agents are never nudged', async () => {
    const s = await setup({ optOut: ['@c'], wakeGraceMs: 0 });
    ({ mailbox, heartbeat } = s);
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    await a.send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    await mailbox.asActor(ADMIN_ACTOR).retireAgent('@d');
    s.at(MIN);
    const report = await tickAndSettle(heartbeat);
    expect(report.nudged).toEqual(['@b']);
    expect(report.verdicts).toEqual({ nudge: 1, no_mail: 1, opted_out: 1, retired: 1 });
    expect(s.target.nudges.map((n) => n.identity)).toEqual(['@b']);
    // A retired agent can never read its mail: not an agent with unread mail (it was counted, in the report and in
    // /metrics), but said apart. The opted-out one still counts: it can read, it is only not nudged.
    expect(report).toMatchObject({ agents: 4, withUnread: 2, retiredWithUnread: 1 });
    expect(await s.heartbeat.metrics.registry.getSingleMetricAsString('mailbox_heartbeat_agents_with_unread')).toMatch(
      /^mailbox_heartbeat_agents_with_unread 2$/m,
    );
  });

  test('500 agents with mail: the first scheduled tick nudges each eligible agent exactly once, within its interval', async () => {
    const time = fakeClock();
    const logLines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: silent, clock: time.clock },
    );
    const identities = Array.from({ length: 500 }, (_, i) => `@agent-${String(i).padStart(3, '0')}`);
    const clients = await registerAgents(mailbox, ['@sender', ...identities]);
    const sent = await clients['@sender'].send({ to: 'AGENT:*', subject: 'to all', body: 'x' });
    expect(sent.recipients).toHaveLength(500);
    const readers = identities.slice(0, 100); // these read theirs: no mail, not eligible
    for (const identity of readers) await clients[identity].markRead({ messageId: sent.messageId });
    time.at(11 * MIN);

    const target = new RecordingNudgeTarget();
    heartbeat = await startHeartbeat(mailbox, {
      targets: [target],
      logger,
      clock: time.clock,
      schedule: true,
      settings: { idleMs: 10 * MIN, wakeGraceMs: 0, intervalMs: 60_000, metricsPort: null, wakeSlaMs: NO_ALARM },
    });
    for (let i = 0; i < 500 && target.nudges.length < 400; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await heartbeat.settled();

    const eligible = identities.slice(100);
    expect(target.nudges.map((n) => n.identity).sort()).toEqual(eligible); // each eligible agent exactly once
    expect(new Set(target.nudges.map((n) => n.nudgeId)).size).toBe(400);
    const metric = async (name: 'ticks' | 'decisions' | 'deliveries') =>
      (await heartbeat.metrics[name].get()).values.map((v) => [v.labels, v.value]);
    expect(await metric('ticks')).toEqual([[{}, 1]]); // one tick did it all; the next one is an interval away
    expect(await metric('decisions')).toEqual(
      expect.arrayContaining([
        [{ verdict: 'nudge' }, 400],
        [{ verdict: 'no_mail' }, 101],
      ]),
    );
    expect(await metric('deliveries')).toEqual([[{ target: 'recording', outcome: 'delivered' }, 400]]);
    // The daemon warns when a tick outlasts its interval (its own measurement; the test times nothing).
    expect(logLines.filter((line) => String(line.msg).includes('longer than the interval'))).toEqual([]);

    time.at(12 * MIN);
    expect((await tickAndSettle(heartbeat)).verdicts).toEqual({ same_set: 400, no_mail: 101 });
    expect(target.nudges).toHaveLength(400);
  });

  test('a nudge that reaches no target is retried at the next tick, not forgotten', async () => {
    const s = await setup({ wakeGraceMs: 0 });
    ({ mailbox, heartbeat } = s);
    let failNext = true;
    const flaky: NudgeTarget = {
      name: 'flaky',
      appliesTo: () => true,
      close: async () => {},
      deliver: async (nudge) => {
        if (failNext) {
          failNext = false;
          throw new Error('target down');
        }
        return s.target.deliver(nudge);
      },
    };
    await heartbeat.stop();
    heartbeat = await startHeartbeat(mailbox, {
      targets: [flaky],
      logger: silent,
      clock: { now: () => new Date(T0 + MIN) },
      schedule: false,
      settings: { wakeGraceMs: 0, metricsPort: null, wakeSlaMs: NO_ALARM },
    });
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'x', body: 'x' });
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
    expect(s.target.nudges).toHaveLength(0);
    const failed = await heartbeat.metrics.deliveries.get();
    expect(failed.values).toEqual([expect.objectContaining({ labels: { target: 'flaky', outcome: 'failed' }, value: 1 })]);
    expect((await tickAndSettle(heartbeat)).nudged).toEqual(['@b']);
    expect(s.target.nudges.map((n) => n.identity)).toEqual(['@b']);
  });
});
