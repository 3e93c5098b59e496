/**
 * The wake recorder keeps the first wake per (message, recipient) in memory so as not to append it twice (issue 15:
 * nothing that grows with the messages a process sees stays in memory): at most `remembered` pairs, then the memory
 * starts afresh. A repeat past the bound costs one more WakeObserved, and the delivery ledger still says each
 * recipient was woken when it first was.
 */
import pino from 'pino';
import { WakeRecorder } from '../../src/application/wakeRecorder';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, allEvents, registerAgents } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
let mailbox: Mailbox | undefined;
afterAll(async () => {
  await mailbox?.close();
});

test('at most `remembered` pairs are kept; a repeat past the bound is one more event and the ledger keeps the first wake', async () => {
  let now = T0;
  const clock = { now: () => new Date(now) };
  mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }), clock },
  );
  const own = mailbox;
  const { '@s': s } = await registerAgents(own, ['@s', '@a', '@b', '@c']);
  const { messageId } = await s.send({ to: ['@a', '@b', '@c'], subject: 'for three', body: 'x' });
  const observed = async () =>
    (await allEvents(own))
      .filter((event) => event.type === 'WakeObserved')
      .map((event) => (event.data as { recipient: string }).recipient);
  const before = await observed();
  const recorder = new WakeRecorder(own.eventStore, clock, pino({ level: 'silent' }), { actor: 'system:test', remembered: 2 });

  // Within the bound: each pair once, however often observed.
  now = T0 + 1000;
  for (const recipient of ['@a', '@b', '@a', '@b']) recorder.observed(messageId, recipient, 'stream');
  await recorder.flush();
  expect(recorder.appended).toBe(2);
  // A third pair: the memory holds two, so it starts afresh with this one.
  now = T0 + 2000;
  recorder.observed(messageId, '@c', 'stream');
  recorder.observed(messageId, '@c', 'stream');
  // @a again, forgotten: appended once more (and then remembered).
  now = T0 + 3000;
  recorder.observed(messageId, '@a', 'stream');
  recorder.observed(messageId, '@a', 'stream');
  await recorder.close();
  expect(recorder.appended).toBe(4);
  expect((await observed()).slice(before.length)).toEqual(['@a', '@b', '@c', '@a']);

  // The ledger keeps each recipient's first wake.
  const woken = async () =>
    (await own.projections.deliveryLedger(messageId, { after: null, limit: 10 }))!.rows.map((row) => [row.recipient, row.woken]);
  await waitFor(async () => (await woken()).every(([, wake]) => wake !== null), { what: 'three recipients woken in the ledger' });
  expect(await woken()).toEqual([
    ['@a', { at: new Date(T0 + 1000).toISOString(), via: 'stream' }],
    ['@b', { at: new Date(T0 + 1000).toISOString(), via: 'stream' }],
    ['@c', { at: new Date(T0 + 2000).toISOString(), via: 'stream' }],
  ]);
});
