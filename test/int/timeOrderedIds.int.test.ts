/**
 * The ids a mailbox mints are time-ordered (src/events/eventIds.ts): a message's id and every event id begin with the
 * millisecond of the command that made them, so the log's and the views' indexes keyed by them grow at their right
 * edge. A send with an Idempotency-Key keeps the id a retry must find (version 5, the same at any time).
 */
import { messageStream } from '../../src/events/streams';
import { allEvents, registerAgents } from '../support/fixtures';
import { mailboxHarness, STORE_KINDS } from './coreHarness';

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string): number => parseInt(id.replace('-', '').slice(0, 12), 16);

describe.each(STORE_KINDS)('time-ordered ids ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it("a message's id and its events' ids carry the send's millisecond, in send order", async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const before = Date.now();
    const sent = [
      await a.send({ to: '@b', subject: 'one', body: 'x' }),
      await c.send({ to: '@b', subject: 'two', body: 'x' }),
      await b.send({ to: 'AGENT:*', subject: 'all', body: 'x' }),
    ];
    await b.markRead({ messageId: sent[0].messageId });
    const after = Date.now();

    const messageIds = sent.map((s) => s.messageId);
    for (const id of messageIds) {
      expect(id).toMatch(UUID_V8);
      expect(msOf(id)).toBeGreaterThanOrEqual(before);
      expect(msOf(id)).toBeLessThanOrEqual(after);
    }
    expect(messageIds.map(msOf)).toEqual([...messageIds.map(msOf)].sort((x, y) => x - y));

    const written = (await allEvents(mailbox)).filter((event) => event.streamName.startsWith(messageStream('')));
    expect(written.map((event) => event.type)).toEqual([
      'MessageSent',
      'MessageSent',
      'MessageSent',
      'BroadcastDelivered',
      'BroadcastDelivered',
      'ReceiptRead',
    ]);
    for (const event of written) {
      expect(event.eventId).toMatch(UUID_V8);
      expect(event.eventId.slice(0, 13)).toBe(event.metadata.commandId.slice(0, 13));
      expect(msOf(event.eventId)).toBeGreaterThanOrEqual(before);
      expect(msOf(event.eventId)).toBeLessThanOrEqual(after);
    }
    expect(new Set(written.map((event) => event.eventId)).size).toBe(written.length);
  });

  it('a send with an Idempotency-Key gets the same version 5 id on a retry, and is written once', async () => {
    const mailbox = await harness.open();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const input = { to: '@b', subject: 'once', body: 'x' };
    const first = await a.send(input, { idempotencyKey: 'retry-later' });
    const retried = await a.send(input, { idempotencyKey: 'retry-later' });
    expect(first.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(retried.messageId).toBe(first.messageId);
    const sent = (await allEvents(mailbox)).filter((event) => event.type === 'MessageSent');
    expect(sent.map((event) => event.streamName)).toEqual([messageStream(first.messageId)]);
  });
});
