/**
 * The task views' rules: lists (assigned, claimable, sent), waiting counts and
 * wakes, per task fact. Identities: @a sends, @b and @c are the audience.
 */
import type { TaskEvent, TaskState } from '../../../src/events/types';
import type { TaskWakeEvent } from '../../../src/projections/viewChanges';
import { taskAsOf } from '../../../src/projections/readModel/taskRules';
import { ReadModelSpec } from '../../support/readModelSpec';
import { LogBuilder, next, nextPosition } from './scenario';

const claimedBy = (taskId: string, claimant: string, at: string, leaseExpiresAt: string | null = null): TaskEvent => ({
  type: 'TaskClaimed',
  data: { taskId, claimant, claimedAt: at, leaseExpiresAt },
});
const moved = (
  taskId: string,
  from: TaskState,
  to: TaskState,
  at: string,
  why: { reason?: string; note?: string } = {},
): TaskEvent => ({
  type: 'TaskStateChanged',
  data: { taskId, from, to, reason: why.reason ?? null, note: why.note ?? null, changedAt: at },
});

function broadcastTask() {
  const log = new LogBuilder().register('@a', '@b', '@c');
  const taskId = log.send('@a', 'AGENT:*', { task: { state: 'Submitted' }, subject: 'review PR 7' }, ['@b', '@c']);
  return { log, taskId };
}

const listed = (
  views: Parameters<Parameters<ReturnType<ReturnType<typeof ReadModelSpec.given>['when']>['thenViews']>[0]>[0],
  identity: string,
  list: 'assigned' | 'claimable' | 'sent' | 'asking',
) =>
  views.tasks.list(identity, { list, limit: 50, before: null }).tasks.map((t) => `${t.taskId}:${t.state}:${t.assignee ?? '-'}`);

describe('read model: tasks', () => {
  it('a broadcast task is claimable by each audience member and listed as sent by its sender; it waits on nobody yet', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const when = next(log, (l) => l.send('@a', 'AGENT:*', { task: {} }, ['@b', '@c']));
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => {
        expect(listed(views, '@b', 'claimable')).toEqual(['m1:Submitted:-']);
        expect(listed(views, '@c', 'claimable')).toEqual(['m1:Submitted:-']);
        expect(listed(views, '@a', 'sent')).toEqual(['m1:Submitted:-']);
        expect(listed(views, '@b', 'assigned')).toEqual([]);
        expect(['@a', '@b', '@c'].map((id) => views.heartbeat(id).tasksWaiting)).toEqual([0, 0, 0]);
      });
  });

  it('a list task (to: [@b, @c]) is no broadcast (isBroadcast false, as its wakes and story say) but is claimable by each listed identity alike', () => {
    const log = new LogBuilder().register('@a', '@b', '@c', '@d');
    const when = next(log, (l) => l.send('@a', ['@b', '@c'], { task: {} }));
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => {
        expect(views.tasks.task('m1')).toMatchObject({ to: ['@b', '@c'], isBroadcast: false, assignee: null });
        expect(listed(views, '@b', 'claimable')).toEqual(['m1:Submitted:-']);
        expect(listed(views, '@c', 'claimable')).toEqual(['m1:Submitted:-']);
        expect(listed(views, '@d', 'claimable')).toEqual([]);
      });
  });

  it('a broadcast task (to: AGENT:*) says isBroadcast true', () => {
    const log = new LogBuilder().register('@a', '@b');
    const when = next(log, (l) => l.send('@a', 'AGENT:*', { task: {} }, ['@b']));
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => expect(views.tasks.task('m1')).toMatchObject({ isBroadcast: true }));
  });

  it('a direct task is assigned to its recipient at once and waits on it', () => {
    const log = new LogBuilder().register('@a', '@b');
    const when = next(log, (l) => l.send('@a', '@b', { task: { state: 'Submitted' } }));
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => {
        expect(listed(views, '@b', 'assigned')).toEqual(['m1:Submitted:@b']);
        expect(listed(views, '@b', 'claimable')).toEqual([]);
        expect(views.heartbeat('@b').tasksWaiting).toBe(1);
      });
  });

  it('a claim takes the task out of every claimable list at once, assigns it, and wakes the sender only', () => {
    const { log, taskId } = broadcastTask();
    const given = log.projected();
    const position = nextPosition(log);
    const when = next(log, (l) => l.task('@b', claimedBy(taskId, '@b', l.nextAt)));
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(listed(views, '@b', 'claimable')).toEqual([]);
        expect(listed(views, '@c', 'claimable')).toEqual([]);
        expect(listed(views, '@b', 'assigned')).toEqual([`${taskId}:Submitted:@b`]);
        expect(views.heartbeat('@b').tasksWaiting).toBe(1);
      });
    ReadModelSpec.given(given)
      .when(...when)
      .thenWakes([
        {
          type: 'wake/task',
          taskId,
          messageId: taskId,
          recipient: '@a',
          by: '@b',
          event: 'TaskClaimed',
          state: 'Submitted',
          assignee: '@b',
          subject: 'review PR 7',
          priority: 'normal',
          position: position.toString(),
        } satisfies TaskWakeEvent,
      ]);
  });

  it('InputRequired waits on the sender and wakes it; the answer waits on the assignee again and wakes it', () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt)).task('@b', moved(taskId, 'Submitted', 'Working', log.nextAt));
    const given = log.projected();
    const asked = next(log, (l) => l.task('@b', moved(taskId, 'Working', 'InputRequired', l.nextAt, { note: 'which branch?' })));
    ReadModelSpec.given(given)
      .when(...asked)
      .thenViews((views) => {
        expect(views.heartbeat('@a').tasksWaiting).toBe(1);
        expect(views.heartbeat('@b').tasksWaiting).toBe(0);
        expect(views.tasks.task(taskId)?.statusMessage).toBe('which branch?');
        // Asking its sender: what the sender's messages in the thread may answer (taskAnswers.ts).
        expect(listed(views, '@a', 'asking')).toEqual([`${taskId}:InputRequired:@b`]);
        expect(listed(views, '@b', 'asking')).toEqual([]);
      });
    ReadModelSpec.given(given)
      .when(...asked)
      .thenWakes([expect.objectContaining({ recipient: '@a', state: 'InputRequired', by: '@b' }) as never]);
    const afterAsk = log.projected();
    const answered = next(log, (l) => l.task('@a', moved(taskId, 'InputRequired', 'Working', l.nextAt, { note: 'main' })));
    ReadModelSpec.given(afterAsk)
      .when(...answered)
      .thenViews((views) => expect(listed(views, '@a', 'asking')).toEqual([]));
    ReadModelSpec.given(afterAsk)
      .when(...answered)
      .thenWakes([expect.objectContaining({ recipient: '@b', state: 'Working', by: '@a' }) as never]);
  });

  it('Canceled wakes the assignee, not the sender who canceled; a terminal task waits on nobody', () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt));
    const given = log.projected();
    const when = next(log, (l) => l.task('@a', moved(taskId, 'Submitted', 'Canceled', l.nextAt)));
    ReadModelSpec.given(given)
      .when(...when)
      .thenWakes([expect.objectContaining({ recipient: '@b', state: 'Canceled', by: '@a' }) as never]);
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => expect(['@a', '@b', '@c'].map((id) => views.heartbeat(id).tasksWaiting)).toEqual([0, 0, 0]));
  });

  it('a lapsed lease puts the task back in every claimable list and records the claimant', () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt, log.nextAt));
    const given = log.projected();
    const when = next(log, (l) =>
      l.task('@sweeper', {
        type: 'TaskLeaseExpired',
        data: { taskId, claimant: '@b', from: 'Submitted', leaseExpiresAt: l.nextAt, expiredAt: l.nextAt },
      }),
    );
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(listed(views, '@b', 'claimable')).toEqual([`${taskId}:Submitted:-`]);
        expect(listed(views, '@c', 'claimable')).toEqual([`${taskId}:Submitted:-`]);
        expect(listed(views, '@b', 'assigned')).toEqual([]);
        expect(views.tasks.task(taskId)?.lapsedClaimant).toBe('@b');
      });
  });

  describe('a task back with its audience wakes every member who may claim it now (an agent waiting on wakes learns it)', () => {
    const heldBy = (holder: string, lease: boolean) => {
      const log = new LogBuilder().register('@a', '@b', '@c', '@d');
      const taskId = log.send('@a', 'AGENT:*', { task: {}, subject: 'review PR 7' }, ['@b', '@c', '@d']);
      log.task(holder, claimedBy(taskId, holder, log.nextAt, lease ? log.nextAt : null));
      return { log, taskId };
    };
    /** `recipient:event:state:assignee:by` for each wake due, in order. */
    const woken = (...rows: string[]) =>
      rows.map((row) => {
        const [recipient, event, state, assignee, ...by] = row.split(':');
        const fields = { recipient, event, state, assignee: assignee === '-' ? null : assignee, by: by.join(':') };
        return expect.objectContaining({ type: 'wake/task', ...fields }) as never;
      });

    it('released by its holder: its sender (whose last wake named the holder) and the rest of the audience, not the holder that released it', () => {
      const { log, taskId } = heldBy('@b', false);
      const given = log.projected();
      const when = next(log, (l) =>
        l.task('@b', { type: 'TaskReleased', data: { taskId, claimant: '@b', from: 'Submitted', releasedAt: l.nextAt } }),
      );
      ReadModelSpec.given(given)
        .when(...when)
        .thenWakes(woken('@a:TaskReleased:Submitted:-:@b', '@c:TaskReleased:Submitted:-:@b', '@d:TaskReleased:Submitted:-:@b'));
    });

    it("a lapse recorded by a claim (before the sweep): the lapsed claimant alone; the task is the claimant's at once", () => {
      const { log, taskId } = heldBy('@b', true);
      const given = log.projected();
      const when = next(log, (l) =>
        l
          .task('@c', {
            type: 'TaskLeaseExpired',
            data: { taskId, claimant: '@b', from: 'Submitted', leaseExpiresAt: l.nextAt, expiredAt: l.nextAt },
          })
          .task('@c', claimedBy(taskId, '@c', l.nextAt)),
      );
      ReadModelSpec.given(given)
        .when(...when)
        .thenWakes(woken('@b:TaskLeaseExpired:Submitted:-:@c', '@a:TaskClaimed:Submitted:@c:@c'));
    });

    it("a retired holder's release recorded by a claim: nobody (the task is the claimant's at once)", () => {
      const { log, taskId } = heldBy('@b', false);
      const given = log.projected();
      const when = next(log, (l) =>
        l
          .task('@c', { type: 'TaskReleased', data: { taskId, claimant: '@b', from: 'Submitted', releasedAt: l.nextAt } })
          .task('@c', claimedBy(taskId, '@c', l.nextAt)),
      );
      ReadModelSpec.given(given)
        .when(...when)
        .thenWakes(woken('@a:TaskClaimed:Submitted:@c:@c'));
    });

    it("a retired holder's release (by the admin): its sender and the rest of the audience, not the retired holder", () => {
      const { log, taskId } = heldBy('@b', false);
      const given = log.projected();
      const when = next(log, (l) =>
        l.task('@admin', { type: 'TaskReleased', data: { taskId, claimant: '@b', from: 'Submitted', releasedAt: l.nextAt } }),
      );
      ReadModelSpec.given(given)
        .when(...when)
        .thenWakes(
          woken('@a:TaskReleased:Submitted:-:@admin', '@c:TaskReleased:Submitted:-:@admin', '@d:TaskReleased:Submitted:-:@admin'),
        );
    });

    it('a lapsed lease swept: its sender and the whole audience, the lapsed claimant too (it may claim again)', () => {
      const { log, taskId } = heldBy('@b', true);
      const given = log.projected();
      const when = next(log, (l) =>
        l.task('system:sweeper', {
          type: 'TaskLeaseExpired',
          data: { taskId, claimant: '@b', from: 'Submitted', leaseExpiresAt: l.nextAt, expiredAt: l.nextAt },
        }),
      );
      ReadModelSpec.given(given)
        .when(...when)
        .thenWakes(
          woken(
            '@a:TaskLeaseExpired:Submitted:-:system:sweeper',
            '@b:TaskLeaseExpired:Submitted:-:system:sweeper',
            '@c:TaskLeaseExpired:Submitted:-:system:sweeper',
            '@d:TaskLeaseExpired:Submitted:-:system:sweeper',
          ),
        );
    });
  });

  describe('the lapsed claimant is shown while its lapse stands: until it claims the task again or the task ends', () => {
    const lapsedTask = () => {
      const { log, taskId } = broadcastTask();
      log.task('@b', claimedBy(taskId, '@b', log.nextAt, log.nextAt)).task('@sweeper', {
        type: 'TaskLeaseExpired',
        data: { taskId, claimant: '@b', from: 'Submitted', leaseExpiresAt: log.nextAt, expiredAt: log.nextAt },
      });
      return { log, taskId };
    };

    it('claimed again by the lapsed claimant: it holds the task, no lapse is shown', () => {
      const { log, taskId } = lapsedTask();
      const given = log.projected();
      const when = next(log, (l) => l.task('@b', claimedBy(taskId, '@b', l.nextAt)));
      ReadModelSpec.given(given)
        .when(...when)
        .thenViews((views) => expect(views.tasks.task(taskId)).toMatchObject({ assignee: '@b', lapsedClaimant: null }));
    });

    it("claimed by another: the lapse still stands (the lapsed claimant's late update is refused LEASE_EXPIRED)", () => {
      const { log, taskId } = lapsedTask();
      const given = log.projected();
      const when = next(log, (l) => l.task('@c', claimedBy(taskId, '@c', l.nextAt)));
      ReadModelSpec.given(given)
        .when(...when)
        .thenViews((views) => expect(views.tasks.task(taskId)).toMatchObject({ assignee: '@c', lapsedClaimant: '@b' }));
    });

    it.each<[string, (taskId: string, at: string) => TaskEvent]>([
      ['Completed by its new holder', (taskId, at) => moved(taskId, 'Working', 'Completed', at)],
      ['Canceled by its sender', (taskId, at) => moved(taskId, 'Working', 'Canceled', at)],
      [
        'expired by the sweeper',
        (taskId, at) => ({
          type: 'TaskExpired',
          data: { taskId, from: 'Working', to: 'Canceled', reason: 'expired', deadline: at, expiredAt: at },
        }),
      ],
    ])('ended (%s): none is shown', (_how, ending) => {
      const { log, taskId } = lapsedTask();
      log.task('@c', claimedBy(taskId, '@c', log.nextAt)).task('@c', moved(taskId, 'Submitted', 'Working', log.nextAt));
      const given = log.projected();
      const when = next(log, (l) => l.task('@c', ending(taskId, l.nextAt)));
      ReadModelSpec.given(given)
        .when(...when)
        .thenViews((views) => expect(views.tasks.task(taskId)?.lapsedClaimant).toBeNull());
    });
  });

  describe('the lease is shown while it runs (Submitted, Working): paused while the task asks its sender', () => {
    const leased = () => {
      const { log, taskId } = broadcastTask();
      const lease = new Date(Date.parse(log.nextAt) + 60_000).toISOString();
      log.task('@b', claimedBy(taskId, '@b', log.nextAt, lease)).task('@b', moved(taskId, 'Submitted', 'Working', log.nextAt));
      return { log, taskId, lease };
    };

    it.each<['InputRequired' | 'AuthRequired']>([['InputRequired'], ['AuthRequired']])(
      'Working -> %s: no lease is shown, and the task is not due for the sweeper past the old lease',
      (asking) => {
        const { log, taskId, lease } = leased();
        const given = log.projected();
        const when = next(log, (l) => l.task('@b', moved(taskId, 'Working', asking, l.nextAt, { note: 'which branch?' })));
        ReadModelSpec.given(given)
          .when(...when)
          .thenViews((views) => {
            expect(views.tasks.task(taskId)).toMatchObject({ state: asking, assignee: '@b', leaseExpiresAt: null });
            const pastTheOldLease = new Date(Date.parse(lease) + 3_600_000).toISOString();
            expect(views.tasks.due(pastTheOldLease, 10).map((task) => task.taskId)).toEqual([]);
          });
      },
    );

    it("the sender's answer (Working, with the renewal the decider writes beside it) shows the renewed lease", () => {
      const { log, taskId } = leased();
      log.task('@b', moved(taskId, 'Working', 'InputRequired', log.nextAt, { note: 'which branch?' }));
      const given = log.projected();
      const renewed = new Date(Date.parse(log.nextAt) + 120_000).toISOString();
      const when = next(log, (l) =>
        l.task('@a', moved(taskId, 'InputRequired', 'Working', l.nextAt, { note: 'main' })).task('@a', {
          type: 'TaskLeaseRenewed',
          data: { taskId, claimant: '@b', leaseExpiresAt: renewed, renewedAt: l.nextAt },
        }),
      );
      ReadModelSpec.given(given)
        .when(...when)
        .thenViews((views) => expect(views.tasks.task(taskId)).toMatchObject({ state: 'Working', leaseExpiresAt: renewed }));
    });
  });

  it('a redelivered task event changes nothing', () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt));
    const all = log.projected();
    ReadModelSpec.given(all)
      .when(all[all.length - 1])
      .thenNothing();
  });
});

describe("read model: the task of each line in a task's history (a line's id given as a message's or a task's)", () => {
  it('each event that makes a line (claim, state change, release, lapse, expiry) names its task; the others name nothing', () => {
    const { log, taskId } = broadcastTask();
    const from = log.events.length;
    const when = next(log, (l) =>
      l
        .task('@b', claimedBy(taskId, '@b', l.nextAt, '2030-01-01T00:00:00.000Z'))
        .task('@b', {
          type: 'TaskLeaseRenewed',
          data: { taskId, claimant: '@b', leaseExpiresAt: '2030-01-02T00:00:00.000Z', renewedAt: l.nextAt },
        })
        .task('@b', {
          type: 'TaskArtifactAdded',
          data: { taskId, artifact: { artifactId: 'a1', name: null, parts: [{ kind: 'text', text: 'x' }] }, addedAt: l.nextAt },
        })
        .task('@b', moved(taskId, 'Submitted', 'Working', l.nextAt))
        .task('@b', { type: 'TaskReleased', data: { taskId, claimant: '@b', from: 'Working', releasedAt: l.nextAt } })
        .task('@c', claimedBy(taskId, '@c', l.nextAt))
        .task('@c', moved(taskId, 'Submitted', 'Completed', l.nextAt)),
    );
    const ids = log.events.slice(from).map((event) => `${event.type} ${event.eventId}`);
    ReadModelSpec.given(log.projected().slice(0, from))
      .when(...when)
      .thenViews((views) =>
        expect(ids.map((id) => `${id.split(' ')[0]} ${views.tasks.taskOfHistoryLine(id.split(' ')[1])}`)).toEqual([
          `TaskClaimed ${taskId}`,
          'TaskLeaseRenewed null',
          'TaskArtifactAdded null',
          `TaskStateChanged ${taskId}`,
          `TaskReleased ${taskId}`,
          `TaskClaimed ${taskId}`,
          `TaskStateChanged ${taskId}`,
        ]),
      );
  });
});

describe('read model: a task that ended without its sender waits on the sender until it is seen', () => {
  const seen = (taskId: string, state: TaskState, at: string): TaskEvent => ({
    type: 'TaskOutcomeSeen',
    data: { taskId, sender: '@a', state, seenAt: at },
  });
  const counts = (views: { heartbeat(id: string): { tasksWaiting: number } }) =>
    ['@a', '@b', '@c'].map((id) => views.heartbeat(id).tasksWaiting);

  it.each<[string, TaskState]>([
    ['Completed', 'Completed'],
    ['Failed', 'Failed'],
  ])('%s by the assignee: waits on the sender (unseen), then on nobody once the sender saw it', (_, to) => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt)).task('@b', moved(taskId, 'Submitted', 'Working', log.nextAt));
    const given = log.projected();
    const ended = next(log, (l) => l.task('@b', moved(taskId, 'Working', to, l.nextAt, { reason: 'why' })));
    ReadModelSpec.given(given)
      .when(...ended)
      .thenViews((views) => {
        expect(counts(views)).toEqual([1, 0, 0]);
        expect(views.tasks.task(taskId)?.outcomeUnseen).toBe(true);
      });
    const afterEnd = log.projected();
    const lastChange = log.nextAt;
    const looked = next(log, (l) => l.task('@a', seen(taskId, to, l.nextAt)));
    ReadModelSpec.given(afterEnd)
      .when(...looked)
      .thenViews((views) => {
        expect(counts(views)).toEqual([0, 0, 0]);
        // Reading is no change to the task: its last change is still the assignee's.
        expect(views.tasks.task(taskId)).toMatchObject({ outcomeUnseen: false, updatedBy: '@b', state: to });
        expect(views.tasks.task(taskId)?.updatedAt).not.toBe(lastChange);
      });
    ReadModelSpec.given(afterEnd)
      .when(...looked)
      .thenWakes([]);
  });

  it('Rejected by the assignee and expired by the sweeper wait on the sender too', () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt));
    const given = log.projected();
    const rejected = next(log, (l) => l.task('@b', moved(taskId, 'Submitted', 'Rejected', l.nextAt, { reason: 'no' })));
    ReadModelSpec.given(given)
      .when(...rejected)
      .thenViews((views) => expect(counts(views)).toEqual([1, 0, 0]));

    const other = broadcastTask();
    other.log.task('@b', claimedBy(other.taskId, '@b', other.log.nextAt));
    const before = other.log.projected();
    const expired = next(other.log, (l) =>
      l.task('@sweeper', {
        type: 'TaskExpired',
        data: {
          taskId: other.taskId,
          from: 'Submitted',
          to: 'Canceled',
          reason: 'expired',
          deadline: l.nextAt,
          expiredAt: l.nextAt,
        },
      }),
    );
    ReadModelSpec.given(before)
      .when(...expired)
      .thenViews((views) => expect(counts(views)).toEqual([1, 0, 0]));
  });

  it("the sender's own cancel waits on nobody; a seen mark redelivered or on an open task changes no count", () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt));
    const given = log.projected();
    const canceled = next(log, (l) => l.task('@a', moved(taskId, 'Submitted', 'Canceled', l.nextAt)));
    ReadModelSpec.given(given)
      .when(...canceled)
      .thenViews((views) => expect(counts(views)).toEqual([0, 0, 0]));

    const open = broadcastTask();
    open.log.task('@b', claimedBy(open.taskId, '@b', open.log.nextAt));
    const held = open.log.projected();
    const early = next(open.log, (l) => l.task('@a', seen(open.taskId, 'Submitted', l.nextAt)));
    ReadModelSpec.given(held)
      .when(...early)
      .thenViews((views) => expect(counts(views)).toEqual([0, 1, 0]));
  });
});

describe("read model: when a task last began waiting on an agent (tasksWaitingSince, the heartbeat's mark)", () => {
  /** The mark an event sets: its position, its time, the task. */
  const sinceOf = (events: ReturnType<typeof next>, taskId: string) => ({
    position: Number(events[0].position),
    at: events[0].at,
    taskId,
  });
  const marks = (views: { heartbeat(id: string): { tasksWaitingSince: unknown } }) =>
    ['@a', '@b', '@c'].map((id) => views.heartbeat(id).tasksWaitingSince);

  it('a direct task waits on its recipient from its send: the mark is the send; nobody else has one', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const when = next(log, (l) => l.send('@a', '@b', { task: { state: 'Submitted' } }));
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => expect(marks(views)).toEqual([null, sinceOf(when, 'm1'), null]));
  });

  it('a lease renewed, an artifact added, a state change that keeps it waiting on the same agent: the mark stays', () => {
    const { log, taskId } = broadcastTask();
    const claimed = next(log, (l) => l.task('@b', claimedBy(taskId, '@b', l.nextAt, '2030-01-01T00:00:00.000Z')));
    const given = log.projected();
    const when = next(log, (l) =>
      l
        .task('@b', {
          type: 'TaskLeaseRenewed',
          data: { taskId, claimant: '@b', leaseExpiresAt: '2030-01-02T00:00:00.000Z', renewedAt: l.nextAt },
        })
        .task('@b', {
          type: 'TaskArtifactAdded',
          data: { taskId, artifact: { artifactId: 'a1', name: null, parts: [{ kind: 'text', text: 'x' }] }, addedAt: l.nextAt },
        })
        .task('@b', moved(taskId, 'Submitted', 'Working', l.nextAt)),
    );
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => expect(marks(views)).toEqual([null, sinceOf(claimed, taskId), null]));
  });

  it("a task that leaves its holder (asks its sender) and comes back (answered) moves the holder's mark to its return", () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt)).task('@b', moved(taskId, 'Submitted', 'Working', log.nextAt));
    const given = log.projected();
    const asked = next(log, (l) => l.task('@b', moved(taskId, 'Working', 'InputRequired', l.nextAt)));
    // Asking: it waits on the sender since the question, on its holder no more (no task waits on it: no mark).
    ReadModelSpec.given(given)
      .when(...asked)
      .thenViews((views) => expect(marks(views)).toEqual([sinceOf(asked, taskId), null, null]));
    const afterAsk = log.projected();
    const answered = next(log, (l) => l.task('@a', moved(taskId, 'InputRequired', 'Working', l.nextAt)));
    ReadModelSpec.given(afterAsk)
      .when(...answered)
      .thenViews((views) => expect(marks(views)).toEqual([null, sinceOf(answered, taskId), null]));
  });

  it('a task that stops waiting leaves the mark of the one that began last; the last one gone, no mark', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const first = next(log, (l) => l.send('@a', '@b', { task: { state: 'Submitted' } }));
    const second = next(log, (l) => l.send('@c', '@b', { task: { state: 'Submitted' } }));
    const given = log.projected();
    const firstEnds = next(log, (l) => l.task('@a', moved('m1', 'Submitted', 'Canceled', l.nextAt)));
    ReadModelSpec.given(given)
      .when(...firstEnds)
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toMatchObject({ tasksWaiting: 1, tasksWaitingSince: sinceOf(second, 'm2') });
      });
    const given2 = log.projected();
    const secondEnds = next(log, (l) => l.task('@c', moved('m2', 'Submitted', 'Canceled', l.nextAt)));
    ReadModelSpec.given(given2)
      .when(...secondEnds)
      .thenViews((views) => expect(views.heartbeat('@b')).toMatchObject({ tasksWaiting: 0, tasksWaitingSince: null }));
    expect(sinceOf(first, 'm1').position).toBeLessThan(sinceOf(second, 'm2').position);
  });
});

describe('read model: a task as a read shows it (taskAsOf): what the sweep records once due, before it runs', () => {
  it('a lease that ran out: back with its audience, the claimant lapsed, dated at the lease end, by the sweeper', () => {
    const { log, taskId } = broadcastTask();
    const lease = '2030-01-01T00:01:00.000Z';
    const when = next(log, (l) => l.task('@b', claimedBy(taskId, '@b', l.nextAt, lease)));
    ReadModelSpec.given([])
      .when(...log.projected().slice(0, -when.length), ...when)
      .thenViews((views) => {
        const task = views.tasks.task(taskId)!;
        expect(taskAsOf(task, '2030-01-01T00:00:59.999Z', 'sweeper')).toBe(task);
        expect(taskAsOf(task, lease, 'sweeper')).toMatchObject({
          state: 'Submitted',
          assignee: null,
          claimedAt: null,
          leaseExpiresAt: null,
          lapsedClaimant: '@b',
          updatedAt: lease,
          updatedBy: 'sweeper',
        });
      });
  });

  it('a lapse the sweep records later is dated at the lease end, as the read showed it before the sweep', () => {
    const { log, taskId } = broadcastTask();
    const claimedAt = log.nextAt;
    const lease = new Date(Date.parse(claimedAt) + 500).toISOString(); // after the claim, before the sweep
    log.task('@b', claimedBy(taskId, '@b', claimedAt, lease));
    const given = log.projected();
    const sweptAt = log.nextAt;
    const swept = next(log, (l) =>
      l.task('sweeper', {
        type: 'TaskLeaseExpired',
        data: { taskId, claimant: '@b', from: 'Submitted', leaseExpiresAt: lease, expiredAt: sweptAt },
      }),
    );
    const lapsed = { state: 'Submitted', assignee: null, lapsedClaimant: '@b', updatedAt: lease, updatedBy: 'sweeper' };
    ReadModelSpec.given([])
      .when(...given)
      .thenViews((views) => expect(taskAsOf(views.tasks.task(taskId)!, sweptAt, 'sweeper')).toMatchObject(lapsed));
    ReadModelSpec.given(given)
      .when(...swept)
      .thenViews((views) => expect(views.tasks.task(taskId)).toMatchObject(lapsed));
  });

  it("an expiry the sweep records later is dated at the deadline, as the read showed it before (and the sender's mark)", () => {
    const { log, taskId } = broadcastTask();
    log.task('@b', claimedBy(taskId, '@b', log.nextAt));
    const given = log.projected();
    const deadline = new Date(Date.parse(log.nextAt) - 500).toISOString(); // after the claim, before the sweep
    const swept = next(log, (l) =>
      l.task('sweeper', {
        type: 'TaskExpired',
        data: { taskId, from: 'Submitted', to: 'Canceled', reason: 'expired', deadline, expiredAt: l.nextAt },
      }),
    );
    ReadModelSpec.given(given)
      .when(...swept)
      .thenViews((views) => {
        const task = views.tasks.task(taskId)!;
        expect(task).toMatchObject({ state: 'Canceled', updatedAt: deadline, updatedBy: 'sweeper' });
        expect(views.heartbeat('@a').tasksWaitingSince).toEqual({ position: Number(swept[0].position), at: deadline, taskId });
      });
  });
});
