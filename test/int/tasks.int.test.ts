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
        { kind: 'text', text: 'claimed by @bob' },
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
    const { messageId: replyId, warnings } = await alice.send(reply);
    // The send says what it did: the task it answered, its state now.
    expect(warnings).toEqual([
      {
        code: 'TASK_ANSWERED',
        taskId,
        state: 'Working',
        message:
          `Your message answered task ${taskId} ("review"): it was InputRequired, waiting on you, and is Working again, ` +
          "with its holder @bob; the task's history notes this message as your answer.",
      },
    ]);
    const [answer] = (await eventsOfType(mailbox, 'TaskStateChanged')).slice(-1);
    expect(answer).toMatchObject({
      data: { taskId, from: 'InputRequired', to: 'Working', note: `reply ${replyId}: main` },
      metadata: { actor: '@alice' },
    });
    // The views show it by the time the send answers; the holder waits on nothing from the sender any more.
    expect((await bob.listTasks({ view: 'assigned' })).tasks).toMatchObject([{ taskId, state: 'Working' }]);
    const beats = await mailbox.asActor(ADMIN_ACTOR).heartbeats();
    expect(Object.fromEntries(beats.agents.map((a) => [a.identity, a.tasksWaiting]))).toMatchObject({ '@alice': 0, '@bob': 1 });

    // A retried send (its first answer lost in transit): the original result, its TASK_ANSWERED too; the task answered once.
    const retried = await alice.send(reply);
    expect([retried.messageId, retried.warnings]).toEqual([replyId, warnings]);
    const after = await alice.send({ to: '@bob', subject: 'and', body: 'thanks', inReplyTo: taskId }); // Working: only a message
    expect(after.warnings).toBeUndefined();
    expect(await changes()).toBe(3);
  });

  it("the sender's message to the holder anywhere in the task's thread answers it; others' and other threads' do not", async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'port it', body: 'x', task: {} });
    // A second task of @alice's to @bob in the same thread, and one in another thread: both asking too.
    const { messageId: sibling } = await alice.send({
      to: '@bob',
      subject: 'and test it',
      body: 'x',
      task: {},
      threadId: taskId,
    });
    const { messageId: elsewhere } = await alice.send({ to: '@bob', subject: 'other work', body: 'x', task: {} });
    for (const id of [taskId, sibling, elsewhere]) {
      await bob.updateTask({ taskId: id, to: 'Working' });
      await bob.updateTask({ taskId: id, to: 'InputRequired', note: 'which branch?' });
    }
    const answers = async () =>
      (await eventsOfType(mailbox, 'TaskStateChanged')).filter((e) => e.data.from === 'InputRequired').map((e) => e.data.taskId);
    const state = async (id: string) => (await alice.getTask(id)).mailbox.state;

    // Only talk: @carol in the thread, @alice to @carol in the thread, @alice to @bob in another thread.
    await carol.send({ to: '@bob', subject: 'me too', body: 'x', threadId: taskId });
    await alice.send({ to: '@carol', subject: 'fyi', body: 'x', threadId: taskId });
    await alice.send({ to: '@bob', subject: 'unrelated', body: 'x' });
    expect(await answers()).toEqual([]);

    // @alice to @bob in the thread, replying to neither task message: both tasks of the thread move, the other does not.
    const message = { to: '@bob', subject: 'main', body: 'use main', threadId: taskId, idempotencyKey: 'thread-answer' };
    const { messageId, warnings } = await alice.send(message);
    // Both answered, said per task; the task of the other thread, held by @bob too, still waits, and is said to.
    expect(warnings?.map((w) => `${w.code} ${String(w.taskId)}`).sort()).toEqual(
      [`TASK_ANSWERED ${taskId}`, `TASK_ANSWERED ${sibling}`, `TASK_AWAITS_INPUT ${elsewhere}`].sort(),
    );
    expect((await answers()).sort()).toEqual([taskId, sibling].sort());
    const [first] = (await eventsOfType(mailbox, 'TaskStateChanged')).filter((e) => e.data.taskId === taskId).slice(-1);
    expect(first).toMatchObject({ data: { to: 'Working', note: `reply ${messageId}: main` }, metadata: { actor: '@alice' } });
    expect([await state(taskId), await state(sibling), await state(elsewhere)]).toEqual(['Working', 'Working', 'InputRequired']);
    // The views show it when the send answers: the holder's again, the sender waits only on the other thread's task.
    const beats = await mailbox.asActor(ADMIN_ACTOR).heartbeats();
    expect(Object.fromEntries(beats.agents.map((a) => [a.identity, a.tasksWaiting]))).toMatchObject({
      '@alice': 1,
      '@bob': 2,
      '@carol': 0,
    });

    // Retried (its first answer lost in transit): the original result, both TASK_ANSWERED too; each move written once.
    const retried = await alice.send(message);
    expect([retried.messageId, retried.warnings]).toEqual([messageId, warnings]);
    expect(await answers()).toHaveLength(2);

    // Asked again; a reply to a later message of the thread (@bob's question), not to the task's, answers it too.
    await bob.updateTask({ taskId, to: 'InputRequired', note: 'and the version?' });
    const { messageId: question } = await bob.send({ to: '@alice', subject: 'version?', body: 'x', inReplyTo: messageId });
    await alice.send({ to: '@bob', subject: 'v2', body: 'v2', inReplyTo: question });
    expect(await state(taskId)).toBe('Working');
    expect(await answers()).toHaveLength(3);
  });

  it('a message of the sender that answers no asking task says the task still waits and how to answer it; nothing moves', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'port it', body: 'x', task: {} });
    await bob.updateTask({ taskId, to: 'Working' });
    await bob.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    const changes = async () => (await eventsOfType(mailbox, 'TaskStateChanged')).length;
    const before = await changes();
    // In the library's words (its method, not the MCP tool nor the HTTP route its user cannot call).
    const howTo = `updateTask({"taskId": "${taskId}", "to": "Working", "note": "<your answer>"})`;

    // To its holder, in another thread (a reply to the question @bob sent apart): said, with the thread that answers and
    // the call that does. (A message in a new thread is not told: taskAnswers.ts, askingTasks.)
    const apart = await bob.send({ to: '@alice', subject: 'which branch?', body: 'x' });
    expect((await alice.send({ to: '@bob', subject: 'use main', body: 'main' })).warnings).toBeUndefined();
    const elsewhere = await alice.send({ to: '@bob', subject: 'use main', body: 'main', inReplyTo: apart.messageId });
    expect(elsewhere.warnings).toEqual([
      {
        code: 'TASK_AWAITS_INPUT',
        taskId,
        state: 'InputRequired',
        assignee: '@bob',
        message:
          `Task ${taskId} ("port it") still waits on your input (InputRequired, held by @bob): this message to @bob is in ` +
          `another thread (${elsewhere.threadId}), so it did not answer it. To answer it, reply in the task's thread ` +
          `(inReplyTo "${taskId}", or threadId "${taskId}"), or call ${howTo}.`,
      },
    ]);
    // In its thread, to someone else than its holder: said too.
    const aside = await alice.send({ to: '@carol', subject: 'fyi', body: 'x', inReplyTo: taskId });
    expect(aside.warnings).toMatchObject([{ code: 'TASK_AWAITS_INPUT', taskId, state: 'InputRequired', assignee: '@bob' }]);
    expect(aside.warnings?.[0].message).toContain(
      `this message, in its thread, is not to its holder @bob, so it did not answer it. To answer it, send to @bob in ` +
        `this thread, or call ${howTo}.`,
    );
    // Unrelated to it (to another agent, in another thread), or not the sender's: nothing to say.
    expect((await alice.send({ to: '@carol', subject: 'lunch', body: 'x' })).warnings).toBeUndefined();
    expect((await bob.send({ to: '@alice', subject: 'which branch?', body: 'x', inReplyTo: taskId })).warnings).toBeUndefined();
    expect([await changes(), (await alice.getTask(taskId)).mailbox.state]).toEqual([before, 'InputRequired']);

    // Done as it says: the call answers it.
    await alice.updateTask({ taskId, to: 'Working', note: 'main' });
    expect((await alice.getTask(taskId)).mailbox.state).toBe('Working');
    const thanks = { to: '@bob', subject: 'thanks', body: 'x', inReplyTo: apart.messageId };
    expect((await alice.send(thanks)).warnings).toBeUndefined(); // none waits now
  });

  it('a send in a new thread reads no task views, so it never fails for them (the message is written)', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const views = mailbox.projections;
    const listTasks = views.listTasks.bind(views);
    views.listTasks = () => Promise.reject(new Error('views out of reach'));
    try {
      const sent = await alice.send({ to: ['@bob', '@carol'], subject: 'hello', body: 'x' });
      expect(sent).toMatchObject({ status: 'sent', recipients: ['@bob', '@carol'] });
      expect((await eventsOfType(mailbox, 'MessageSent')).map((e) => e.data.messageId)).toEqual([sent.messageId]);
    } finally {
      views.listTasks = listTasks;
    }
  });

  it('a move that cannot be written leaves the send sent, saying so per task (TASK_NOT_ANSWERED)', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'port it', body: 'x', task: {} });
    await bob.updateTask({ taskId, to: 'Working' });
    await bob.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    const store = mailbox.eventStore;
    const append = store.append.bind(store);
    store.append = (stream, events, expected) =>
      stream.startsWith('mailbox-task-') ? Promise.reject(new Error('disk full')) : append(stream, events, expected);
    try {
      const sent = await alice.send({ to: '@bob', subject: 'main', body: 'use main', threadId: taskId });
      expect(sent.warnings).toMatchObject([{ code: 'TASK_NOT_ANSWERED', taskId, message: expect.stringMatching(/disk full/) }]);
      expect((await bob.listMessages({ threadId: taskId })).messages.map((m) => m.messageId)).toContain(sent.messageId);
    } finally {
      store.append = append;
    }
    expect((await eventsOfType(mailbox, 'TaskStateChanged')).map((e) => e.data.to)).toEqual(['Working', 'InputRequired']);
  });

  it('rejections write nothing: outsider, missing reason, unknown task, a message without a task', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'direct', body: 'x', task: {} });
    const { messageId: plain } = await alice.send({ to: '@bob', subject: 'no task', body: 'x' });
    // A stranger learns nothing of a direct task (no existence oracle): not its state, not its recipient.
    await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => carol.updateTask({ taskId, to: 'Working' }));
    await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () => bob.updateTask({ taskId, to: 'Rejected' }));
    await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => bob.updateTask({ taskId: plain, to: 'Working' }));
    await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => carol.claimTask(taskId));
    await expectRejectedWithoutEvents(mailbox, 'UNKNOWN_FIELD', () =>
      bob.updateTask({ taskId, to: 'Working', assignee: '@carol' } as never),
    );
    expect((await rejectionOf(carol.getTask(taskId))).envelope.code).toBe('TASK_NOT_FOUND'); // no existence oracle
    // The direct task was its recipient's all along.
    expect((await bob.listTasks({})).tasks).toMatchObject([{ taskId, assignee: '@bob', state: 'Submitted' }]);
  });

  it('a retried send answers no question asked after it was first sent: nothing written, the first result again', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'port it', body: 'x', task: {}, threadId: 'port' });
    await bob.updateTask({ taskId, to: 'Working' });
    // Only talk when sent: the task asks nothing yet. @carol is in the thread too.
    const message = { to: ['@bob', '@carol'], subject: 'fyi', body: 'x', threadId: 'port', idempotencyKey: 'fyi-1' };
    const first = await alice.send(message);
    expect(first.warnings).toBeUndefined();
    await bob.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    const moves = async () => (await eventsOfType(mailbox, 'TaskStateChanged')).length;
    const before = await moves();

    // The retry (its first answer lost in transit) finds the task asking now: it must not take the old message for the answer.
    const retried = await alice.send(message);
    expect([retried.messageId, retried.warnings]).toEqual([first.messageId, undefined]);
    expect(await moves()).toBe(before);
    expect((await alice.getTask(taskId)).mailbox.state).toBe('InputRequired');
    expect((await carol.listMessages({ threadId: 'port' })).messages.map((m) => m.messageId)).toEqual([first.messageId]);
  });

  it('a move to the state the task is in (a progress report) is refused saying to write in its thread, to the other party', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: ['@bob', '@carol'], subject: 'port it', body: 'x', task: {} });
    await bob.claimTask(taskId);
    await bob.updateTask({ taskId, to: 'Working' });
    const progress = await expectRejectedWithoutEvents(mailbox, 'INVALID_TRANSITION', () =>
      bob.updateTask({ taskId, to: 'Working', note: 'half done' }),
    );
    expect(progress.message).toBe(
      `Task ${taskId} is Working; @bob (assignee) cannot move it to Working. From Working you may move it to: ` +
        'InputRequired, AuthRequired, Completed, Failed, Submitted. It is Working already, and a task keeps no progress ' +
        'notes: to tell @alice something about it, send a message in its thread: send({"to": "@alice", ' +
        `"inReplyTo": "${taskId}", "subject": "...", "body": "..."}).`,
    );
    const sender = await expectRejectedWithoutEvents(mailbox, 'INVALID_TRANSITION', () =>
      alice.updateTask({ taskId, to: 'Working', note: 'use main' }),
    );
    expect(sender.message).toContain(`to tell @bob something about it, send a message in its thread: send({"to": "@bob"`);
    // Not held by @carol (of the audience): nothing for it to say in the thread, and no such hint.
    const other = await expectRejectedWithoutEvents(mailbox, 'INVALID_TRANSITION', () =>
      carol.updateTask({ taskId, to: 'Working' }),
    );
    expect(other.message).not.toContain('progress');
    // Done as it says: the message is written in the task's thread.
    const said = await bob.send({ to: '@alice', subject: 'progress', body: 'half done', inReplyTo: taskId });
    expect(said.threadId).toBe(taskId);
  });

  it('a move given both a reason and a note shows both in the task as read (status and history), not the note alone', async () => {
    const mailbox = await harness.open();
    const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: ['@bob', '@carol'], subject: 'fix ci', body: 'please', task: {} });
    await bob.claimTask(taskId);
    await bob.updateTask({ taskId, to: 'Working' });
    await bob.updateTask({ taskId, to: 'InputRequired', note: 'which branch?', reason: 'blocked' });
    await alice.updateTask({ taskId, to: 'Working', note: 'main' });
    await bob.updateTask({ taskId, to: 'Failed', reason: 'tests fail on main', note: 'see the CI log' });

    for (const reader of [alice, carol]) {
      const a2a = await reader.getTask(taskId);
      expect(a2a.status.message?.parts).toEqual([{ kind: 'text', text: 'see the CI log (reason: tests fail on main)' }]);
      expect(a2a.history.map((m) => m.parts[0])).toEqual([
        { kind: 'text', text: 'please' },
        { kind: 'text', text: 'claimed by @bob' },
        { kind: 'text', text: 'Submitted -> Working' },
        { kind: 'text', text: 'which branch? (reason: blocked)' },
        { kind: 'text', text: 'main' },
        { kind: 'text', text: 'see the CI log (reason: tests fail on main)' },
      ]);
    }
  });
});
