/**
 * Acceptance (issue 12), in process, on every event store: the claim storm
 * (50 audience members, one winner), NOT_IN_AUDIENCE for a later agent, the
 * lifecycle with the views and wakes it makes, and rejections that write
 * nothing. Three identities where it matters: @alice sends, @bob and @carol are
 * the audience.
 */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import type { TaskWakeEvent, WakeEvent } from '../../src/projections/viewChanges';
import { registerAgents } from '../support/fixtures';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, rejectionOf, STORE_KINDS } from './coreHarness';

const names = (count: number) => Array.from({ length: count }, (_, i) => `@w${String(i).padStart(2, '0')}`);

describe.each(STORE_KINDS)('tasks ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('50 audience members claim one broadcast task at once: one TaskClaimed, 49 TASK_ALREADY_CLAIMED naming the winner', async () => {
    const mailbox = await harness.open();
    const workers = names(50);
    const clients = await registerAgents(mailbox, ['@alice', ...workers]);
    const { messageId: taskId } = await clients['@alice'].send({ to: 'AGENT:*', subject: 'one of you', body: 'x', task: {} });
    const late = (await registerAgents(mailbox, ['@late']))['@late'];

    const outcomes = await Promise.allSettled(workers.map((w) => clients[w].claimTask(taskId)));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const winner = (won[0] as PromiseFulfilledResult<{ assignee: string }>).value.assignee;
    const refusals = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason.envelope);
    expect(refusals).toHaveLength(49);
    const claims = await eventsOfType(mailbox, 'TaskClaimed');
    expect(claims).toHaveLength(1);
    const { claimedAt } = claims[0].data; // each refusal names the claimant and when
    for (const refusal of refusals)
      expect(refusal).toMatchObject({ code: 'TASK_ALREADY_CLAIMED', claimant: winner, claimedAt, taskId });

    await expectRejectedWithoutEvents(mailbox, 'NOT_IN_AUDIENCE', () => late.claimTask(taskId));
    // The winner holds it; nobody else sees it as claimable any more.
    expect((await clients[winner].listTasks({ view: 'assigned' })).tasks.map((t) => t.taskId)).toEqual([taskId]);
    const loser = workers.find((w) => w !== winner)!;
    expect((await clients[loser].listTasks({ view: 'claimable' })).tasks).toEqual([]);
  });

  it('the lifecycle: claim, accept, ask, answer, complete with artifacts; views, counts and wakes to the right party', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const wakes: WakeEvent[] = [];
    const stops = await Promise.all(
      ['@alice', '@bob', '@carol'].map((id) => mailbox.wakeBus.subscribe(id, (w) => wakes.push(w))),
    );
    const taskWakes = () =>
      wakes.filter((w): w is TaskWakeEvent => w.type === 'wake/task').map((w) => `${w.recipient}:${w.state}`);
    try {
      const { messageId: taskId } = await alice.send({
        to: 'AGENT:*',
        subject: 'review',
        body: 'please',
        task: { state: 'submitted' },
      });
      expect((await bob.listTasks({ view: 'claimable' })).tasks.map((t) => t.taskId)).toEqual([taskId]);
      expect((await carol.listTasks({ view: 'claimable' })).tasks.map((t) => t.taskId)).toEqual([taskId]);

      await bob.claimTask(taskId);
      expect((await carol.listTasks({ view: 'claimable' })).tasks).toEqual([]);
      await bob.updateTask({ taskId, to: 'working' });
      await bob.updateTask({ taskId, to: 'TASK_STATE_INPUT_REQUIRED', note: 'which branch?' });
      const heartbeats = await mailbox.asActor(ADMIN_ACTOR).heartbeats();
      const waiting = Object.fromEntries(heartbeats.agents.map((a) => [a.identity, a.tasksWaiting]));
      expect(waiting).toMatchObject({ '@alice': 1, '@bob': 0, '@carol': 0 });

      await alice.updateTask({ taskId, to: 'Working', note: 'main' });
      const done = await bob.updateTask({
        taskId,
        to: 'Completed',
        artifacts: [{ name: 'review', parts: [{ kind: 'text', text: 'LGTM' }] }],
      });
      expect(done).toMatchObject({
        taskId,
        state: 'Completed',
        assignee: '@bob',
        events: ['TaskArtifactAdded', 'TaskStateChanged'],
      });

      // Wakes, after the view change: the sender on claim, InputRequired and Completed; the assignee when answered; never @carol.
      expect(taskWakes()).toEqual(['@alice:Submitted', '@alice:InputRequired', '@bob:Working', '@alice:Completed']);

      const a2a = await carol.getTask(taskId); // an audience member may read it
      expect(a2a).toMatchObject({
        id: taskId,
        status: { state: 'TASK_STATE_COMPLETED' },
        artifacts: [{ artifactId: `${taskId}-artifact-1`, name: 'review', parts: [{ kind: 'text', text: 'LGTM' }] }],
        mailbox: { assignee: '@bob', state: 'Completed', sender: '@alice' },
      });
      expect(a2a.history.map((m) => m.parts[0])).toEqual([
        { kind: 'text', text: 'please' },
        { kind: 'text', text: 'Submitted -> Working' },
        { kind: 'text', text: 'which branch?' },
        { kind: 'text', text: 'main' },
        { kind: 'text', text: 'Working -> Completed' },
      ]);
      // Terminal is final, for everyone; the refusal lists what the caller may do (nothing) and writes nothing.
      const error = await expectRejectedWithoutEvents(mailbox, 'INVALID_TRANSITION', () =>
        alice.updateTask({ taskId, to: 'Canceled' }),
      );
      expect(error.envelope).toMatchObject({ currentState: 'Completed', allowed: [] });
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
  });

  it("the sender's reply to the task's message answers its question: InputRequired -> Working, once; other replies only talk", async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: 'AGENT:*', subject: 'review', body: 'please', task: {} });
    await bob.claimTask(taskId);
    await bob.updateTask({ taskId, to: 'Working' });
    await bob.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    const changes = async () => (await eventsOfType(mailbox, 'TaskStateChanged')).length;

    // Replies by anyone but the sender are only messages.
    await bob.send({ to: '@alice', subject: 'also', body: 'x', inReplyTo: taskId });
    await carol.send({ to: '@alice', subject: 'me too', body: 'x', inReplyTo: taskId });
    expect([await changes(), (await alice.getTask(taskId)).mailbox.state]).toEqual([2, 'InputRequired']);

    const reply = { to: '@bob', subject: 'main', body: 'use main', inReplyTo: taskId, idempotencyKey: 'answer-1' };
    const { messageId: replyId } = await alice.send(reply);
    const [answer] = (await eventsOfType(mailbox, 'TaskStateChanged')).slice(-1);
    expect(answer).toMatchObject({
      data: { taskId, from: 'InputRequired', to: 'Working', note: `reply ${replyId}: main` },
      metadata: { actor: '@alice' },
    });
    // The views show it by the time the send answers; the holder waits on nothing from the sender any more.
    expect((await bob.listTasks({ view: 'assigned' })).tasks).toMatchObject([{ taskId, state: 'Working' }]);
    const beats = await mailbox.asActor(ADMIN_ACTOR).heartbeats();
    expect(Object.fromEntries(beats.agents.map((a) => [a.identity, a.tasksWaiting]))).toMatchObject({ '@alice': 0, '@bob': 1 });

    await alice.send(reply); // a retried send: the same reply, the task answered once
    await alice.send({ to: '@bob', subject: 'and', body: 'thanks', inReplyTo: taskId }); // Working: only a message
    expect(await changes()).toBe(3);
  });

  it('rejections write nothing: outsider, missing reason, unknown task, a message without a task', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'direct', body: 'x', task: {} });
    const { messageId: plain } = await alice.send({ to: '@bob', subject: 'no task', body: 'x' });
    await expectRejectedWithoutEvents(mailbox, 'INVALID_TRANSITION', () => carol.updateTask({ taskId, to: 'Working' }));
    await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () => bob.updateTask({ taskId, to: 'Rejected' }));
    await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => bob.updateTask({ taskId: plain, to: 'Working' }));
    await expectRejectedWithoutEvents(mailbox, 'NOT_IN_AUDIENCE', () => carol.claimTask(taskId));
    await expectRejectedWithoutEvents(mailbox, 'UNKNOWN_FIELD', () =>
      bob.updateTask({ taskId, to: 'Working', assignee: '@carol' }),
    );
    expect((await rejectionOf(carol.getTask(taskId))).envelope.code).toBe('TASK_NOT_FOUND'); // no existence oracle
    // The direct task was its recipient's all along.
    expect((await bob.listTasks({})).tasks).toMatchObject([{ taskId, assignee: '@bob', state: 'Submitted' }]);
  });
});
