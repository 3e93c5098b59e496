/**
 * Acceptance (issue 12): leases and expiry, on the injected clock. A claimant
 * that stops renewing loses the task within lease + one sweep; the next claim
 * wins; its late update is refused with LEASE_EXPIRED. A task past expiresAt
 * ends as Canceled with reason "expired"; two sweepers (two mailboxes on one
 * SQLite log) racing write it once.
 */
import pino from 'pino';
import type { Clock } from '../../src/application/runtime';
import type { DueTimer } from '../../src/application/taskSweeper';
import { MailboxError, unavailable } from '../../src/errors';
import { LeaseKeeper, LeaseLoop, leaseTiming, type LeaseStore } from '../../src/projections/projectorLease';
import { registerAgents, tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

class TestClock implements Clock {
  constructor(private at: number) {}
  /** The sweeper's due timers on this clock (DueTimer): when each fires. */
  readonly timers: Array<{ at: number; fire: () => void }> = [];
  now = () => new Date(this.at);
  advance(ms: number): void {
    this.at += ms;
    this.fireDue();
  }
  /** A DueTimer on this clock: it fires once the clock reaches its time (at once when it is there already). */
  timer: DueTimer = (delayMs, fire) => {
    const entry = { at: this.at + delayMs, fire };
    this.timers.push(entry);
    setImmediate(() => this.fireDue());
    return () => {
      const at = this.timers.indexOf(entry);
      if (at >= 0) this.timers.splice(at, 1);
    };
  };
  private fireDue(): void {
    for (const entry of this.timers.filter((t) => t.at <= this.at)) {
      this.timers.splice(this.timers.indexOf(entry), 1);
      entry.fire();
    }
  }
}

const T0 = Date.parse('2030-05-01T12:00:00.000Z');

describe.each(STORE_KINDS.slice(0, 2))('task leases and expiry ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('a lapsed lease returns the task to its audience at the next sweep; the next claim wins; the late update is refused', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    const claim = await bob.claimTask(taskId, { leaseSeconds: 30 });
    expect(claim.leaseExpiresAt).toBe(new Date(T0 + 30_000).toISOString());

    clock.advance(20_000);
    await bob.updateTask({ taskId, to: 'Working' }); // renews: the lease now runs to T0 + 50 s
    clock.advance(25_000);
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 0, changed: 0 }); // renewed: not due yet
    await expectRejectedWithoutEvents(mailbox, 'TASK_ALREADY_CLAIMED', () => carol.claimTask(taskId));

    clock.advance(10_000); // bob stopped renewing: T0 + 55 s, past the lease
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 1, changed: 1 });
    expect(await eventsOfType(mailbox, 'TaskLeaseExpired')).toMatchObject([{ data: { claimant: '@bob', from: 'Working' } }]);
    expect((await carol.listTasks({ view: 'claimable' })).tasks).toMatchObject([
      { taskId, state: 'Submitted', lapsedClaimant: '@bob' },
    ]);

    const late = await expectRejectedWithoutEvents(mailbox, 'LEASE_EXPIRED', () => bob.updateTask({ taskId, to: 'Completed' }));
    expect(late.message).toMatch(/claim it again/);
    expect(await carol.claimTask(taskId)).toMatchObject({ assignee: '@carol', events: ['TaskClaimed'] });
    await expectRejectedWithoutEvents(mailbox, 'LEASE_EXPIRED', () => bob.updateTask({ taskId, to: 'Working' }));
  });

  it('a lapsed lease is returned to the audience at its end, not at the next interval: @c sees it claimable, @b no longer waited on', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const POLL_MS = 600_000; // an interval that never comes in this test: only the due timer can sweep
    mailbox.sweeper.start(POLL_MS, { timer: clock.timer });
    const { messageId: taskId } = await a.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await b.claimTask(taskId, { leaseSeconds: 2 });
    const claimable = async (agent: typeof c) => (await agent.listTasks({ view: 'claimable' })).tasks.map((t) => t.taskId);
    expect(await claimable(c)).toEqual([]);
    expect((await mailbox.projections.heartbeat('@b')).tasksWaiting).toBe(1);

    clock.advance(2_000); // the lease's end: 2 s of a 600 s interval
    // Before: the task stayed @b's until the next interval's pass (MAILBOX_TASK_SWEEP_MS, 5 s by default).
    await waitFor(async () => (await claimable(c)).includes(taskId), { what: 'the task claimable by @c at the lease end' });
    expect(await eventsOfType(mailbox, 'TaskLeaseExpired')).toMatchObject([
      { data: { taskId, claimant: '@b', leaseExpiresAt: new Date(T0 + 2_000).toISOString() }, metadata: { actor: 'sweeper' } },
    ]);
    expect(await claimable(b)).toEqual([taskId]);
    expect((await mailbox.projections.heartbeat('@b')).tasksWaiting).toBe(0);
    expect(await c.claimTask(taskId)).toMatchObject({ assignee: '@c', events: ['TaskClaimed'] });
    expect(clock.now().getTime() - T0).toBeLessThan(POLL_MS);
  });

  it('a renewed lease is not ended at its old end: the sweeper then waits for the new one; a deadline ends the task at it', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    mailbox.sweeper.start(600_000, { timer: clock.timer });
    const { messageId: taskId } = await a.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await b.claimTask(taskId, { leaseSeconds: 30 });
    await waitFor(() => clock.timers.some((t) => t.at === T0 + 30_000), { what: 'a timer for the lease end' });
    clock.advance(20_000);
    await b.updateTask({ taskId, to: 'Working' }); // renews: the lease now runs to T0 + 50 s
    clock.advance(10_000); // the old end: the pass finds nothing due, and the sweeper waits for the new end
    await waitFor(() => clock.timers.some((t) => t.at === T0 + 50_000), { what: 'a timer for the renewed lease end' });
    expect(await eventsOfType(mailbox, 'TaskLeaseExpired')).toEqual([]);
    expect((await b.listTasks({ view: 'assigned' })).tasks).toMatchObject([{ taskId, state: 'Working', assignee: '@b' }]);

    clock.advance(20_000);
    await waitFor(async () => (await c.listTasks({ view: 'claimable' })).tasks.some((t) => t.taskId === taskId), {
      what: 'the task claimable by @c at the renewed lease end',
    });
    expect(await eventsOfType(mailbox, 'TaskLeaseExpired')).toHaveLength(1);

    const expiresAt = new Date(T0 + 60_000).toISOString();
    const { messageId: byNoon } = await a.send({ to: '@b', subject: 'by noon', body: 'x', task: { expiresAt } });
    clock.advance(10_000);
    // A read shows it Canceled as of now before any sweep: the event is the sweep's.
    await waitFor(async () => (await eventsOfType(mailbox, 'TaskExpired')).length > 0, {
      what: 'the task expired at its deadline',
    });
    expect((await eventsOfType(mailbox, 'TaskExpired')).map((e) => e.data)).toMatchObject([
      { taskId: byNoon, deadline: expiresAt },
    ]);
  });

  it('MAILBOX_TASK_SWEEP_MS=0 is off: no pass, no due timer', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    mailbox.sweeper.start(0, { timer: clock.timer });
    const { messageId: taskId } = await a.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await b.claimTask(taskId, { leaseSeconds: 2 });
    clock.advance(3_600_000);
    // A read shows the lapse as of now; the views (and the log) still have @b: nothing swept.
    expect((await b.listTasks({ view: 'assigned' })).tasks).toMatchObject([{ taskId, assignee: null, lapsedClaimant: '@b' }]);
    expect(await mailbox.projections.getTask(taskId)).toMatchObject({ assignee: '@b' });
    expect(clock.timers).toEqual([]);
    expect(await eventsOfType(mailbox, 'TaskLeaseExpired')).toEqual([]);
  });

  it("the A2A status after a lapsed lease or a release is that change, not the holder's earlier move", async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await bob.claimTask(taskId, { leaseSeconds: 30 });
    await bob.updateTask({ taskId, to: 'Working' });
    const lastLine = async () => {
      const task = await alice.getTask(taskId);
      expect(task.status.message).toEqual(task.history[task.history.length - 1]);
      return { state: task.status.state, text: task.status.message?.parts[0], event: task.status.message?.metadata.event };
    };
    expect(await lastLine()).toEqual({
      state: 'TASK_STATE_WORKING',
      text: { kind: 'text', text: 'Submitted -> Working' },
      event: 'TaskStateChanged',
    });

    clock.advance(31_000);
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
    // Before: state SUBMITTED beside bob's "Submitted -> Working", as if he were still at it.
    const lapsedAt = new Date(T0 + 30_000).toISOString();
    expect(await lastLine()).toEqual({
      state: 'TASK_STATE_SUBMITTED',
      text: { kind: 'text', text: `the lease of @bob lapsed at ${lapsedAt}: back to Submitted, claimable again` },
      event: 'TaskLeaseExpired',
    });

    await carol.claimTask(taskId);
    await carol.updateTask({ taskId, to: 'Submitted' }); // gives it back
    expect(await lastLine()).toEqual({
      state: 'TASK_STATE_SUBMITTED',
      text: { kind: 'text', text: 'released by @carol: back to Submitted, claimable again' },
      event: 'TaskReleased',
    });
  });

  it("the lapsed claimant is shown until it claims again or the task ends, the same in the listing and the task's answer", async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    const shown = async () => {
      const [listed] = (await alice.listTasks({ view: 'sent' })).tasks.filter((task) => task.taskId === taskId);
      const { mailbox: answered } = await alice.getTask(taskId);
      expect(listed.lapsedClaimant).toBe(answered.lapsedClaimant); // one rule for both
      return { assignee: listed.assignee, lapsedClaimant: listed.lapsedClaimant };
    };
    await bob.claimTask(taskId, { leaseSeconds: 30 });
    clock.advance(31_000);
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
    expect(await shown()).toEqual({ assignee: null, lapsedClaimant: '@bob' });

    await bob.claimTask(taskId); // he holds it again: it said lapsedClaimant @bob beside assignee @bob
    expect(await shown()).toEqual({ assignee: '@bob', lapsedClaimant: null });
    await bob.updateTask({ taskId, to: 'Working' });
    await bob.updateTask({ taskId, to: 'Completed' });
    expect(await shown()).toEqual({ assignee: '@bob', lapsedClaimant: null });
  });

  it('a task that asks its sender shows no lease (it is paused), is not due for the sweeper, and shows the renewed one once answered', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob']);
    const { messageId: taskId } = await alice.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await bob.claimTask(taskId, { leaseSeconds: 30 });
    await bob.updateTask({ taskId, to: 'Working' });
    const asked = await bob.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    expect(asked.leaseExpiresAt).toBeNull();
    clock.advance(3_600_000); // an hour, far past the lease it had: it said lease.expiresAt an hour ago
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 0, changed: 0 });
    expect((await bob.listTasks({ view: 'assigned' })).tasks).toMatchObject([
      { taskId, state: 'InputRequired', assignee: '@bob', leaseExpiresAt: null },
    ]);
    expect((await alice.getTask(taskId)).mailbox).toMatchObject({ state: 'InputRequired', assignee: '@bob', lease: null });

    const answered = await alice.updateTask({ taskId, to: 'Working', note: 'main' });
    const renewed = new Date(T0 + 3_600_000 + 30_000).toISOString();
    expect(answered.leaseExpiresAt).toBe(renewed);
    expect((await bob.listTasks({ view: 'assigned' })).tasks).toMatchObject([{ taskId, leaseExpiresAt: renewed }]);
    expect((await alice.getTask(taskId)).mailbox.lease).toEqual({ expiresAt: renewed });
  });

  it('a task past expiresAt ends as Canceled with reason "expired", waking its sender and holder', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const expiresAt = new Date(T0 + 60_000).toISOString();
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'by noon', body: 'x', task: { expiresAt } });
    const wakes: string[] = [];
    const stops = await Promise.all(
      ['@alice', '@bob', '@carol'].map((id) =>
        mailbox.wakeBus.subscribe(id, (w) => w.type === 'wake/task' && wakes.push(`${w.recipient}:${w.event}`)),
      ),
    );
    clock.advance(59_000);
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 0 });
    clock.advance(1_000);
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 1, changed: 1 });
    expect(await bob.getTask(taskId)).toMatchObject({
      status: { state: 'TASK_STATE_CANCELLED' },
      mailbox: { state: 'Canceled' },
    });
    expect((await eventsOfType(mailbox, 'TaskExpired'))[0].data).toMatchObject({
      reason: 'expired',
      deadline: expiresAt,
      to: 'Canceled',
    });
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 0 }); // ended: no longer due
    expect(wakes.sort()).toEqual(['@alice:TaskExpired', '@bob:TaskExpired']);
    // Ended without its sender: it waits on @alice until she gets it (then the seen mark is written, as her act).
    const waiting = () =>
      Promise.all(['@alice', '@bob', '@carol'].map(async (id) => (await mailbox.projections.heartbeat(id)).tasksWaiting));
    expect(await waiting()).toEqual([1, 0, 0]);
    await alice.getTask(taskId);
    expect(await waiting()).toEqual([0, 0, 0]);
    expect(await eventsOfType(mailbox, 'TaskOutcomeSeen')).toMatchObject([
      { data: { taskId, state: 'Canceled' }, metadata: { actor: '@alice' } },
    ]);
    await Promise.all(stops.map((stop) => stop()));
  });

  it('a deadline finer than a millisecond is rounded up, never earlier than asked: stored so, and the task runs until it', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob']);
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    // Python's isoformat (six digits, +00:00) and a half millisecond: Date.parse kept .000, a deadline up to 1 ms early.
    const task = {
      expiresAt: at(60_000).replace('.000Z', '.000500+00:00'),
      budget: { deadline: at(60_000).replace('.000Z', '.000999Z') },
    };
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'by noon', body: 'x', task });
    const [sent] = await eventsOfType(mailbox, 'MessageSent');
    expect(sent.data.task).toMatchObject({ expiresAt: at(60_001), budget: { deadline: at(60_001) } });
    clock.advance(60_000); // the whole millisecond Date.parse read both as: not yet past either
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 0 });
    expect(await bob.getTask(taskId)).toMatchObject({ mailbox: { state: 'Submitted' } });
    clock.advance(1);
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 1, changed: 1 });
    expect((await eventsOfType(mailbox, 'TaskExpired'))[0].data).toMatchObject({ reason: 'expired', deadline: at(60_001) });
  });

  it('a deadline half a millisecond after the send is after it: accepted (it was refused as not after the send)', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@alice': alice } = await registerAgents(mailbox, ['@alice', '@bob']);
    const expiresAt = new Date(T0).toISOString().replace('.000Z', '.0005Z');
    await alice.send({ to: '@bob', subject: 'now', body: 'x', task: { expiresAt } });
    expect((await eventsOfType(mailbox, 'MessageSent'))[0].data.task).toMatchObject({
      expiresAt: new Date(T0 + 1).toISOString(),
    });
  });
});

describe.each(['memory', 'sqlite'] as const)('a sweeper that starts with tasks already due (%s views)', (views) => {
  const harness = mailboxHarness(STORE_KINDS[1]);

  it('ends them at once, not at the next interval, then waits for the next due time', async () => {
    const clock = new TestClock(T0);
    const before = await harness.open({ taskSweepMs: 0, views }, { clock });
    const tokens = await registerAgents(before, ['@a', '@b', '@c']);
    const { messageId: leased } = await tokens['@a'].send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await tokens['@b'].claimTask(leased, { leaseSeconds: 2 });
    const expiresAt = new Date(T0 + 5_000).toISOString();
    const { messageId: byFive } = await tokens['@a'].send({ to: '@c', subject: 'by five', body: 'x', task: { expiresAt } });
    const { messageId: later } = await tokens['@a'].send({ to: 'AGENT:*', subject: 'later', body: 'x', task: {} });
    await tokens['@c'].claimTask(later, { leaseSeconds: 60 });
    await before.close(); // the mailbox is down while the first lease and the deadline pass
    clock.advance(10_000);

    const after = await harness.open({ taskSweepMs: 0, views }, { clock });
    const [a, b, c] = await Promise.all(['@a', '@b', '@c'].map((id) => after.as(tokens[id].token)));
    const POLL_MS = 600_000; // an interval that never comes in this test
    after.sweeper.start(POLL_MS, { timer: clock.timer });
    // Before: both waited for the first interval's pass (MAILBOX_TASK_SWEEP_MS, 5 s by default), though due already.
    await waitFor(async () => (await eventsOfType(after, 'TaskExpired')).length === 1, { what: 'the deadline ended at start' });
    await waitFor(async () => (await c.listTasks({ view: 'claimable' })).tasks.some((t) => t.taskId === leased), {
      what: 'the lapsed task claimable by @c at start',
    });
    expect((await eventsOfType(after, 'TaskLeaseExpired')).map((e) => e.data)).toMatchObject([
      { taskId: leased, claimant: '@b', leaseExpiresAt: new Date(T0 + 2_000).toISOString() },
    ]);
    expect((await eventsOfType(after, 'TaskExpired')).map((e) => e.data)).toMatchObject([
      { taskId: byFive, deadline: expiresAt },
    ]);
    expect(await b.getTask(leased)).toMatchObject({ mailbox: { state: 'Submitted', assignee: null, lapsedClaimant: '@b' } });
    expect(await a.getTask(byFive)).toMatchObject({ mailbox: { state: 'Canceled' } });
    // ... and it waits for the next due time, @c's lease, on its timer.
    await waitFor(() => clock.timers.some((t) => t.at === T0 + 60_000), { what: "a timer for @c's lease end" });
    clock.advance(50_000);
    await waitFor(async () => (await eventsOfType(after, 'TaskLeaseExpired')).length === 2, { what: "@c's lease ended at it" });
    expect((await c.getTask(later)).mailbox).toMatchObject({ state: 'Submitted', assignee: null, lapsedClaimant: '@c' });
    expect(clock.now().getTime() - T0).toBeLessThan(POLL_MS);
  });
});

describe('a sweeper with more tasks due than one pass takes', () => {
  const harness = mailboxHarness(STORE_KINDS[0]);

  it('passes again at once until none is left, not an interval later', async () => {
    const clock = new TestClock(T0);
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock });
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const expiresAt = new Date(T0 + 1_000).toISOString();
    const PASS = 1000; // what one pass takes (sweepOnce's limit)
    for (let i = 0; i <= PASS; i++) await a.send({ to: ['@b', '@c'], subject: `t${i}`, body: 'x', task: { expiresAt } });
    clock.advance(1_000);
    const passes = jest.spyOn(mailbox.sweeper, 'sweepOnce');
    mailbox.sweeper.start(600_000, { timer: clock.timer }); // an interval that never comes in this test
    // Before: the first pass ended 1000 and the last one waited for the interval (MAILBOX_TASK_SWEEP_MS).
    await waitFor(async () => (await eventsOfType(mailbox, 'TaskExpired')).length === PASS + 1, {
      what: 'every due task ended',
      timeoutMs: 20_000,
    });
    await mailbox.sweeper.stop();
    expect(passes.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(await Promise.all(passes.mock.results.map((r) => r.value))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ looked: PASS, changed: PASS }),
        expect.objectContaining({ looked: 1, changed: 1 }),
      ]),
    );
  }, 60_000);
});

describe('two sweepers on one log', () => {
  const harness = mailboxHarness({
    name: 'sqlite',
    fresh: () => ({ url: `sqlite:${tempDir('mailbox-sweep-')}/events.sqlite`, dir: null }),
  });

  it('expire the same tasks at once and write each TaskExpired once', async () => {
    const clock = new TestClock(T0);
    // Views in each one's memory: one SQLite views file has one owner (sqliteViewsOwnerLock.ts).
    const first = await harness.open({ taskSweepMs: 0, views: 'memory' }, { clock });
    const second = await harness.open({ taskSweepMs: 0, views: 'memory' }, { clock });
    const { '@alice': alice } = await registerAgents(first, ['@alice', '@bob', '@carol']);
    const expiresAt = new Date(T0 + 1_000).toISOString();
    for (let i = 0; i < 10; i++) await alice.send({ to: 'AGENT:*', subject: `t${i}`, body: 'x', task: { expiresAt } });
    await second.runner.waitFor((await second.eventStore.headPosition())!, 5000);
    clock.advance(1_000);
    const [a, b] = await Promise.all([first.sweeper.sweepOnce(), second.sweeper.sweepOnce()]);
    expect(a.looked + b.looked).toBe(20); // both saw all ten due
    expect(a.failed + b.failed).toBe(0);
    const expired = await eventsOfType(first, 'TaskExpired');
    expect(expired).toHaveLength(10);
    expect(new Set(expired.map((e) => e.data.taskId)).size).toBe(10);
  });

  it("both woken at a lease's end return it to its audience once", async () => {
    const clock = new TestClock(T0);
    const first = await harness.open({ taskSweepMs: 0, views: 'memory' }, { clock });
    const second = await harness.open({ taskSweepMs: 0, views: 'memory' }, { clock });
    const { '@a': a, '@b': b } = await registerAgents(first, ['@a', '@b', '@c']);
    for (const mailbox of [first, second]) mailbox.sweeper.start(600_000, { timer: clock.timer });
    const { messageId: taskId } = await a.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await b.claimTask(taskId, { leaseSeconds: 2 });
    await second.runner.waitFor((await second.eventStore.headPosition())!, 5000);
    await waitFor(() => clock.timers.filter((t) => t.at === T0 + 2_000).length === 2, { what: 'both sweepers waiting for it' });
    clock.advance(2_000);
    for (const mailbox of [first, second]) {
      await waitFor(async () => (await mailbox.projections.getTask(taskId))?.assignee === null, {
        what: 'the lapse in both views',
      });
    }
    expect(await eventsOfType(first, 'TaskLeaseExpired')).toMatchObject([{ data: { taskId, claimant: '@b' } }]);
  });
});

describe('the task sweeper on a views store that does not answer', () => {
  const harness = mailboxHarness(STORE_KINDS[0]);

  it('a views store that does not answer for a few passes (a Redis failover) is one warn line without a stack, and one when a pass runs again', async () => {
    const clock = new TestClock(T0);
    const lines: Array<{ level: number; msg: string; err?: unknown; downMs?: number; failedPasses?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock, logger });
    // The views refuse as the Redis adapter does while Redis fails over: UNAVAILABLE, three passes, then answer.
    const projections = mailbox.projections;
    const dueTasks = projections.dueTasks.bind(projections);
    let refusals = 3;
    projections.dueTasks = async (...args) => {
      if (args[2] !== undefined) return dueTasks(...args); // the look for the next due time: not a pass
      clock.advance(1_000); // each pass a second after the last, on the injected clock
      if (refusals === 0) return dueTasks(...args);
      refusals -= 1;
      throw unavailable('Redis projections', new Error('Command timed out'));
    };
    mailbox.sweeper.start(5);
    await waitFor(() => lines.some((line) => line.msg.startsWith('task sweeper: the views store answers again')), {
      what: 'a pass that ran again',
    });
    // It said 'task sweeper: pass failed; retrying at the next interval' at warn with the error's stack, each pass.
    const told = lines.filter((line) => line.level >= 40 || line.msg.startsWith('task sweeper: the views store'));
    expect(told).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^task sweeper: the views store does not answer/) }),
      expect.objectContaining({
        level: 30,
        msg: expect.stringMatching(/^task sweeper: the views store answers again/),
        downMs: 3_000,
        failedPasses: 3,
      }),
    ]);
    expect(told[0].err).toBeUndefined(); // no stack: an outage is no bug
  });

  it('views not served (being taken over from another log) are no outage of the store: no "does not answer" line, nor "answers again"', async () => {
    const clock = new TestClock(T0);
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock, logger });
    // As a take-over at start: the runner says why the views are not served; they refuse each read meanwhile.
    mailbox.runner.noteViewsProblem('Taking over the views from another log: they are not served until the switch.');
    const projections = mailbox.projections;
    const dueTasks = projections.dueTasks.bind(projections);
    let refused = 0;
    let answered = 0;
    projections.dueTasks = async (...args) => {
      if (args[2] !== undefined) return dueTasks(...args); // the look for the next due time: not a pass
      clock.advance(1_000);
      if (refused < 3) {
        refused += 1;
        throw new MailboxError('UNAVAILABLE', 'Service unavailable', 'The views belong to another event log; retry later.');
      }
      answered += 1;
      return dueTasks(...args);
    };
    mailbox.sweeper.start(5);
    await waitFor(() => refused >= 3, { what: 'three passes refused' });
    mailbox.runner.noteViewsProblem(null); // the switch: served again
    await waitFor(() => answered >= 1, { what: 'a pass answered' });
    expect(lines.filter((line) => line.msg.startsWith('task sweeper:'))).toEqual([]);
  });

  it('a node that steps down during the outage ends it with its own line; leading again later, it says no downMs that counts the time it did not sweep', async () => {
    const clock = new TestClock(T0);
    const lines: Array<{ level: number; msg: string; failingForMs?: number; failedPasses?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock, logger });
    // The sweeper lease: this node's until another takes it (`taken`), on the injected clock.
    const lease = { taken: false, holder: null as string | null };
    const store: LeaseStore = {
      name: 'sweeper',
      acquire: async (node) => (lease.taken || lease.holder !== null ? null : ((lease.holder = node), 1n)),
      renew: async (node) => !lease.taken && lease.holder === node,
      release: async () => void (lease.holder = null),
      holder: async () => (lease.holder === null ? null : { node: lease.holder, token: 1n }),
    };
    const timing = leaseTiming(600_000);
    const keeper = new LeaseKeeper(store, 'node-a', timing, () => clock.now().getTime(), { lead: () => {}, stepDown: () => {} });
    mailbox.sweeper.useLease(new LeaseLoop(keeper));
    // The sweeper's looks at whether it leads, counted when it does not: the sign that a pass was left to another node.
    const leading = Object.getOwnPropertyDescriptor(LeaseKeeper.prototype, 'leading')!.get!;
    let notLeadingLooks = 0;
    Object.defineProperty(keeper, 'leading', {
      get: () => (leading.call(keeper) ? true : (notLeadingLooks++, false)),
    });
    const projections = mailbox.projections;
    const dueTasks = projections.dueTasks.bind(projections);
    let down = true;
    const refused: number[] = []; // when, on the injected clock
    let answered = 0;
    projections.dueTasks = async (...args) => {
      if (args[2] !== undefined) return dueTasks(...args); // the look for the next due time: not a pass
      if (!down) return (answered++, dueTasks(...args));
      clock.advance(1_000); // each failing pass a second after the last, on the injected clock
      refused.push(clock.now().getTime());
      throw unavailable('Redis projections', new Error('Command timed out'));
    };
    mailbox.sweeper.start(5);
    await waitFor(() => refused.length >= 3, { what: 'three passes that failed' });
    // Another node takes the lease: this one finds out at its next renewal, and steps down.
    lease.taken = true;
    lease.holder = 'node-b';
    clock.advance(timing.renewMs);
    await waitFor(() => notLeadingLooks >= 2, { what: 'the sweeper finding it no longer leads' });
    const failed = refused.length;
    // A minute later the views answer and the lease is free again: this node leads and sweeps.
    clock.advance(60_000);
    down = false;
    lease.taken = false;
    lease.holder = null;
    await waitFor(() => answered >= 2, { what: 'two passes that ran (the first one said what it says)' });
    await mailbox.sweeper.stop();
    expect(refused).toHaveLength(failed); // no pass while it did not lead
    // It said 'task sweeper: the views store answers again; sweeping' with a downMs that counted the time it did not sweep.
    const told = lines.filter((line) => line.level >= 40 || line.msg.startsWith('task sweeper'));
    expect(told).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^task sweeper: the views store does not answer/) }),
      expect.objectContaining({
        level: 30,
        msg: expect.stringMatching(/^task sweeper: the views store had not answered when this node stepped down/),
        failingForMs: refused[failed - 1] - refused[0], // from the first failed pass to the last, not to the step-down
        failedPasses: failed,
      }),
    ]);
  });
});

describe('the task sweeper on an event store that does not answer', () => {
  const harness = mailboxHarness(STORE_KINDS[0]);
  type Line = {
    level: number;
    msg: string;
    err?: unknown;
    reason?: string;
    cause?: string;
    downMs?: number;
    failedTasks?: number;
  };

  /** A mailbox with two tasks due now, its log lines from debug up, and a switch that makes its appends fail with `error`. */
  async function twoDueTasks(error: Error) {
    const clock = new TestClock(T0);
    const lines: Line[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const mailbox = await harness.open({ taskSweepMs: 0 }, { clock, logger });
    const { '@alice': alice } = await registerAgents(mailbox, ['@alice', '@bob']);
    const expiresAt = new Date(T0 + 1_000).toISOString();
    for (const subject of ['first', 'second']) await alice.send({ to: '@bob', subject, body: 'x', task: { expiresAt } });
    clock.advance(1_000);
    const store = mailbox.eventStore;
    const append = store.append.bind(store);
    const failing = { on: true };
    store.append = async (...args) => {
      if (failing.on) throw error;
      return append(...args);
    };
    return { clock, lines, mailbox, failing, swept: lines.length };
  }

  it('an event store that does not answer for a few passes is one warn line without a stack, and one info line when a task ends again', async () => {
    const { clock, lines, mailbox, failing, swept } = await twoDueTasks(
      unavailable('The event store (EventStoreDB)', new Error('14 UNAVAILABLE: No connection established')),
    );
    for (let pass = 0; pass < 3; pass++) {
      expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 2, changed: 0, failed: 2 });
      clock.advance(5_000);
    }
    failing.on = false;
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 2, changed: 2, failed: 0 });
    // It said 'task sweeper: could not end a due task; ...' at warn with the error's stack, for each task at each pass.
    const told = lines.slice(swept).filter((line) => line.msg.startsWith('task sweeper'));
    expect(told.filter((line) => line.level >= 30)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(/^task sweeper: the event store does not answer/),
        reason: 'The event store (EventStoreDB) is unavailable; retry later (the request was not applied).',
        cause: '14 UNAVAILABLE: No connection established',
      }),
      expect.objectContaining({
        level: 30,
        msg: expect.stringMatching(/^task sweeper: the event store answers again/),
        downMs: 15_000,
        failedTasks: 6,
      }),
    ]);
    expect(told[0].err).toBeUndefined(); // no stack: an outage is no bug
    expect(told.filter((line) => line.level === 20 && line.msg.startsWith('task sweeper: the event store still'))).toHaveLength(
      5,
    );
  });

  it('any other failure to end a due task keeps its warn line with the stack, for each task', async () => {
    const { lines, mailbox, swept } = await twoDueTasks(new Error('a bug in the store'));
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ looked: 2, failed: 2 });
    expect(lines.slice(swept).filter((line) => line.level >= 30)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(/^task sweeper: could not end a due task/),
        err: expect.anything(),
      }),
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(/^task sweeper: could not end a due task/),
        err: expect.anything(),
      }),
    ]);
  });
});
