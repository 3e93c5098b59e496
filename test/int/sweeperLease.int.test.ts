/**
 * Issue 14, Deliver 3: with shared views (Redis), two mailboxes on one SQLite log sweep tasks on one
 * node only (the holder of the sweeper lease), and the other takes over when the holder closes. The
 * projector lease is held by one of them too, and the follower answers its own writes in time.
 */
import path from 'node:path';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents, silentLogger, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';

let redis: TestRedis;
const open: Mailbox[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const mailbox of open) await mailbox.close();
  await redis.stop();
});

test('one of two mailboxes sweeps and one projects; the other takes over the sweeping when the holder closes', async () => {
  const file = path.join(tempDir('sweeper-lease-'), 'events.sqlite');
  const start = async (nodeId: string) => {
    const mailbox = await createMailbox(
      {
        eventStoreUrl: `sqlite:${file}`,
        adminToken: ADMIN_TOKEN,
        logLevel: 'silent',
        redisUrl: redis.url,
        redisNamespace: `sweep${process.pid}`,
        taskSweepMs: 20,
        projectorLeaseMs: 600,
        nodeId,
      },
      { logger: silentLogger },
    );
    open.push(mailbox);
    return { mailbox, sweeps: jest.spyOn(mailbox.sweeper, 'sweepOnce') };
  };
  const first = await start('first');
  const second = await start('second');
  expect(first.mailbox.runner.getStatus().leadership).toEqual({ role: 'leading', node: 'first', token: expect.any(String) });
  expect(second.mailbox.runner.getStatus().leadership).toMatchObject({ role: 'following', node: 'second', leader: 'first' });

  await waitFor(() => first.sweeps.mock.calls.length >= 5, { what: 'five sweeps by the first mailbox' });
  expect(second.sweeps).not.toHaveBeenCalled();

  // The follower's own write is visible to it when its command answers (it follows the shared checkpoint).
  const { '@a': a } = await registerAgents(second.mailbox, ['@a', '@b', '@c']);
  const sent = await a.send({ to: '@b', subject: 'via the follower', body: 'x' });
  expect(sent.warnings ?? []).toEqual([]);

  await first.mailbox.close();
  open.splice(open.indexOf(first.mailbox), 1);
  await waitFor(() => second.sweeps.mock.calls.length >= 5, { what: 'five sweeps by the second mailbox' });
  await waitFor(() => second.mailbox.runner.getStatus().leadership.role === 'leading', { what: 'the second projects' });
}, 30_000);

test('a sweeper that cannot reach Redis steps down saying it sweeps nothing, not that another node does', async () => {
  const own = await startRedis();
  const lines: Array<{ msg: string; level: number }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const mailbox = await createMailbox(
    {
      eventStoreUrl: 'memory:',
      adminToken: ADMIN_TOKEN,
      logLevel: 'info',
      redisUrl: own.url,
      taskSweepMs: 20,
      projectorLeaseMs: 600,
      nodeId: 'alone',
    },
    { logger },
  );
  try {
    await waitFor(() => lines.some((line) => line.msg.startsWith('task sweeper: this node holds the lease')), {
      what: 'the sweeper lease taken',
    });
    await own.kill!(); // Redis down for every node: none can hold or take the lease meanwhile
    await waitFor(() => lines.some((line) => line.msg.startsWith('task sweeper: stepped down')), {
      what: 'the step-down line',
    });
    // It said "another node sweeps": nobody swept, and an operator read that all was well.
    expect(lines.filter((line) => line.msg.startsWith('task sweeper: stepped down'))).toEqual([
      expect.objectContaining({
        level: 40,
        msg:
          'task sweeper: stepped down (the sweeper lease could not be renewed for 600 ms (store unreachable)); this node ' +
          'sweeps nothing until it holds the lease again (it tries every 200 ms; another node that reaches the store may ' +
          'take it first)',
      }),
    ]);
  } finally {
    await own.start!();
    await mailbox.close();
    await own.stop();
  }
}, 30_000);
