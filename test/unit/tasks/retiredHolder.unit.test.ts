/**
 * A retired holder's tasks, as given/when/then specs: the retirement's look at each task it held (a broadcast task
 * goes back to its audience, anything else stays), and a claim on a task whose holder was retired (a crash between
 * the retirement and its releases) succeeding as on a lapsed lease, the release recorded first.
 */
import { foldRegistry, initialRegistryState } from '../../../src/commands/agentRegistry';
import type { Actor } from '../../../src/commands/roles';
import {
  decideClaimTask,
  decideReleaseRetiredHolder,
  type ClaimTask,
  type ReleaseRetiredHolder,
  type TaskContext,
} from '../../../src/commands/tasks/decideTask';
import type { AgentEvent, MessageEvent, TaskEvent, TaskState } from '../../../src/events/types';
import { DeciderSpecification } from '../../support/deciderSpec';
import { ADMIN_ACTOR } from '../../../src/commands/roles';
import { C, meta, registered, retired, T0, T1, T2 } from '../fixtures/domain';
import { broadcastTask, changed, claimed, directTask, foldContext, initialContext, TASK_ID } from './taskFixtures';

type Any = MessageEvent | TaskEvent | AgentEvent;
const isAgentEvent = (event: Any): event is AgentEvent => event.type.startsWith('Agent');

/** The task's history and the registry's, folded into the decider's context (the registry as the application reads it). */
const evolve = (context: TaskContext, events: readonly Any[]): TaskContext => {
  const registry = foldRegistry(
    (context.registry as ReturnType<typeof initialRegistryState> | undefined) ?? initialRegistryState(),
    events.filter(isAgentEvent),
  );
  return {
    ...foldContext(
      context,
      events.filter((e): e is MessageEvent | TaskEvent => !isAgentEvent(e)),
    ),
    registry,
  };
};
const spec = <Cmd>(decide: (command: Cmd, context: TaskContext) => ReturnType<typeof decideClaimTask>) =>
  DeciderSpecification.for<Cmd, TaskContext, Any>({
    initialState: initialContext,
    evolve,
    decide: decide as never,
  });
const releases = spec<ReleaseRetiredHolder>(decideReleaseRetiredHolder);
const claims = spec<ClaimTask>(decideClaimTask);

const release = (holder: string, at = T2): ReleaseRetiredHolder => ({
  type: 'ReleaseRetiredHolder',
  data: { taskId: TASK_ID, holder },
  metadata: meta(ADMIN_ACTOR, at, `retire:${holder}:${T1}:${TASK_ID}`),
});
const claim = (actor: Actor, at = T2): ClaimTask => ({ type: 'ClaimTask', data: { taskId: TASK_ID }, metadata: meta(actor, at) });
const released = (claimant: string, from: TaskState, at = T2): TaskEvent => ({
  type: 'TaskReleased',
  data: { taskId: TASK_ID, claimant, from, releasedAt: at },
});

const audience = ['@bob', '@carol', '@erin'];
const agents = ['@alice', ...audience].map((identity) => registered(identity));
/** @alice's broadcast to @bob, @carol and @erin, claimed by @erin. */
const claimedByErin = (): Any[] => [...agents, ...broadcastTask('@alice', audience), claimed('@erin', T0)];
const erinRetired = retired('@erin', T1);

describe('ReleaseRetiredHolder (the retirement looks at each task its agent held)', () => {
  it.each<[string, Any[], TaskState]>([
    ['Submitted', [], 'Submitted'],
    ['Working', [changed('Submitted', 'Working')], 'Working'],
    ['InputRequired', [changed('Submitted', 'Working'), changed('Working', 'InputRequired')], 'InputRequired'],
    ['AuthRequired', [changed('Submitted', 'Working'), changed('Working', 'AuthRequired')], 'AuthRequired'],
  ])('a retired holder’s broadcast task in %s goes back to its audience (TaskReleased naming the holder)', (_, moves, from) => {
    releases([...claimedByErin(), ...moves, erinRetired])
      .when(release('@erin'))
      .then([released('@erin', from)]);
  });

  it.each<[string, Any[]]>([
    ['Completed', [changed('Submitted', 'Working'), changed('Working', 'Completed')]],
    ['Failed', [changed('Submitted', 'Working'), changed('Working', 'Failed')]],
    ['Canceled', [changed('Submitted', 'Canceled')]],
    ['Rejected', [changed('Submitted', 'Rejected')]],
  ])('a finished (%s) task stays as it ended', (_, moves) => {
    releases([...claimedByErin(), ...moves, erinRetired])
      .when(release('@erin'))
      .thenNothing();
  });

  it('a direct task to the retired agent stays as it is: there is no audience to return it to', () => {
    releases([...agents, registered('@erin'), ...directTask('@alice', '@erin'), erinRetired])
      .when(release('@erin'))
      .thenNothing();
  });

  it('a task held by someone else (claimed anew since, or released already) decides nothing: a retried retirement writes nothing', () => {
    releases([...claimedByErin(), erinRetired, released('@erin', 'Submitted'), claimed('@carol', T2)])
      .when(release('@erin'))
      .thenNothing();
    releases([...claimedByErin(), erinRetired, released('@erin', 'Submitted')])
      .when(release('@erin'))
      .thenNothing();
  });

  it('a holder the registry does not show retired keeps its task', () => {
    releases(claimedByErin()).when(release('@erin')).thenNothing();
  });
});

describe('ClaimTask on a task whose holder was retired (the retirement’s releases not written, e.g. a crash between)', () => {
  it('succeeds as on a lapsed lease: the release is recorded first, then the claim', () => {
    claims([...claimedByErin(), changed('Submitted', 'Working'), erinRetired])
      .when(claim(C))
      .then([
        released('@erin', 'Working'),
        { type: 'TaskClaimed', data: { taskId: TASK_ID, claimant: '@carol', claimedAt: T2, leaseExpiresAt: null } },
      ]);
  });

  it('while the holder is registered, the claim is still refused with TASK_ALREADY_CLAIMED naming it', () => {
    const refusal = claims(claimedByErin())
      .when(claim(C))
      .thenFails('TASK_ALREADY_CLAIMED', { claimant: '@erin', claimedAt: T0 });
    expect(refusal.message).toMatch(/until they release or finish it, or until they are retired/);
  });

  it('a finished task of a retired holder is not claimable: INVALID_TRANSITION', () => {
    claims([...claimedByErin(), changed('Submitted', 'Working'), changed('Working', 'Completed'), erinRetired])
      .when(claim(C))
      .thenFails('INVALID_TRANSITION', { currentState: 'Completed', requested: 'claim' });
  });
});

describe('a retirement after the task’s deadline, before the sweeper recorded the expiry', () => {
  // The deadline (10:07) passed before the retirement's look (T2, 10:10): the task is over (every read shows it
  // Canceled, expired); the look released it to its audience as if open, for the sweep to expire it after.
  it('decides nothing: the sweeper expires it', () => {
    const expiring = broadcastTask('@alice', audience, { state: 'Submitted', expiresAt: '2025-03-01T10:07:00.000Z' });
    releases([...agents, ...expiring, claimed('@erin', T0), erinRetired])
      .when(release('@erin'))
      .thenNothing();
  });
});
