/**
 * The whole transition table (issue 12, acceptance): every state x caller x
 * target, for a claimed broadcast task and a direct one. The allowed moves
 * succeed; every other one is INVALID_TRANSITION listing exactly the caller's
 * allowed targets (TASK_NOT_FOUND for a stranger to a direct task, NOT_IN_AUDIENCE
 * for an agent outside a broadcast's audience), and writes
 * nothing (the decider returns no events).
 * The expectations are written out here, not read from the table under test.
 */
import type { Actor } from '../../../src/commands/roles';
import { decideTransitionTask, type TransitionTask } from '../../../src/commands/tasks/decideTask';
import { MailboxError } from '../../../src/errors';
import { TASK_STATES } from '../../../src/events/storedShapes';
import type { TaskState } from '../../../src/events/types';
import { A, B, C, D, meta, T1 } from '../fixtures/domain';
import { broadcastTask, changed, claimed, directTask, foldContext, initialContext, TASK_ID, type History } from './taskFixtures';

type Caller = 'assignee' | 'sender' | 'audience member' | 'outsider' | 'auditor';
const CALLERS: Record<Caller, Actor> = {
  assignee: B,
  sender: A,
  'audience member': C,
  outsider: D,
  auditor: { identity: '@audrey', role: 'auditor' },
};

/** Who may move a task from each state to where (release = back to Submitted, broadcasts only; decline, direct only). */
function expectedTargets(kind: 'broadcast' | 'direct', state: TaskState, caller: Caller): TaskState[] {
  const release: TaskState[] = kind === 'broadcast' ? ['Submitted'] : [];
  // Declining is a direct task's recipient's: the claimant of a broadcast would end it for its whole audience.
  const decline: TaskState[] = kind === 'direct' ? ['Rejected'] : [];
  const table: Partial<Record<TaskState, Partial<Record<Caller, TaskState[]>>>> = {
    Submitted: { assignee: ['Working', ...decline, ...release], sender: ['Canceled'] },
    Working: { assignee: ['InputRequired', 'AuthRequired', 'Completed', 'Failed', ...release], sender: ['Canceled'] },
    InputRequired: { sender: ['Working', 'Canceled'] },
    AuthRequired: { sender: ['Working', 'Canceled'] },
    Unknown: { sender: ['Canceled'] },
  };
  return [...(table[state]?.[caller] ?? [])].sort();
}

function historyIn(kind: 'broadcast' | 'direct', state: TaskState): History {
  // @carol is in the broadcast's audience; the direct task goes to @bob alone.
  const opened =
    kind === 'broadcast' ? [...broadcastTask('@alice', ['@bob', '@carol']), claimed('@bob')] : directTask('@alice', '@bob');
  return state === 'Submitted' ? opened : [...opened, changed('Submitted', state)];
}

const transition = (caller: Caller, to: TaskState): TransitionTask => ({
  type: 'TransitionTask',
  // Every move gets what any move may need; a release (to Submitted) records neither and refuses them (taskDecider spec).
  data: { taskId: TASK_ID, to, ...(to === 'Submitted' ? {} : { reason: 'because', note: 'a note' }) },
  metadata: meta(CALLERS[caller], T1),
});

describe.each(['broadcast', 'direct'] as const)('the transition table, %s task', (kind) => {
  // One test per state; inside it every caller x target (81 cases each; one it() per case made the file take 13 s).
  it.each([...TASK_STATES])('from %s: every caller x every target', (state) => {
    const context = foldContext(initialContext(), historyIn(kind, state));
    for (const caller of Object.keys(CALLERS) as Caller[]) {
      const allowed = expectedTargets(kind, state, caller);
      for (const to of TASK_STATES) {
        const outcome = decideTransitionTask(transition(caller, to), context);
        const label = `${state} -> ${to} by the ${caller}`;
        if (allowed.includes(to)) {
          if (outcome instanceof MailboxError) throw new Error(`expected ${label} to succeed: ${outcome.message}`);
          const change = outcome.find((e) => e.type === 'TaskStateChanged' || e.type === 'TaskReleased');
          expect({ label, change }).toMatchObject({
            label,
            change:
              to === 'Submitted'
                ? { type: 'TaskReleased', data: { from: state } }
                : { type: 'TaskStateChanged', data: { from: state, to } },
          });
        } else if (kind === 'direct' && (caller === 'audience member' || caller === 'outsider')) {
          // Neither is party to a direct task (it went to @bob alone): told it does not exist, as get_task tells them.
          expect({ label, refusal: outcome instanceof MailboxError ? outcome.envelope : outcome }).toEqual({
            label,
            refusal: expect.objectContaining({ code: 'TASK_NOT_FOUND', taskId: TASK_ID }),
          });
        } else if (kind === 'broadcast' && caller === 'outsider') {
          // Outside the broadcast's send-time audience: refused as its claim is, never told the task's state.
          expect({ label, refusal: outcome instanceof MailboxError ? outcome.envelope : outcome }).toEqual({
            label,
            refusal: { error: 'Not in the audience', code: 'NOT_IN_AUDIENCE', message: expect.any(String), taskId: TASK_ID },
          });
        } else {
          if (!(outcome instanceof MailboxError))
            throw new Error(`expected ${label} to be refused, got ${JSON.stringify(outcome)}`);
          const { code, currentState, requested, allowed: listed } = outcome.envelope;
          expect({ label, code, currentState, requested, allowed: [...(listed as TaskState[])].sort() }).toEqual({
            label,
            code: 'INVALID_TRANSITION',
            currentState: state,
            requested: to,
            allowed,
          });
        }
      }
    }
  });
});
