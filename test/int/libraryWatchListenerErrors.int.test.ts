/**
 * watch's listener failing, as a library user's code does. Before: thrown on the first 'sync', watch rejected with the
 * listener's own error (no MailboxError, no stream); thrown on a 'wake', the error vanished without a word; an async
 * listener's rejection was an unhandled rejection (which ends a Node process). Now the stream stays open in each case
 * and the error goes to watch's `onError` with its event, or, without one, to the mailbox's logger.
 */
import type { WakeStreamEvent } from '../../src/application/mailboxQueries';
import { MailboxError } from '../../src/errors';
import type { Mailbox } from '../../src/mailbox';
import { allEvents, memoryMailbox, registerAgents } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { waitFor } from '../support/waitFor';
import { rejectionOf } from './coreHarness';

let mailbox: Mailbox | undefined;
afterEach(async () => mailbox?.close());

const unhandled: unknown[] = [];
const noteUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on('unhandledRejection', noteUnhandled));
afterAll(() => process.off('unhandledRejection', noteUnhandled));

const wakesOf = (events: WakeStreamEvent[]) => events.filter((event) => event.event === 'wake').length;

test("a listener that throws on 'sync' and on each wake: watch resolves, onError hears each with its event, wakes keep coming", async () => {
  mailbox = await memoryMailbox();
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const heard: WakeStreamEvent[] = [];
  const failures: Array<{ error: unknown; event: string }> = [];
  const stopB = await b.watch(
    (event) => {
      heard.push(event);
      throw new Error(`listener failed on ${event.event}`);
    },
    { onError: (error, event) => failures.push({ error, event: event.event }) },
  );
  const cEvents: WakeStreamEvent[] = [];
  const stopC = await c.watch((event) => void cEvents.push(event));
  expect(heard.map((event) => event.event)).toEqual(['sync']);
  expect(failures).toEqual([{ error: new Error('listener failed on sync'), event: 'sync' }]);

  await a.send({ to: '@b', subject: 'one', body: 'x' });
  await a.send({ to: ['@b', '@c'], subject: 'two', body: 'x' });
  await waitFor(() => wakesOf(heard) === 2 && wakesOf(cEvents) === 1, { timeoutMs: 10_000, what: 'the wakes of @b and @c' });
  expect(failures.map((failure) => failure.event)).toEqual(['sync', 'wake', 'wake']);
  expect(failures[2].error).toEqual(new Error('listener failed on wake'));
  await stopB();
  await stopC();
});

test('an async listener whose promise rejects: onError hears it, nothing is left unhandled, the stream goes on', async () => {
  mailbox = await memoryMailbox();
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const failures: string[] = [];
  let wakes = 0;
  const stop = await b.watch(
    async (event) => {
      await Promise.resolve();
      if (event.event === 'wake' && ++wakes === 1) throw new Error('async listener failed');
    },
    { onError: (error, event) => failures.push(`${event.event}: ${(error as Error).message}`) },
  );
  await a.send({ to: '@b', subject: 'one', body: 'x' });
  await c.send({ to: '@b', subject: 'two', body: 'x' });
  await waitFor(() => wakes === 2 && failures.length === 1, { timeoutMs: 10_000, what: 'both wakes and the one failure' });
  await new Promise((resolve) => setImmediate(resolve)); // a rejection left unhandled is reported by then
  expect(failures).toEqual(['wake: async listener failed']);
  expect(unhandled).toEqual([]);
  await stop();
});

test("without onError, a listener's error is logged at error level on the mailbox's logger, naming the event; an onError that throws too", async () => {
  const log = recordingLogger('info');
  mailbox = await memoryMailbox({}, { logger: log.logger });
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const bEvents: string[] = [];
  const stopB = await b.watch((event) => {
    bEvents.push(event.event);
    if (event.event === 'wake') throw new Error('mine');
  });
  const stopC = await c.watch(
    () => {
      throw new Error('listener');
    },
    {
      onError: () => {
        throw new Error('onError too');
      },
    },
  );
  await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
  await waitFor(() => log.lines.filter((line) => line.level === 50).length === 3, {
    timeoutMs: 10_000,
    what: 'three error lines',
  });
  const errors = log.lines.filter((line) => line.level === 50);
  expect(errors.map((line) => [line.msg, (line.err as { message: string }).message])).toEqual(
    expect.arrayContaining([
      [expect.stringMatching(/^watch: its listener failed on a 'wake' event; the stream stays open/), 'mine'],
      [expect.stringMatching(/^watch: its onError failed on a 'sync' event; the stream stays open$/), 'onError too'],
      [expect.stringMatching(/^watch: its onError failed on a 'wake' event/), 'onError too'],
    ]),
  );
  await a.send({ to: '@b', subject: 'two', body: 'x' });
  await waitFor(() => bEvents.length === 3, { timeoutMs: 10_000, what: "@b's second wake" });
  expect(bEvents).toEqual(['sync', 'wake', 'wake']);
  await stopB();
  await stopC();
});

test("watch's options: an unknown one or an onError that is no function is refused, no stream opened and nothing written", async () => {
  mailbox = await memoryMailbox();
  const { '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const before = (await allEvents(mailbox)).length;
  const listener = () => undefined;
  const unknown = await rejectionOf(b.watch(listener, { onErr: () => undefined } as never));
  expect(unknown).toBeInstanceOf(MailboxError);
  expect(unknown.envelope).toMatchObject({
    code: 'UNKNOWN_FIELD',
    field: 'onErr',
    allowed: ['onError'],
    message: "watch options has no option 'onErr' (did you mean 'onError'?); it takes onError. No stream was opened.",
  });
  const notFunction = await rejectionOf(b.watch(listener, { onError: 'log' } as never));
  expect(notFunction.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'onError' });
  expect(notFunction.message).toMatch(/^watch's onError is a function .* not string\. No stream was opened\.$/);
  expect((await allEvents(mailbox)).length).toBe(before);
});
