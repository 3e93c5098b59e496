/**
 * The sweeper's rule (src/events/taskTimes.ts), given/when/then: given a task as it stands, when the clock reads a
 * time, then what falls due (fallenDue) and when it first does (nextDueAt). The decider (decideSweepTask), the read
 * model (taskAsOf, dueAt: the views' due index) and the sweeper's command id all apply this one rule.
 */
import {
  fallenDue,
  isTerminalState,
  nextDueAt,
  TERMINAL_TASK_STATES,
  waitsOnHolderState,
  type TaskFallenDue,
  type TaskTimes,
} from '../../../src/events/taskTimes';
import { TASK_STATES } from '../../../src/events/taskShapes';
import type { TaskState } from '../../../src/events/types';

const T = (seconds: number) => new Date(Date.UTC(2030, 0, 1, 12, 0, seconds)).toISOString();
const ms = (seconds: number) => Date.parse(T(seconds));

/** A broadcast task claimed by @b: open to its audience, Working, no lease, no deadline. */
const held: TaskTimes = { state: 'Working', openToAudience: true, assignee: '@b', leaseExpiresAt: null, deadline: null };

function given(task: Partial<TaskTimes>) {
  const times: TaskTimes = { ...held, ...task };
  return {
    /** What falls due at `seconds`, and that nextDueAt agrees: nothing is due before it, something is at it. */
    at: (seconds: number) => ({
      thenDue(expected: TaskFallenDue | null) {
        expect(fallenDue(times, ms(seconds))).toEqual(expected);
        const first = nextDueAt(times);
        if (expected === null) expect(first === null || first > ms(seconds)).toBe(true);
        else {
          expect(first).not.toBeNull();
          expect(first!).toBeLessThanOrEqual(ms(seconds));
          expect(fallenDue(times, first! - 1)).toBeNull();
          expect(fallenDue(times, first!)).not.toBeNull();
        }
      },
    }),
    thenFirstDueAt(seconds: number | null) {
      expect(nextDueAt(times)).toBe(seconds === null ? null : ms(seconds));
    },
  };
}

describe('task times: which states are final, which wait on the holder', () => {
  it('Completed, Canceled, Failed and Rejected are terminal; Submitted and Working wait on the holder; the rest neither', () => {
    expect(TASK_STATES.filter(isTerminalState)).toEqual(['Completed', 'Canceled', 'Failed', 'Rejected']);
    expect([...TERMINAL_TASK_STATES]).toEqual(['Completed', 'Canceled', 'Failed', 'Rejected']);
    expect(TASK_STATES.filter(waitsOnHolderState)).toEqual(['Submitted', 'Working']);
  });
});

describe('task times: what falls due for the sweeper, and when', () => {
  it('given a deadline: nothing before it; at it, the deadline', () => {
    given({ deadline: T(60) })
      .at(59)
      .thenDue(null);
    given({ deadline: T(60) })
      .at(60)
      .thenDue({ kind: 'deadline', at: T(60) });
    given({ deadline: T(60) }).thenFirstDueAt(60);
  });

  it("given a holder's running lease: nothing before it; at it, the lease lapses, naming the holder", () => {
    given({ leaseExpiresAt: T(30) })
      .at(29)
      .thenDue(null);
    given({ leaseExpiresAt: T(30) })
      .at(30)
      .thenDue({ kind: 'lease', at: T(30), claimant: '@b' });
    given({ leaseExpiresAt: T(30), state: 'Submitted' })
      .at(31)
      .thenDue({ kind: 'lease', at: T(30), claimant: '@b' });
    given({ leaseExpiresAt: T(30) }).thenFirstDueAt(30);
  });

  it('given both, past both: the deadline first, even when the lease ran out earlier', () => {
    given({ leaseExpiresAt: T(30), deadline: T(60) })
      .at(45)
      .thenDue({ kind: 'lease', at: T(30), claimant: '@b' });
    given({ leaseExpiresAt: T(30), deadline: T(60) })
      .at(60)
      .thenDue({ kind: 'deadline', at: T(60) });
    given({ leaseExpiresAt: T(30), deadline: T(60) }).thenFirstDueAt(30);
    given({ leaseExpiresAt: T(90), deadline: T(60) }).thenFirstDueAt(60);
  });

  it.each(['InputRequired', 'AuthRequired', 'Unknown'] as TaskState[])(
    'given a task that does not wait on its holder (%s): its lease is paused and never lapses; its deadline still falls',
    (state) => {
      given({ state, leaseExpiresAt: T(30) })
        .at(3600)
        .thenDue(null);
      given({ state, leaseExpiresAt: T(30) }).thenFirstDueAt(null);
      given({ state, leaseExpiresAt: T(30), deadline: T(60) })
        .at(60)
        .thenDue({ kind: 'deadline', at: T(60) });
    },
  );

  it('given a direct task (its recipient holds it from the send): a lease never lapses it back to an audience', () => {
    given({ openToAudience: false, leaseExpiresAt: T(30) })
      .at(3600)
      .thenDue(null);
    given({ openToAudience: false, leaseExpiresAt: T(30) }).thenFirstDueAt(null);
    given({ openToAudience: false, deadline: T(60) })
      .at(60)
      .thenDue({ kind: 'deadline', at: T(60) });
  });

  it('given no holder (released, lapsed): no lease falls due', () => {
    given({ state: 'Submitted', assignee: null, leaseExpiresAt: T(30) })
      .at(3600)
      .thenDue(null);
    given({ state: 'Submitted', assignee: null }).thenFirstDueAt(null);
  });

  it.each([...TERMINAL_TASK_STATES])('given a finished task (%s): nothing falls due, past any deadline or lease', (state) => {
    given({ state, leaseExpiresAt: T(30), deadline: T(60) })
      .at(3600)
      .thenDue(null);
    given({ state, leaseExpiresAt: T(30), deadline: T(60) }).thenFirstDueAt(null);
  });

  it('given a time with an offset: compared as an instant', () => {
    const deadline = '2030-01-01T13:00:00.000+01:00'; // T(0)
    given({ deadline }).at(0).thenDue({ kind: 'deadline', at: deadline });
    given({ deadline }).thenFirstDueAt(0);
  });
});
