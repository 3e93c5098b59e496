/** The task decider's claims, leases, requirements and the sweeper's decisions, as given/when/then specs. */
import type { Actor } from '../../../src/commands/roles';
import {
  decideClaimTask,
  decideSeeTaskOutcome,
  decideSweepTask,
  decideTransitionTask,
  type ClaimTask,
  type SeeTaskOutcome,
  type SweepTask,
  type TaskContext,
  type TransitionTask,
} from '../../../src/commands/tasks/decideTask';
import type { MessageEvent, TaskEvent, TaskState } from '../../../src/events/types';
import { DeciderSpecification } from '../../support/deciderSpec';
import { A, B, C, D, directSent, meta, T0, T1, T2 } from '../fixtures/domain';
import { broadcastTask, changed, claimed, directTask, foldContext, initialContext, TASK_ID } from './taskFixtures';

type Any = MessageEvent | TaskEvent;
const spec = <C>(decide: (command: C, context: TaskContext) => TaskEvent[] | ReturnType<typeof decideClaimTask>) =>
  DeciderSpecification.for<C, TaskContext, Any>({ initialState: initialContext, evolve: foldContext, decide: decide as never });
const claims = spec<ClaimTask>(decideClaimTask);
const transitions = spec<TransitionTask>(decideTransitionTask);
const sweeps = spec<SweepTask>(decideSweepTask);

const claim = (actor: Actor, at = T1, leaseSeconds?: number): ClaimTask => ({
  type: 'ClaimTask',
  data: { taskId: TASK_ID, ...(leaseSeconds === undefined ? {} : { leaseSeconds }) },
  metadata: meta(actor, at),
});
const move = (actor: Actor, to: TaskState, extra: Partial<TransitionTask['data']> = {}, at = T1): TransitionTask => ({
  type: 'TransitionTask',
  data: { taskId: TASK_ID, to, ...extra },
  metadata: meta(actor, at),
});
const sweep = (at: string): SweepTask => ({
  type: 'SweepTask',
  data: { taskId: TASK_ID },
  metadata: meta({ identity: '@sweeper', role: 'admin' }, at),
});
const plus = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();

const audience = ['@bob', '@carol'];
/** A task sent to a list of recipients (one message, its audience the list), as a broadcast's is to every agent. */
const listTask = (from: string, to: string[]) => [
  directSent(from, to as never, { recipients: to, task: { state: 'Submitted' }, hasTask: true }),
];

describe('ClaimTask', () => {
  it('the first audience member to claim a broadcast task gets it', () => {
    claims(broadcastTask('@alice', audience))
      .when(claim(B))
      .then([{ type: 'TaskClaimed', data: { taskId: TASK_ID, claimant: '@bob', claimedAt: T1, leaseExpiresAt: null } }]);
  });

  it('a later claim is TASK_ALREADY_CLAIMED, naming the claimant and when', () => {
    claims([...broadcastTask('@alice', audience), claimed('@bob', T0)])
      .when(claim(C))
      .thenFails('TASK_ALREADY_CLAIMED', { taskId: TASK_ID, claimant: '@bob', claimedAt: T0 });
  });

  it('an agent outside the send-time audience (e.g. registered later) is NOT_IN_AUDIENCE', () => {
    claims(broadcastTask('@alice', audience)).when(claim(D)).thenFails('NOT_IN_AUDIENCE', { taskId: TASK_ID });
  });

  it('the recipient of a direct task holds it already: claiming changes nothing', () => {
    claims(directTask('@alice', '@bob')).when(claim(B)).thenNothing();
  });

  // A claim of a finished direct task answered 200 with no events, as if it meant something; a finished broadcast
  // task was refused. Refused alike now, with nothing written.
  it.each(['Completed', 'Failed', 'Canceled', 'Rejected'] as const)(
    'a finished (%s) direct task cannot be claimed: INVALID_TRANSITION',
    (ended) => {
      claims([...directTask('@alice', '@bob'), changed('Submitted', 'Working'), changed('Working', ended)])
        .when(claim(B))
        .thenFails('INVALID_TRANSITION', { currentState: ended, requested: 'claim', allowed: [] });
    },
  );

  // A stranger's claim answered 403 NOT_IN_AUDIENCE naming the recipient ('sent directly to @bob, who holds it'), or
  // for a list 'not in the audience', where get_task answers 404: an oracle of a private task and its recipient.
  it('a stranger to a direct or list task is told it does not exist (TASK_NOT_FOUND), as get_task tells it', () => {
    claims(directTask('@alice', '@bob')).when(claim(C)).thenFails('TASK_NOT_FOUND', { taskId: TASK_ID });
    claims(listTask('@alice', audience)).when(claim(D)).thenFails('TASK_NOT_FOUND', { taskId: TASK_ID });
  });

  it('a claim with leaseSeconds records when the lease ends', () => {
    claims(broadcastTask('@alice', audience))
      .when(claim(B, T1, 60))
      .then([{ type: 'TaskClaimed', data: { taskId: TASK_ID, claimant: '@bob', claimedAt: T1, leaseExpiresAt: plus(T1, 60) } }]);
  });

  it('the claimant claiming again renews its lease from now (the explicit renew)', () => {
    claims([...broadcastTask('@alice', audience), claimed('@bob', T0, plus(T0, 600))])
      .when(claim(B, T1))
      .then([
        { type: 'TaskLeaseRenewed', data: { taskId: TASK_ID, claimant: '@bob', leaseExpiresAt: plus(T1, 600), renewedAt: T1 } },
      ]);
  });

  // leaseSeconds was accepted and ignored (events: [], leaseExpiresAt: null) on a direct task, by a holder without a
  // lease, and while the task waited on its sender; and a new length given by claiming again held for one renewal only.
  it('leaseSeconds on a direct task is refused, not ignored: a direct task has no audience to go back to', () => {
    const error = claims(directTask('@alice', '@bob'))
      .when(claim(B, T1, 60))
      .thenFails('VALIDATION_FAILED', { field: 'leaseSeconds', taskId: TASK_ID });
    expect(error.message).toMatch(/sent directly to @bob/);
  });

  it('the claimant holding it without a lease claims again with leaseSeconds: the lease starts now, and updates renew it', () => {
    const held = [...broadcastTask('@alice', audience), claimed('@bob', T0)];
    const started: TaskEvent = {
      type: 'TaskLeaseRenewed',
      data: { taskId: TASK_ID, claimant: '@bob', leaseExpiresAt: plus(T1, 600), renewedAt: T1 },
    };
    claims(held)
      .when(claim(B, T1, 600))
      .then([started]);
    transitions([...held, started])
      .when(move(B, 'Working', {}, T2))
      .then([
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Submitted', to: 'Working', reason: null, note: null, changedAt: T2 },
        },
        { type: 'TaskLeaseRenewed', data: { taskId: TASK_ID, claimant: '@bob', leaseExpiresAt: plus(T2, 600), renewedAt: T2 } },
      ]);
  });

  it('claiming again with a new leaseSeconds: later updates renew it by the new length', () => {
    const renewed: TaskEvent = {
      type: 'TaskLeaseRenewed',
      data: { taskId: TASK_ID, claimant: '@bob', leaseExpiresAt: plus(T1, 3600), renewedAt: T1 },
    };
    transitions([...broadcastTask('@alice', audience), claimed('@bob', T0, plus(T0, 900)), renewed])
      .when(move(B, 'Working', {}, T2))
      .then([
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Submitted', to: 'Working', reason: null, note: null, changedAt: T2 },
        },
        { type: 'TaskLeaseRenewed', data: { taskId: TASK_ID, claimant: '@bob', leaseExpiresAt: plus(T2, 3600), renewedAt: T2 } },
      ]);
  });

  it('leaseSeconds while the task waits on its sender is refused (no lease runs then); a plain claim changes nothing', () => {
    const asking = [
      ...broadcastTask('@alice', audience),
      claimed('@bob', T0, plus(T0, 900)),
      changed('Submitted', 'Working'),
      changed('Working', 'InputRequired'),
    ];
    const error = claims(asking)
      .when(claim(B, T1, 60))
      .thenFails('VALIDATION_FAILED', { field: 'leaseSeconds', taskId: TASK_ID, state: 'InputRequired' });
    expect(error.message).toMatch(/waits on its sender/);
    claims(asking).when(claim(B, T1)).thenNothing();
  });

  it('once the lease lapsed, the next claim wins, recording the lapse first', () => {
    const lease = plus(T0, 60);
    claims([...broadcastTask('@alice', audience), claimed('@bob', T0, lease)])
      .when(claim(C, T2))
      .then([
        {
          type: 'TaskLeaseExpired',
          data: { taskId: TASK_ID, claimant: '@bob', from: 'Submitted', leaseExpiresAt: lease, expiredAt: T2 },
        },
        { type: 'TaskClaimed', data: { taskId: TASK_ID, claimant: '@carol', claimedAt: T2, leaseExpiresAt: null } },
      ]);
  });

  it('the sender claiming its own broadcast task is told what it may do instead (cancel it), never "no transition"', () => {
    claims(broadcastTask('@alice', audience))
      .when(claim(A))
      .thenFails('INVALID_TRANSITION', { currentState: 'Submitted', requested: 'claim', allowed: ['Canceled'] });
  });

  it('a finished task cannot be claimed: INVALID_TRANSITION', () => {
    claims([...broadcastTask('@alice', audience), changed('Submitted', 'Canceled')])
      .when(claim(B))
      .thenFails('INVALID_TRANSITION', { currentState: 'Canceled', requested: 'claim' });
  });

  it('a message without a task is TASK_NOT_FOUND', () => {
    claims(directTask('@alice', '@bob').map((e) => ({ ...e, data: { ...e.data, task: null } })) as Any[])
      .when(claim(B))
      .thenFails('TASK_NOT_FOUND');
  });
});

describe('TransitionTask', () => {
  const working = [...broadcastTask('@alice', audience), claimed('@bob'), changed('Submitted', 'Working')];

  // A stranger's update answered 409 INVALID_TRANSITION with the task's currentState, where get_task answers 404.
  it("a stranger to a direct or list task is told it does not exist (TASK_NOT_FOUND), not the task's state", () => {
    transitions(directTask('@alice', '@bob')).when(move(C, 'Working')).thenFails('TASK_NOT_FOUND', { taskId: TASK_ID });
    transitions(listTask('@alice', audience))
      .when(move(D, 'Canceled', { reason: 'x' }))
      .thenFails('TASK_NOT_FOUND', { taskId: TASK_ID });
  });

  // Its update answered 409 INVALID_TRANSITION with the task's currentState, where get_task answers 404.
  it('an agent registered after a literal broadcast is NOT_IN_AUDIENCE, for a claim and an update alike', () => {
    claims(broadcastTask('@alice', audience)).when(claim(D)).thenFails('NOT_IN_AUDIENCE');
    const refused = transitions(working).when(move(D, 'Completed')).thenFails('NOT_IN_AUDIENCE', { taskId: TASK_ID });
    expect(refused.envelope).not.toHaveProperty('currentState');
  });

  it('Failed needs a reason, InputRequired a note: VALIDATION_FAILED, nothing written', () => {
    transitions(working).when(move(B, 'Failed')).thenFails('VALIDATION_FAILED', { field: 'reason' });
    transitions(working).when(move(B, 'InputRequired')).thenFails('VALIDATION_FAILED', { field: 'note' });
  });

  it('Completed carries its artifacts (A2A parts), each with an id', () => {
    transitions(working)
      .when(move(B, 'Completed', { artifacts: [{ name: 'review', parts: [{ kind: 'text', text: 'LGTM' }] }] }))
      .then([
        {
          type: 'TaskArtifactAdded',
          data: {
            taskId: TASK_ID,
            artifact: { artifactId: `${TASK_ID}-artifact-1`, name: 'review', parts: [{ kind: 'text', text: 'LGTM' }] },
            addedAt: T1,
          },
        },
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Working', to: 'Completed', reason: null, note: null, changedAt: T1 },
        },
      ]);
  });

  it('artifacts on any other transition are refused, not dropped', () => {
    transitions(working)
      .when(move(B, 'Failed', { reason: 'x', artifacts: [{ parts: [] }] }))
      .thenFails('VALIDATION_FAILED', { field: 'artifacts' });
  });

  it('an update by a leased assignee renews the lease', () => {
    const leased = [...broadcastTask('@alice', audience), claimed('@bob', T0, plus(T0, 900))];
    transitions(leased)
      .when(move(B, 'Working'))
      .then([
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Submitted', to: 'Working', reason: null, note: null, changedAt: T1 },
        },
        { type: 'TaskLeaseRenewed', data: { taskId: TASK_ID, claimant: '@bob', leaseExpiresAt: plus(T1, 900), renewedAt: T1 } },
      ]);
  });

  // A release's note or reason was accepted and dropped: TaskReleased records neither, so no one ever read it.
  it('a release (to Submitted) takes no note or reason: refused, not dropped', () => {
    const error = transitions(working)
      .when(move(B, 'Submitted', { note: 'not mine' }))
      .thenFails('VALIDATION_FAILED', { field: 'note', to: 'Submitted' });
    expect(error.message).toMatch(/send the sender a message/);
    transitions(working)
      .when(move(B, 'Submitted', { reason: 'busy' }))
      .thenFails('VALIDATION_FAILED', { field: 'reason', to: 'Submitted' });
  });

  it("the claimant's update after its lease lapsed is refused with LEASE_EXPIRED (before and after the sweep)", () => {
    const lease = plus(T0, 60);
    const leased = [...broadcastTask('@alice', audience), claimed('@bob', T0, lease)];
    transitions(leased)
      .when(move(B, 'Working', {}, T2))
      .thenFails('LEASE_EXPIRED', { leaseExpiresAt: lease });
    const swept: TaskEvent = {
      type: 'TaskLeaseExpired',
      data: { taskId: TASK_ID, claimant: '@bob', from: 'Submitted', leaseExpiresAt: lease, expiredAt: T2 },
    };
    transitions([...leased, swept])
      .when(move(B, 'Working', {}, T2))
      .thenFails('LEASE_EXPIRED', { leaseExpiresAt: lease, assignee: null });
  });

  it('a lapse stands until its claimant claims the task again: after its own later release it is told to claim, not LEASE_EXPIRED', () => {
    const lease = plus(T0, 60);
    const swept: TaskEvent = {
      type: 'TaskLeaseExpired',
      data: { taskId: TASK_ID, claimant: '@bob', from: 'Submitted', leaseExpiresAt: lease, expiredAt: T2 },
    };
    const released: TaskEvent = {
      type: 'TaskReleased',
      data: { taskId: TASK_ID, claimant: '@bob', from: 'Submitted', releasedAt: T2 },
    };
    const history = [...broadcastTask('@alice', audience), claimed('@bob', T0, lease), swept, claimed('@bob', T2), released];
    const error = transitions(history)
      .when(move(B, 'Working', {}, T2))
      .thenFails('INVALID_TRANSITION', { allowed: [] });
    expect(error.message).toMatch(/Claim it first/);
  });

  it('an audience member who has not claimed is told to claim first', () => {
    const error = transitions(broadcastTask('@alice', audience))
      .when(move(C, 'Working'))
      .thenFails('INVALID_TRANSITION', { allowed: [] });
    expect(error.message).toMatch(/Claim it first/);
  });

  // Found as a model: update_task offers Submitted "to give back a task you claimed"; the holder of a direct task was
  // told only its other moves, not that a direct task has no audience to go back to, nor how to give it up.
  it('the holder of a direct task giving it back (to Submitted) is told it cannot be released and how to give it up', () => {
    const working = [...directTask('@alice', '@bob'), changed('Submitted', 'Working')];
    const fromWorking = transitions(working)
      .when(move(B, 'Submitted'))
      .thenFails('INVALID_TRANSITION', { allowed: ['InputRequired', 'AuthRequired', 'Completed', 'Failed'] });
    expect(fromWorking.message).toContain(
      'It was sent to @bob alone, so it has no audience to go back to and cannot be released (a move to Submitted ' +
        'gives back an AGENT:* or list task); to give it up, fail it (Failed, with a reason), and its sender @alice ' +
        'may send the work to someone else.',
    );
    const fromSubmitted = transitions(directTask('@alice', '@bob')).when(move(B, 'Submitted')).thenFails('INVALID_TRANSITION');
    expect(fromSubmitted.message).toContain('to give it up, decline it (Rejected, with a reason)');
    // A claimed list task is released as before.
    transitions([...listTask('@alice', audience), claimed('@bob')])
      .when(move(B, 'Submitted'))
      .then([expect.objectContaining({ type: 'TaskReleased' })] as never);
  });

  // Found by an earlier session: the claimant of an AGENT:* or list task declined it (Rejected), and the task ended for
  // its whole audience, one member speaking for all. It is refused, naming the release (and, once Working, the fail).
  it('the claimant of an AGENT:* or list task cannot decline it for all: told to release it (or fail it once Working)', () => {
    for (const opened of [broadcastTask('@alice', audience), listTask('@alice', audience)]) {
      const submitted = transitions([...opened, claimed('@bob')])
        .when(move(B, 'Rejected', { reason: 'not mine' }))
        .thenFails('INVALID_TRANSITION', { currentState: 'Submitted', requested: 'Rejected', allowed: ['Working', 'Submitted'] });
      expect(submitted.message).toContain(
        `@bob claimed it from its audience of ${audience.length}, and a decline would end it for all of them: only the ` +
          'recipient of a task sent to it alone declines. To give it up, release it to the audience (a move to ' +
          "Submitted), so another member may claim it; to tell its sender @alice why, send a message in the task's thread.",
      );
      const working = transitions([...opened, claimed('@bob'), changed('Submitted', 'Working')])
        .when(move(B, 'Rejected', { reason: 'not mine' }))
        .thenFails('INVALID_TRANSITION', {
          allowed: ['InputRequired', 'AuthRequired', 'Completed', 'Failed', 'Submitted'],
        });
      expect(working.message).toContain(
        'so another member may claim it; or, if the work cannot be done by anyone, fail it (Failed, with a reason);',
      );
    }
    // The recipient of a direct task still declines.
    transitions(directTask('@alice', '@bob'))
      .when(move(B, 'Rejected', { reason: 'not mine' }))
      .then([expect.objectContaining({ type: 'TaskStateChanged', data: expect.objectContaining({ to: 'Rejected' }) })] as never);
  });

  it('the sender answering an InputRequired moves it back to Working', () => {
    transitions([...working, changed('Working', 'InputRequired')])
      .when(move(A, 'Working', { note: 'use the staging db' }))
      .then([
        {
          type: 'TaskStateChanged',
          data: {
            taskId: TASK_ID,
            from: 'InputRequired',
            to: 'Working',
            reason: null,
            note: 'use the staging db',
            changedAt: T1,
          },
        },
      ]);
  });
});

describe('SweepTask', () => {
  const deadline = '2025-03-01T10:07:00.000Z';
  const expiring = broadcastTask('@alice', audience, {
    state: 'Submitted',
    expiresAt: '2025-03-01T12:00:00.000Z',
    budget: { deadline },
  });

  it('a task past the earlier of expiresAt and budget.deadline ends as Canceled with reason "expired"', () => {
    sweeps([...expiring, claimed('@bob')])
      .when(sweep(T2))
      .then([
        {
          type: 'TaskExpired',
          data: { taskId: TASK_ID, from: 'Submitted', to: 'Canceled', reason: 'expired', deadline, expiredAt: T2 },
        },
      ]);
  });

  it('before its deadline, or once expired (a second sweeper), nothing', () => {
    sweeps(expiring).when(sweep(T1)).thenNothing();
    const expired: TaskEvent = {
      type: 'TaskExpired',
      data: { taskId: TASK_ID, from: 'Submitted', to: 'Canceled', reason: 'expired', deadline, expiredAt: T2 },
    };
    sweeps([...expiring, expired])
      .when(sweep(T2))
      .thenNothing();
  });

  it('a lapsed lease goes back to the audience; a running one stays', () => {
    const lease = plus(T0, 60);
    const leased = [...broadcastTask('@alice', audience), claimed('@bob', T0, lease)];
    sweeps(leased).when(sweep(T0)).thenNothing();
    sweeps(leased)
      .when(sweep(T1))
      .then([
        {
          type: 'TaskLeaseExpired',
          data: { taskId: TASK_ID, claimant: '@bob', from: 'Submitted', leaseExpiresAt: lease, expiredAt: T1 },
        },
      ]);
  });

  it('a lease does not run while the task waits on the sender (InputRequired)', () => {
    const leased = [
      ...broadcastTask('@alice', audience),
      claimed('@bob', T0, plus(T0, 60)),
      changed('Submitted', 'Working'),
      changed('Working', 'InputRequired'),
    ];
    sweeps(leased).when(sweep(T2)).thenNothing();
  });
});

describe('a claim or a move past the deadline, before the sweeper records the expiry', () => {
  // The deadline is 10:07 (T2 is 10:10): a read at T2 shows the task Canceled, expired; a claim took it (TaskClaimed
  // after the deadline, then the sweep's TaskExpired), a holder completed it and the sender canceled it as if open.
  const deadline = '2025-03-01T10:07:00.000Z';
  const refusal = (requested: string) => ({
    currentState: 'Canceled',
    requested,
    allowed: [],
    endedBy: null,
    endedAt: deadline,
  });
  const broadcast = broadcastTask('@alice', audience, { state: 'Submitted', budget: { deadline } });
  const direct = directTask('@alice', '@bob', { state: 'Submitted', expiresAt: deadline });

  it('a claim of an AGENT:* or list task is INVALID_TRANSITION: it is Canceled (expired), nothing written', () => {
    claims(broadcast).when(claim(C, T2)).thenFails('INVALID_TRANSITION', refusal('claim'));
    const list = directSent('@alice', audience as never, {
      recipients: audience,
      task: { state: 'Submitted', expiresAt: deadline },
      hasTask: true,
    });
    claims([list]).when(claim(B, T2)).thenFails('INVALID_TRANSITION', refusal('claim'));
    // A lapsed lease as well as the deadline: the deadline wins (the sweeper expires it), never a claim over the lapse.
    claims([...broadcast, claimed('@bob', T0, plus(T0, 60))])
      .when(claim(C, T2))
      .thenFails('INVALID_TRANSITION', refusal('claim'));
  });

  it("a claim of a direct task by its recipient, the holder's move and the sender's cancel are refused alike", () => {
    claims(direct).when(claim(B, T2)).thenFails('INVALID_TRANSITION', refusal('claim'));
    const working = [...broadcast, claimed('@bob'), changed('Submitted', 'Working')];
    transitions(working)
      .when(move(B, 'Completed', {}, T2))
      .thenFails('INVALID_TRANSITION', refusal('Completed'));
    transitions(working)
      .when(move(A, 'Canceled', {}, T2))
      .thenFails('INVALID_TRANSITION', refusal('Canceled'));
    transitions([...direct, changed('Submitted', 'Working')])
      .when(move(B, 'Failed', { reason: 'too late' }, T2))
      .thenFails('INVALID_TRANSITION', refusal('Failed'));
  });

  it('the refusal says the deadline passed, and that nothing was changed', () => {
    const error = decideClaimTask(claim(C, T2), foldContext(initialContext(), broadcast) as TaskContext);
    expect(error).toMatchObject({
      message: expect.stringContaining(`its deadline ${deadline} had passed`),
    });
    expect((error as Error).message).toContain('nothing was changed');
  });

  it('before the deadline, the same claim and moves are made', () => {
    claims(broadcast)
      .when(claim(C, T1))
      .then([{ type: 'TaskClaimed', data: { taskId: TASK_ID, claimant: '@carol', claimedAt: T1, leaseExpiresAt: null } }]);
    transitions([...direct, changed('Submitted', 'Working')])
      .when(move(B, 'Completed', {}, T1))
      .then([
        {
          type: 'TaskStateChanged',
          data: { taskId: TASK_ID, from: 'Working', to: 'Completed', reason: null, note: null, changedAt: T1 },
        },
      ]);
  });
});

describe('SeeTaskOutcome (the sender got a task that ended without it)', () => {
  const sees = spec<SeeTaskOutcome>(decideSeeTaskOutcome);
  const see = (actor: Actor, at = T2): SeeTaskOutcome => ({
    type: 'SeeTaskOutcome',
    data: { taskId: TASK_ID },
    metadata: meta(actor, at),
  });
  const held = [...broadcastTask('@alice', audience), claimed('@bob'), changed('Submitted', 'Working')];
  const seen = (state: TaskState): TaskEvent => ({
    type: 'TaskOutcomeSeen',
    data: { taskId: TASK_ID, sender: '@alice', state, seenAt: T2 },
  });
  const expired: TaskEvent = {
    type: 'TaskExpired',
    data: { taskId: TASK_ID, from: 'Working', to: 'Canceled', reason: 'expired', deadline: T1, expiredAt: T1 },
  };

  it.each<[string, TaskEvent, TaskState]>([
    ['completed by the assignee', changed('Working', 'Completed'), 'Completed'],
    ['failed by the assignee', changed('Working', 'Failed'), 'Failed'],
    ['expired by the sweeper', expired, 'Canceled'],
  ])('%s: the sender sees the outcome, once', (_, ending, state) => {
    sees([...held, ending])
      .when(see(A))
      .then([seen(state)]);
    sees([...held, ending, seen(state)])
      .when(see(A))
      .thenNothing();
  });

  it('a task rejected by its assignee is seen by the sender too', () => {
    sees([...broadcastTask('@alice', audience), claimed('@bob'), changed('Submitted', 'Rejected')])
      .when(see(A))
      .then([seen('Rejected')]);
  });

  it("nothing for the sender's own cancel, an open task, the assignee, an audience member or an auditor", () => {
    sees([...held, changed('Working', 'Canceled')])
      .when(see(A))
      .thenNothing();
    sees(held).when(see(A)).thenNothing();
    const done = [...held, changed('Working', 'Completed')];
    for (const reader of [B, C, { identity: '@audit', role: 'auditor' } as Actor]) sees(done).when(see(reader)).thenNothing();
  });

  it('a task the sender sent itself and completed itself waits on nobody: nothing to see', () => {
    sees([...directTask('@alice', '@alice'), changed('Submitted', 'Working'), changed('Working', 'Completed')])
      .when(see(A))
      .thenNothing();
  });
});
