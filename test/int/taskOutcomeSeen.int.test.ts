/**
 * Issue 12, Deliver 5 (terminal-unseen): a task that ended without its sender (completed, failed or rejected
 * by its assignee) waits on the sender until the sender gets it; the sender's own cancel waits on nobody.
 * On the memory views and on Redis (a real redis-server). @alice sends (A), @bob holds (B), @carol is a
 * bystander (C) whose counts never move; the heartbeat counts are read from the views after each step.
 */
import { eventStoreSource } from '../../src/audit/logSource';
import { verifyProjections } from '../../src/audit/verify/verifyProjections';
import type { Clock } from '../../src/application/runtime';
import type { Mailbox } from '../../src/mailbox';
import { registerAgents } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { eventsOfType, mailboxHarness, STORE_KINDS } from './coreHarness';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

let namespaces = 0; // one namespace per test: each starts on empty views
const VIEWS = [
  { name: 'memory', config: () => ({}) },
  {
    name: 'Redis',
    config: () => ({
      redisUrl: redis.url,
      redisNamespace: `outcome${process.pid}-${++namespaces}`,
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
    }),
  },
];

class TestClock implements Clock {
  constructor(private at: number) {}
  now = () => new Date(this.at);
  advance(ms: number): void {
    this.at += ms;
  }
}

const waiting = async (mailbox: Mailbox) =>
  Promise.all(['@alice', '@bob', '@carol'].map(async (id) => (await mailbox.projections.heartbeat(id)).tasksWaiting));

describe.each(VIEWS)('a finished task waits on its sender until it is seen ($name views)', ({ config }) => {
  const harness = mailboxHarness(STORE_KINDS[0]);

  it.each([
    { ending: 'Completed' as const, extra: {} },
    { ending: 'Failed' as const, extra: { reason: 'no access' } },
  ])(
    '$ending by the assignee: the count rises for the sender only, and falls once the sender gets the task, once',
    async ({ ending, extra }) => {
      const mailbox = await harness.open({ taskSweepMs: 0, ...config() });
      const { '@alice': alice, '@bob': bob, '@carol': carol } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
      const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'build it', body: 'x', task: {} });
      await bob.updateTask({ taskId, to: 'Working' });
      expect(await waiting(mailbox)).toEqual([0, 1, 0]);

      await bob.updateTask({ taskId, to: ending, ...extra });
      expect(await waiting(mailbox)).toEqual([1, 0, 0]);
      // The sender's list shows which ones wait on it; listing them is not seeing their outcome.
      expect((await alice.listTasks({ view: 'sent' })).tasks).toMatchObject([{ taskId, state: ending, outcomeUnseen: true }]);
      expect(await waiting(mailbox)).toEqual([1, 0, 0]);
      // Others reading it (the assignee) see nothing for the sender; a bystander cannot read it at all.
      await bob.getTask(taskId);
      await expect(carol.getTask(taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      expect(await eventsOfType(mailbox, 'TaskOutcomeSeen')).toEqual([]);
      expect(await waiting(mailbox)).toEqual([1, 0, 0]);

      expect(await alice.getTask(taskId)).toMatchObject({ mailbox: { state: ending } });
      expect(await waiting(mailbox)).toEqual([0, 0, 0]); // read-your-writes: down by the time the get answers
      const seen = await eventsOfType(mailbox, 'TaskOutcomeSeen');
      expect(seen).toMatchObject([{ data: { taskId, sender: '@alice', state: ending }, metadata: { actor: '@alice' } }]);
      expect(seen[0].streamName).toBe(`mailbox-task-${taskId}`);
      expect((await alice.listTasks({ view: 'sent' })).tasks).toMatchObject([
        { taskId, outcomeUnseen: false, updatedBy: '@bob' },
      ]);

      await alice.getTask(taskId); // a second read writes nothing
      expect(await eventsOfType(mailbox, 'TaskOutcomeSeen')).toHaveLength(1);
      expect(await waiting(mailbox)).toEqual([0, 0, 0]);
    },
  );

  it("a rejected task waits on its sender; the sender's own cancel waits on nobody and its read writes nothing", async () => {
    const mailbox = await harness.open({ taskSweepMs: 0, ...config() });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: rejected } = await alice.send({ to: '@bob', subject: 'one', body: 'x', task: {} });
    const { messageId: canceled } = await alice.send({ to: '@bob', subject: 'two', body: 'x', task: {} });
    expect(await waiting(mailbox)).toEqual([0, 2, 0]);
    await bob.updateTask({ taskId: rejected, to: 'Rejected', reason: 'not mine' });
    await alice.updateTask({ taskId: canceled, to: 'Canceled' });
    expect(await waiting(mailbox)).toEqual([1, 0, 0]);

    await alice.getTask(canceled);
    expect(await eventsOfType(mailbox, 'TaskOutcomeSeen')).toEqual([]);
    await alice.getTask(rejected);
    expect(await eventsOfType(mailbox, 'TaskOutcomeSeen')).toMatchObject([{ data: { taskId: rejected, state: 'Rejected' } }]);
    expect(await waiting(mailbox)).toEqual([0, 0, 0]);
  });

  // The A2A status timestamp is when the task got its status. It was the time of the task stream's last event, so
  // the sender's reading of the outcome (TaskOutcomeSeen, no change to the task) moved it for every reader.
  it("the sender's get leaves the status timestamp at the change that made the status", async () => {
    const clock = new TestClock(Date.parse('2030-05-01T12:00:00.000Z'));
    const mailbox = await harness.open({ taskSweepMs: 0, ...config() }, { clock });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const { messageId: taskId } = await alice.send({ to: '@bob', subject: 'build it', body: 'x', task: {} });
    await bob.updateTask({ taskId, to: 'Working' });
    clock.advance(1_000);
    await bob.updateTask({ taskId, to: 'Completed' });
    const completedAt = clock.now().toISOString();
    clock.advance(60_000);

    expect((await alice.getTask(taskId)).status).toMatchObject({ state: 'TASK_STATE_COMPLETED', timestamp: completedAt });
    expect(await eventsOfType(mailbox, 'TaskOutcomeSeen')).toHaveLength(1);
    for (const reader of [alice, bob])
      expect((await reader.getTask(taskId)).status).toMatchObject({ state: 'TASK_STATE_COMPLETED', timestamp: completedAt });
  });

  it('the views equal a clean rebuild from the log (the seen mark is a fact in it)', async () => {
    const mailbox = await harness.open({ taskSweepMs: 0, ...config() });
    const { '@alice': alice, '@bob': bob } = await registerAgents(mailbox, ['@alice', '@bob', '@carol']);
    const ids: string[] = [];
    for (const subject of ['a', 'b', 'c']) {
      const { messageId } = await alice.send({ to: '@bob', subject, body: 'x', task: {} });
      await bob.updateTask({ taskId: messageId, to: 'Working' });
      ids.push(messageId);
    }
    await bob.updateTask({ taskId: ids[0], to: 'Completed' });
    await bob.updateTask({ taskId: ids[1], to: 'Completed' });
    await alice.getTask(ids[0]);
    expect(await waiting(mailbox)).toEqual([1, 1, 0]);
    const report = await verifyProjections(eventStoreSource(mailbox.eventStore), mailbox.projections);
    expect(report.differences).toEqual([]);
  });
});
