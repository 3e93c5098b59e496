/**
 * A retired sender's tasks, as given/when/then specs: the retirement's look at each task its agent sent (one that has
 * not ended is canceled, reason "sender retired", whoever holds it; anything else stays), and a holder asking a retired
 * sender for input or authorization (the retirement's cancels not written yet, e.g. a crash between) refused with
 * INVALID_TRANSITION saying why, its other moves allowed.
 */
import { foldRegistry, initialRegistryState } from '../../../src/commands/agentRegistry';
import { ADMIN_ACTOR, type Actor } from '../../../src/commands/roles';
import {
  decideCancelRetiredSenderTask,
  decideTransitionTask,
  type CancelRetiredSenderTask,
  type TaskContext,
  type TransitionTask,
} from '../../../src/commands/tasks/decideTask';
import type { AgentEvent, MessageEvent, TaskEvent, TaskState } from '../../../src/events/types';
import { DeciderSpecification } from '../../support/deciderSpec';
import { B, C, meta, registered, retired, T0, T1, T2 } from '../fixtures/domain';
import { broadcastTask, changed, claimed, directTask, foldContext, initialContext, TASK_ID } from './taskFixtures';

type Any = MessageEvent | TaskEvent | AgentEvent;
const isAgentEvent = (event: Any): event is AgentEvent => event.type.startsWith('Agent');

/** The task's history and the registry's, folded into the decider's context (the registry as the application reads it). */
const evolve = (context: TaskContext, events: readonly Any[]): TaskContext => ({
  ...foldContext(
    context,
    events.filter((e): e is MessageEvent | TaskEvent => !isAgentEvent(e)),
  ),
  registry: foldRegistry(
    (context.registry as ReturnType<typeof initialRegistryState> | undefined) ?? initialRegistryState(),
    events.filter(isAgentEvent),
  ),
});
const spec = <Cmd>(decide: (command: Cmd, context: TaskContext) => ReturnType<typeof decideTransitionTask>) =>
  DeciderSpecification.for<Cmd, TaskContext, Any>({ initialState: initialContext, evolve, decide: decide as never });
const cancels = spec<CancelRetiredSenderTask>(decideCancelRetiredSenderTask);
const moves = spec<TransitionTask>(decideTransitionTask);

const cancel = (sender: string, at = T2): CancelRetiredSenderTask => ({
  type: 'CancelRetiredSenderTask',
  data: { taskId: TASK_ID, sender },
  metadata: meta(ADMIN_ACTOR, at, `retire-sender:${sender}:${T1}:${TASK_ID}`),
});
const canceled = (from: TaskState, at = T2): TaskEvent => ({
  type: 'TaskStateChanged',
  data: { taskId: TASK_ID, from, to: 'Canceled', reason: 'sender retired', note: null, changedAt: at },
});
const move = (actor: Actor, to: TaskState, note?: string): TransitionTask => ({
  type: 'TransitionTask',
  data: { taskId: TASK_ID, to, ...(note === undefined ? {} : { note }) },
  metadata: meta(actor, T2),
});

const audience = ['@bob', '@carol'];
const agents = ['@alice', ...audience].map((identity) => registered(identity));
/** @alice's list-like broadcast to @bob and @carol, claimed by @bob. */
const claimedByBob = (): Any[] => [...agents, ...broadcastTask('@alice', audience), claimed('@bob', T0)];
const aliceRetired = retired('@alice', T1);
const working = changed('Submitted', 'Working');

describe('CancelRetiredSenderTask (the retirement looks at each task its agent sent)', () => {
  it.each<[string, Any[], TaskState]>([
    ['Submitted', [], 'Submitted'],
    ['Working', [working], 'Working'],
    ['InputRequired', [working, changed('Working', 'InputRequired')], 'InputRequired'],
    ['AuthRequired', [working, changed('Working', 'AuthRequired')], 'AuthRequired'],
  ])('a retired sender’s held task in %s is canceled (reason "sender retired")', (_, history, from) => {
    cancels([...claimedByBob(), ...history, aliceRetired])
      .when(cancel('@alice'))
      .then([canceled(from)]);
  });

  it('an unclaimed task, a direct task and a task sent as Unknown are canceled alike', () => {
    cancels([...agents, ...broadcastTask('@alice', audience), aliceRetired])
      .when(cancel('@alice'))
      .then([canceled('Submitted')]);
    cancels([...agents, ...directTask('@alice', '@carol'), working, aliceRetired])
      .when(cancel('@alice'))
      .then([canceled('Working')]);
    cancels([...agents, ...directTask('@alice', '@carol', { state: 'Unknown' }), aliceRetired])
      .when(cancel('@alice'))
      .then([canceled('Unknown')]);
  });

  it.each<[string, Any[]]>([
    ['Completed', [working, changed('Working', 'Completed')]],
    ['Failed', [working, changed('Working', 'Failed')]],
    ['Canceled', [changed('Submitted', 'Canceled')]],
    ['Rejected', [changed('Submitted', 'Rejected')]],
  ])('a finished (%s) task stays as it ended', (_, history) => {
    cancels([...claimedByBob(), ...history, aliceRetired])
      .when(cancel('@alice'))
      .thenNothing();
  });

  it('a canceled task decides nothing: a retried retirement writes nothing', () => {
    cancels([...claimedByBob(), aliceRetired, canceled('Submitted')])
      .when(cancel('@alice'))
      .thenNothing();
  });

  it('a sender the registry does not show retired keeps its task; another sender’s task is not its to cancel', () => {
    cancels(claimedByBob()).when(cancel('@alice')).thenNothing();
    cancels([...claimedByBob(), retired('@bob', T1)])
      .when(cancel('@bob'))
      .thenNothing();
  });
});

describe('TransitionTask asking a retired sender (its retirement’s cancels not written yet)', () => {
  it.each<[TaskState]>([['InputRequired'], ['AuthRequired']])(
    'to %s is INVALID_TRANSITION saying the sender was retired, the holder’s other moves allowed',
    (to) => {
      const refusal = moves([...claimedByBob(), working, aliceRetired])
        .when(move(B, to, 'which branch?'))
        .thenFails('INVALID_TRANSITION', {
          currentState: 'Working',
          requested: to,
          allowed: ['Completed', 'Failed', 'Submitted'],
          sender: '@alice',
        });
      expect(refusal.message).toMatch(/its sender @alice was retired, so no answer can ever come/);
    },
  );

  it('another move is refused as before, its allowed moves without the questions', () => {
    moves([...claimedByBob(), working, aliceRetired])
      .when(move(B, 'Rejected'))
      .thenFails('INVALID_TRANSITION', {
        currentState: 'Working',
        requested: 'Rejected',
        allowed: ['Completed', 'Failed', 'Submitted'],
      });
  });

  it('the holder still finishes the work: Completed is written', () => {
    moves([...claimedByBob(), working, aliceRetired])
      .when(move(B, 'Completed'))
      .then([
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Working', to: 'Completed', reason: null, note: null, changedAt: T2 },
        },
      ]);
  });

  it('while the sender is registered, the holder asks it as before', () => {
    moves([...claimedByBob(), working])
      .when(move(B, 'InputRequired', 'which branch?'))
      .then([
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Working', to: 'InputRequired', reason: null, note: 'which branch?', changedAt: T2 },
        },
      ]);
  });

  it('an audience member is refused as before (only the holder asks)', () => {
    moves([...claimedByBob(), working, aliceRetired])
      .when(move(C, 'InputRequired', 'x'))
      .thenFails('INVALID_TRANSITION', { currentState: 'Working', allowed: [] });
  });
});

describe('a retirement after the task’s deadline, before the sweeper recorded the expiry', () => {
  // The deadline (10:07) passed before the retirement's look (T2, 10:10): the task is over, expired (every read shows
  // it so); the look canceled it "sender retired" instead, ending it a second way.
  it('decides nothing: the sweeper expires it', () => {
    const expiring = broadcastTask('@alice', audience, { state: 'Submitted', budget: { deadline: '2025-03-01T10:07:00.000Z' } });
    cancels([...agents, ...expiring, claimed('@bob', T0), aliceRetired])
      .when(cancel('@alice'))
      .thenNothing();
  });
});
