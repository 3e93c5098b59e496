/**
 * A library watch when its mailbox closes. Before: mailbox.close() shut the wake bus under an open watch and its
 * listener heard nothing more, ever: an agent waiting on it could not tell a quiet inbox from a closed mailbox. Now
 * close() ends each open watch with a last event, `{ event: 'closed', data: { reason } }`, once, before it resolves;
 * a watch its caller stopped is not told; after it nothing reaches the listener, and its stop function still resolves.
 */
import type { WakeStreamEvent } from '../../src/application/mailboxQueries';
import type { MailboxError } from '../../src/errors';
import { memoryMailbox, registerAgents } from '../support/fixtures';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';
import { startRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { rejectionOf } from './coreHarness';

const REASON =
  'mailbox.close() ended this stream: no more wakes come on it; createMailbox opens the mailbox again, and watch with it.';

test("close() ends each open watch with a last 'closed' event, before it resolves; a stopped watch hears nothing", async () => {
  const mailbox = await memoryMailbox();
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const heard: Record<string, WakeStreamEvent[]> = { '@a': [], '@b': [], '@c': [] };
  let refusedOnClosed: Promise<MailboxError> | undefined;
  const stopB = await b.watch((event) => {
    heard['@b'].push(event);
    // What a listener does on 'closed' (look at its inbox once more) is refused as any call after close() is.
    if (event.event === 'closed') refusedOnClosed = rejectionOf(b.unreadCount());
  });
  const stopC = await c.watch(async (event) => void heard['@c'].push(event));
  const stopA = await a.watch((event) => void heard['@a'].push(event));
  await stopA(); // stopped by its caller: it is not told of the close

  await a.send({ to: ['@b', '@c'], subject: 'review', body: 'x' });
  await waitFor(() => heard['@b'].length === 2 && heard['@c'].length === 2, {
    timeoutMs: 10_000,
    what: 'the wakes of @b and @c',
  });
  await mailbox.close();

  for (const identity of ['@b', '@c']) {
    expect(heard[identity].map((event) => event.event)).toEqual(['sync', 'wake', 'closed']);
    expect(heard[identity][2]).toEqual({ event: 'closed', data: { reason: REASON } });
  }
  expect(heard['@a'].map((event) => event.event)).toEqual(['sync']);
  expect((await refusedOnClosed!).envelope).toMatchObject({ code: 'UNAVAILABLE', error: 'Mailbox closed' });

  // Stopping a watch the close ended, or closing again, tells nobody anything more.
  await expect(stopB()).resolves.toBeUndefined();
  await expect(stopC()).resolves.toBeUndefined();
  await mailbox.close();
  expect(heard['@b']).toHaveLength(3);
  expect(heard['@c']).toHaveLength(3);
});

test("a listener that throws on 'closed': its onError hears it with the event, and close() resolves", async () => {
  const mailbox = await memoryMailbox();
  const { '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const failures: Array<{ message: string; event: WakeStreamEvent }> = [];
  await b.watch(
    (event) => {
      if (event.event === 'closed') throw new Error('cannot reconnect');
    },
    { onError: (error, event) => failures.push({ message: (error as Error).message, event }) },
  );
  await mailbox.close();
  expect(failures).toEqual([{ message: 'cannot reconnect', event: { event: 'closed', data: { reason: REASON } } }]);
});

test("with Redis's wake bus too: each open watch hears 'closed' once, and close() resolves", async () => {
  const redis = await startRedis();
  try {
    const mailbox = await memoryMailbox({ redisUrl: redis.url, redisTimeoutMs: REDIS_TEST_TIMEOUT_MS });
    const { '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const heard: string[] = [];
    await b.watch((event) => void heard.push(`@b ${event.event}`));
    await c.watch((event) => void heard.push(`@c ${event.event}`));
    await mailbox.close();
    expect(heard).toEqual(['@b sync', '@c sync', '@b closed', '@c closed']);
  } finally {
    await redis.stop();
  }
});
