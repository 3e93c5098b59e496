/**
 * The task views' part of the projection store contract (issue 12), run on
 * every adapter: lists per agent (assigned, claimable, sent) with state
 * filters and pages, waiting counts in the heartbeat, wakes to the other
 * party, the sweeper's due list, and redelivery changing nothing. Identities:
 * @a sends, @b and @c are the audience.
 */
import { TASK_STREAM_PREFIX } from '../../src/events/streams';
import type { TaskEvent, TaskState } from '../../src/events/types';
import type { ProjectionStore } from '../../src/projections/projectionStore';
import { TASK_LISTS } from '../../src/projections/readModel/taskView';
import { LogBuilder, shuffledWithDuplicates } from './projectionStoreLog';
import type { ProjectionStoreFactory, ProjectionStoreHarness } from './projectionStore.contract';
import { recordWakes } from './wakeRecorder';

const claimed = (taskId: string, claimant: string, at: string, leaseExpiresAt: string | null = null): TaskEvent => ({
  type: 'TaskClaimed',
  data: { taskId, claimant, claimedAt: at, leaseExpiresAt },
});
const moved = (taskId: string, from: TaskState, to: TaskState, at: string, note: string | null = null): TaskEvent => ({
  type: 'TaskStateChanged',
  data: { taskId, from, to, reason: null, note, changedAt: at },
});

/** t1: broadcast, claimed by @b, asked, answered, completed, its outcome then seen by @a. t2: direct to @c, canceled by @a. t3: broadcast, claimed by @c, lease lapsed. t4: broadcast, untouched, with a deadline. */
function taskScenario() {
  const log = new LogBuilder().register('@a', '@b', '@c');
  const t1 = log.send('@a', 'AGENT:*', { task: { state: 'Submitted' } }, ['@b', '@c']);
  const t2 = log.send('@a', '@c', { task: {} });
  const t3 = log.send('@a', 'AGENT:*', { task: {} }, ['@b', '@c']);
  const t4 = log.send('@a', 'AGENT:*', { task: { expiresAt: '2025-04-01T10:00:00.000Z' } }, ['@b', '@c']);
  log.task('@b', claimed(t1, '@b', log.nextAt));
  log.task('@b', moved(t1, 'Submitted', 'Working', log.nextAt));
  log.task('@b', moved(t1, 'Working', 'InputRequired', log.nextAt, 'which branch?'));
  log.task('@c', moved(t2, 'Submitted', 'Working', log.nextAt));
  log.task('@c', claimed(t3, '@c', log.nextAt, '2025-04-01T09:30:00.000Z'));
  const waitingMidway = log.events.length;
  log.task('@a', moved(t1, 'InputRequired', 'Working', log.nextAt, 'main'));
  log.task('@b', moved(t1, 'Working', 'Completed', log.nextAt));
  log.task('@a', moved(t2, 'Working', 'Canceled', log.nextAt));
  log.task('sweeper', {
    type: 'TaskLeaseExpired',
    data: { taskId: t3, claimant: '@c', from: 'Submitted', leaseExpiresAt: '2025-04-01T09:30:00.000Z', expiredAt: log.nextAt },
  });
  const unseenUntil = log.events.length;
  log.task('@a', { type: 'TaskOutcomeSeen', data: { taskId: t1, sender: '@a', state: 'Completed', seenAt: log.nextAt } });
  return { log, t1, t2, t3, t4, waitingMidway, unseenUntil };
}

async function taskLists(store: ProjectionStore, identity: string) {
  const lists: Record<string, string[]> = {};
  for (const list of TASK_LISTS) {
    const ids: string[] = [];
    for (let before: number | null = null; ;) {
      const page = await store.listTasks(identity, { list, limit: 2, before });
      ids.push(...page.tasks.map((t) => `${t.taskId}:${t.state}`));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    lists[list] = ids;
  }
  return lists;
}

export function describeTaskViewsContract(name: string, factory: ProjectionStoreFactory): void {
  describe(`task views contract: ${name}`, () => {
    let harnesses: ProjectionStoreHarness[] = [];
    const open = async () => {
      const harness = await factory();
      harnesses.push(harness);
      return harness;
    };
    afterEach(async () => {
      await Promise.all(harnesses.map((h) => h.close()));
      harnesses = [];
    });

    it('lists, state filters, pages, waiting counts and the due list, as the rules decide', async () => {
      const { store } = await open();
      const { log, t1, t2, t3, t4, waitingMidway, unseenUntil } = taskScenario();
      await store.applyBatch(log.projected().slice(0, waitingMidway));
      expect((await store.heartbeat('@a')).tasksWaiting).toBe(1); // t1 asks @a for input
      expect((await store.heartbeat('@c')).tasksWaiting).toBe(2); // t2 and t3 wait on @c
      expect((await store.heartbeat('@b')).tasksWaiting).toBe(0);
      // When a task last began waiting on each (the heartbeat's mark): t1 asking @a; none on @b.
      expect((await store.heartbeat('@a')).tasksWaitingSince).toMatchObject({ taskId: t1 });
      expect((await store.heartbeat('@b')).tasksWaitingSince).toBeNull();
      expect((await store.getTask(t1))?.statusMessage).toBe('which branch?');
      expect((await taskLists(store, '@a')).asking).toEqual([`${t1}:InputRequired`]); // what @a's messages may answer
      await store.applyBatch(log.projected().slice(waitingMidway, unseenUntil));
      // t1 completed by @b waits on @a until @a saw it; t2, canceled by @a itself, waits on nobody.
      expect(await Promise.all(['@a', '@b', '@c'].map(async (id) => (await store.heartbeat(id)).tasksWaiting))).toEqual([
        1, 0, 0,
      ]);
      expect(await store.getTask(t1)).toMatchObject({ outcomeUnseen: true });
      expect(await store.getTask(t2)).toMatchObject({ outcomeUnseen: false });
      await store.applyBatch(log.projected().slice(unseenUntil));
      expect(await store.getTask(t1)).toMatchObject({ outcomeUnseen: false, updatedBy: '@b' });

      expect(await taskLists(store, '@a')).toEqual({
        assigned: [],
        claimable: [],
        sent: [`${t4}:Submitted`, `${t3}:Submitted`, `${t2}:Canceled`, `${t1}:Completed`],
        asking: [],
      });
      expect(await taskLists(store, '@b')).toEqual({
        assigned: [`${t1}:Completed`],
        claimable: [`${t4}:Submitted`, `${t3}:Submitted`],
        sent: [],
        asking: [],
      });
      expect(await taskLists(store, '@c')).toEqual({
        assigned: [`${t2}:Canceled`],
        claimable: [`${t4}:Submitted`, `${t3}:Submitted`],
        sent: [],
        asking: [],
      });
      const finished = await store.listTasks('@a', { list: 'sent', states: ['Canceled', 'Completed'], limit: 1, before: null });
      expect(finished.tasks.map((t) => t.taskId)).toEqual([t2]);
      const next = await store.listTasks('@a', {
        list: 'sent',
        states: ['Canceled', 'Completed'],
        limit: 1,
        before: finished.nextBefore,
      });
      expect(next).toMatchObject({ tasks: [{ taskId: t1, assignee: '@b', state: 'Completed' }], nextBefore: null });
      expect(await store.getTask(t3)).toMatchObject({ assignee: null, lapsedClaimant: '@c', state: 'Submitted' });
      expect((await store.getTask(t1))?.statusMessage).toBeNull(); // the status message is the last change's (Completed: none)
      for (const identity of ['@a', '@b', '@c']) expect((await store.heartbeat(identity)).tasksWaiting).toBe(0);
      // Only t4 has a deadline; it is due from then on, not before.
      expect((await store.dueTasks('2025-04-01T09:59:59.000Z', 10)).map((t) => t.taskId)).toEqual([]);
      expect((await store.dueTasks('2025-04-01T10:00:00.000Z', 10)).map((t) => t.taskId)).toEqual([t4]);
    });

    it("the due list is the earliest due first; with `after`, only what fell due after it (the sweeper's look for its next timer)", async () => {
      const { store } = await open();
      const log = new LogBuilder().register('@a', '@b', '@c');
      const at = (minute: number) => `2025-04-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
      const late = log.send('@a', 'AGENT:*', { task: { expiresAt: at(30) } }, ['@b', '@c']);
      const leased = log.send('@a', 'AGENT:*', { task: {} }, ['@b', '@c']);
      const early = log.send('@a', '@b', { task: { expiresAt: at(10) } });
      const paused = log.send('@a', 'AGENT:*', { task: {} }, ['@b', '@c']);
      log.task('@c', claimed(leased, '@c', log.nextAt, at(20)));
      log.task('@b', claimed(paused, '@b', log.nextAt, at(5)));
      log.task('@b', moved(paused, 'Submitted', 'InputRequired', log.nextAt, 'which branch?')); // its lease is paused
      await store.applyBatch(log.projected());
      const due = async (now: string, limit: number, after?: string) =>
        (await store.dueTasks(now, limit, after)).map((t) => t.taskId);
      expect(await due(at(59), 10)).toEqual([early, leased, late]);
      expect(await due(at(59), 1)).toEqual([early]);
      expect(await due(at(20), 10)).toEqual([early, leased]);
      expect(await due(at(59), 10, at(10))).toEqual([leased, late]); // after is exclusive: due at 10:10 is not after it
      expect(await due(at(59), 1, at(19))).toEqual([leased]);
      expect(await due(at(25), 10, at(20))).toEqual([]);
    });

    it("every history line, a page at a time (audit verify's walk): each claim, state change and lapse names its task; redelivery adds none", async () => {
      const { store } = await open();
      const { log, t1, t2, t3 } = taskScenario();
      await store.applyBatch(log.projected());
      /** The lines, walked with small pages; a line may come twice (Redis pages as HSCAN does), each names one task. */
      const walk = async (limit: number) => {
        const lines = new Map<string, string>();
        let after: string | null = null;
        for (let pages = 1; ; pages++) {
          const page = await store.taskHistoryLines(after, limit);
          for (const line of page.lines) {
            expect(lines.get(line.eventId) ?? line.taskId).toBe(line.taskId);
            lines.set(line.eventId, line.taskId);
          }
          if (page.next === null) return Object.fromEntries(lines);
          if (pages > 50) throw new Error(`taskHistoryLines(${limit}) did not end after 50 pages`);
          after = page.next;
        }
      };
      // The scenario's task events but @a's seeing t1's outcome (it changes neither state nor holder); t4 has none.
      const expected = Object.fromEntries(
        log.events
          .filter((event) => event.streamName.startsWith(TASK_STREAM_PREFIX) && event.type !== 'TaskOutcomeSeen')
          .map((event) => [event.eventId, (event.data as { taskId: string }).taskId]),
      );
      const perTask = (lines: Record<string, string>) =>
        Object.values(lines).reduce<Record<string, number>>(
          (counts, task) => ({ ...counts, [task]: (counts[task] ?? 0) + 1 }),
          {},
        );
      expect(perTask(expected)).toEqual({ [t1]: 5, [t2]: 2, [t3]: 2 });
      expect(await walk(2)).toEqual(expected);
      expect(await walk(1000)).toEqual(expected);
      for (const batch of shuffledWithDuplicates(log.projected(), 5)) await store.applyBatch(batch);
      expect(await walk(3)).toEqual(expected);
    });

    it('wakes the other party per change, and the audience of a task back to it, after the view shows it; redelivery changes nothing and wakes nobody', async () => {
      const { store, wakeBus } = await open();
      const recorder = await recordWakes(wakeBus, ['@a', '@b', '@c']);
      try {
        const { log, t1, t2, t3 } = taskScenario();
        await store.applyBatch(log.projected());
        await recorder.flush();
        const said = (identity: string) => recorder.tasksOf(identity).map((w) => `${w.taskId}:${w.event}:${w.state}:${w.by}`);
        expect(said('@a')).toEqual([
          `${t1}:TaskClaimed:Submitted:@b`,
          `${t1}:TaskStateChanged:InputRequired:@b`,
          `${t3}:TaskClaimed:Submitted:@c`,
          `${t1}:TaskStateChanged:Completed:@b`,
          `${t3}:TaskLeaseExpired:Submitted:sweeper`,
        ]);
        // t3's lapsed lease puts it back before its audience: each who may claim it now is woken, its lapsed holder and its
        // sender too.
        expect(said('@b')).toEqual([`${t1}:TaskStateChanged:Working:@a`, `${t3}:TaskLeaseExpired:Submitted:sweeper`]);
        expect(said('@c')).toEqual([`${t2}:TaskStateChanged:Canceled:@a`, `${t3}:TaskLeaseExpired:Submitted:sweeper`]);
        const before = { a: await taskLists(store, '@a'), b: await taskLists(store, '@b'), beats: await store.allHeartbeats() };
        const wakes = recorder.wakes.length;
        for (const batch of shuffledWithDuplicates(log.projected(), 5)) await store.applyBatch(batch);
        await recorder.flush();
        expect(recorder.wakes).toHaveLength(wakes);
        expect({ a: await taskLists(store, '@a'), b: await taskLists(store, '@b'), beats: await store.allHeartbeats() }).toEqual(
          before,
        );
      } finally {
        await recorder.stop();
      }
    });
  });
}
