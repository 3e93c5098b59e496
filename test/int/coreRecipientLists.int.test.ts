/**
 * Acceptance (issue 13, item 1): `to` as a list of identities. One message, one id, one thread; per-recipient
 * delivery, read and archive state exactly as for a broadcast. Through the library API on every event store,
 * with identities A (sender), B and C (listed) and D (not listed).
 */
import { registerAgents } from '../support/fixtures';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

type Lister = { listMessages(q?: unknown): Promise<{ messages: Array<{ messageId: string; to: unknown }> }> };
const unreadIds = async (client: Lister) => (await client.listMessages({ status: 'unread' })).messages.map((m) => m.messageId);

describe.each(STORE_KINDS)('a list of recipients ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('A sends to [@b, @c]: B and C each see it unread, A and D do not; B reading leaves C unread', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c, '@d': d } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const sent = await a.send({ to: ['@b', '@c'], subject: 'review', body: 'the diff' });
    expect(sent).toMatchObject({ status: 'sent', to: ['@b', '@c'], recipients: ['@b', '@c'], threadId: sent.messageId });
    expect(sent.warnings).toBeUndefined();

    expect(await unreadIds(b)).toEqual([sent.messageId]);
    expect(await unreadIds(c)).toEqual([sent.messageId]);
    expect(await unreadIds(a)).toEqual([]);
    expect(await unreadIds(d)).toEqual([]);
    expect((await b.listMessages()).messages[0].to).toEqual(['@b', '@c']);
    expect((await a.listMessages({ box: 'outbox', to: '@c' })).messages.map((m) => m.messageId)).toEqual([sent.messageId]);
    expect((await a.listMessages({ box: 'outbox', to: '@d' })).messages).toEqual([]);

    await b.markRead({ messageId: sent.messageId });
    expect(await unreadIds(b)).toEqual([]);
    expect(await unreadIds(c)).toEqual([sent.messageId]);
    expect((await c.unreadCount()).unreadCount).toBe(1);
    expect((await b.unreadCount()).unreadCount).toBe(0);
    await c.archive(sent.messageId);
    expect((await c.unreadCount()).unreadCount).toBe(0);
    expect((await b.getMessage(sent.messageId)).to).toEqual(['@b', '@c']);
    await expect(d.getMessage(sent.messageId)).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });

    const receipts = (await a.getMessage(sent.messageId)).receipts!.map((r) => [
      r.recipient,
      r.readAt !== null,
      r.archivedAt !== null,
    ]);
    expect(receipts).toEqual([
      ['@b', true, false],
      ['@c', false, true],
    ]);
    // One event: the MessageSent names both recipients and delivers to each.
    expect((await eventsOfType(mailbox, 'MessageSent')).map((e) => e.data.recipients)).toEqual([['@b', '@c']]);
    expect(await eventsOfType(mailbox, 'BroadcastDelivered')).toEqual([]);
  });

  it('[@b, AGENT:gpt] is INVALID_RECIPIENT_SHAPE naming index 1, and nothing is written', async () => {
    const mailbox = await harness.open();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const error = await expectRejectedWithoutEvents(mailbox, 'INVALID_RECIPIENT_SHAPE', () =>
      a.send({ to: ['@b', 'AGENT:gpt'], subject: 's', body: 'b' }),
    );
    expect(error.envelope).toMatchObject({ index: 1, entry: 'AGENT:gpt' });
    expect(error.message).toContain('to[1]');
    const broadcast = await expectRejectedWithoutEvents(mailbox, 'INVALID_RECIPIENT_SHAPE', () =>
      a.send({ to: ['@b', 'AGENT:*'], subject: 's', body: 'b' }),
    );
    expect(broadcast.message).toMatch(/Send the broadcast on its own/);
    const commas = await expectRejectedWithoutEvents(mailbox, 'INVALID_RECIPIENT_SHAPE', () =>
      a.send({ to: '@b,@c', subject: 's', body: 'b' }),
    );
    expect(commas.message).toContain('["@b","@c"]');
  });

  it('[@b, @b] is delivered once, with a warning', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: ['@b', '@b'], subject: 's', body: 'b' });
    expect(sent.recipients).toEqual(['@b']);
    expect(sent.warnings).toEqual([expect.objectContaining({ code: 'DUPLICATE_RECIPIENT', identity: '@b', index: 1 })]);
    expect(await unreadIds(b)).toEqual([sent.messageId]);
    expect((await b.unreadCount()).unreadCount).toBe(1);
    expect(await unreadIds(c)).toEqual([]);
    expect((await eventsOfType(mailbox, 'MessageSent')).map((e) => e.data.recipients)).toEqual([['@b']]);
  });
});
