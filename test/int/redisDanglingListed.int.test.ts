/**
 * A Redis task list entry (tasks:<list>:<identity>) whose task record is missing (a Redis changed by hand or partly
 * restored: the apply script writes both together). The lists passed over it without a word: the agent saw a task
 * fewer and nothing said why. They still pass over it (the page is filled from the entries after it) and now tell it,
 * once per entry, as the sweeper's read tells a dangling tasks:timed entry.
 */
import Redis from 'ioredis';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { startRedis, type TestRedis } from '../support/redisServer';

let redis: TestRedis;
let mailbox: Mailbox | undefined;
let client: Redis | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await mailbox?.close();
  client?.disconnect();
});
afterAll(() => redis.stop());

test('a listed task without its record is logged once and passed over: the page is filled from the tasks after it', async () => {
  const log = recordingLogger('warn');
  const namespace = `danglingList${process.pid}`;
  mailbox = await createMailbox(
    {
      eventStoreUrl: 'memory:',
      adminToken: ADMIN_TOKEN,
      logLevel: 'warn',
      redisUrl: redis.url,
      redisNamespace: namespace,
      // Time is not the subject: the default 1 s command deadline failed a read once on a loaded CI machine.
      redisTimeoutMs: 10_000,
    },
    { logger: log.logger },
  );
  const { '@a': a } = await registerAgents(mailbox, ['@a', '@b']);
  for (const subject of ['one', 'two', 'three', 'four']) await a.send({ to: '@b', subject, body: 'x', task: {} });
  const sent = (await a.listTasks({ view: 'sent' })).tasks;
  expect(sent.map((task) => task.subject)).toEqual(['four', 'three', 'two', 'one']);
  const lost = sent.find((task) => task.subject === 'three')!.taskId;

  // The record of 'three' goes; its entries in the lists stay.
  client = new Redis(redis.url);
  const [recordsKey] = (await client.keys(`*{${namespace}}:tasks`)) as string[];
  expect(await client.hdel(recordsKey, lost)).toBe(1);

  // A page of two is filled past it, and the next page goes on after them.
  const first = await a.listTasks({ view: 'sent', limit: 2 });
  expect(first.tasks.map((task) => task.subject)).toEqual(['four', 'two']);
  const second = await a.listTasks({ view: 'sent', limit: 2, cursor: first.nextCursor! });
  expect(second.tasks.map((task) => task.subject)).toEqual(['one']);

  const told = log.lines.filter((line) => line.taskId === lost);
  expect(told).toEqual([
    expect.objectContaining({
      level: 40,
      recordsKey,
      listKey: expect.stringMatching(/:tasks:sent:@a$/),
      msg: expect.stringMatching(new RegExp(`lists task ${lost}, which has no record in .*projections rebuild`)),
    }),
  ]);
  // Once: reading the list again says nothing more.
  await a.listTasks({ view: 'sent' });
  expect(log.lines.filter((line) => line.taskId === lost)).toHaveLength(1);
});
