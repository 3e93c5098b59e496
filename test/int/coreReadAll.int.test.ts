/**
 * Acceptance (issue 13, item 3): mark_read {all: true}. Marks the caller's unread messages that were seen
 * (returned to it by a list or a get), reports how many matched but were withheld as unseen; includeUnseen
 * widens it; filters narrow it; a second call changes nothing. Library API on every event store, with A and
 * D sending, B reading, C receiving the same list message.
 */
import { registerAgents } from '../support/fixtures';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

type ReadAll = { all: true; changed: number; messageIds: string[]; withheldUnseenCount: number; readAt: string | null };

describe.each(STORE_KINDS)('read-all ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('marks only seen messages and reports the withheld; includeUnseen marks the rest; a second read-all changes nothing', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const m1 = await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
    const m2 = await a.send({ to: '@b', subject: 'two', body: 'x' });
    await b.listMessages({ limit: 2 }); // returns m2 and m1: both seen
    const m3 = await a.send({ to: '@b', subject: 'three', body: 'x' }); // never returned to B

    const first = (await b.markRead({ all: true })) as ReadAll;
    expect(first).toMatchObject({ all: true, status: 'read', changed: 2, withheldUnseenCount: 1, readAt: expect.any(String) });
    expect(first.messageIds.sort()).toEqual([m1.messageId, m2.messageId].sort());
    expect((await b.listMessages({ status: 'unread' })).messages.map((m) => m.messageId)).toEqual([m3.messageId]);
    expect((await b.getMessage(m1.messageId)).readAt).toBe(first.readAt); // the message's own receipt
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 1 }); // C's copy of m1 untouched

    // m3 was just listed (seen) by that listing; a fresh unseen one arrives.
    const m4 = await a.send({ to: '@b', subject: 'four', body: 'x' });
    const widened = (await b.markRead({ all: true, includeUnseen: true })) as ReadAll;
    expect(widened).toMatchObject({ changed: 2, withheldUnseenCount: 0 });
    expect(widened.messageIds.sort()).toEqual([m3.messageId, m4.messageId].sort());
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 0, unseenCount: 0 });

    const receipts = (await eventsOfType(mailbox, 'ReceiptRead')).length;
    const again = (await b.markRead({ all: true, includeUnseen: true })) as ReadAll;
    expect(again).toMatchObject({ changed: 0, messageIds: [], withheldUnseenCount: 0, readAt: null });
    expect(await eventsOfType(mailbox, 'ReceiptRead')).toHaveLength(receipts);
  });

  it('filters narrow it: from, threadId, priority, before', async () => {
    let now = Date.parse('2030-01-01T12:00:00.000Z');
    const clock = { now: () => new Date((now += 1000)) }; // every reading a second later: sentAt values differ
    const mailbox = await harness.open({}, { clock });
    const { '@a': a, '@b': b, '@d': d } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const fromA = await a.send({ to: '@b', subject: 'a', body: 'x', priority: 'high' });
    const fromD = await d.send({ to: '@b', subject: 'd', body: 'x' });
    const reply = await d.send({ to: '@b', subject: 're', body: 'x', inReplyTo: fromD.messageId });
    await b.listMessages({});
    const byFrom = (await b.markRead({ all: true, from: '@a' })) as ReadAll;
    expect(byFrom.messageIds).toEqual([fromA.messageId]);
    const byThreadAndBefore = (await b.markRead({ all: true, threadId: fromD.messageId, before: reply.sentAt })) as ReadAll;
    expect(byThreadAndBefore.messageIds).toEqual([fromD.messageId]);
    expect((await b.markRead({ all: true, priority: 'high' })) as ReadAll).toMatchObject({ changed: 0 });
    expect(((await b.markRead({ all: true, priority: 'normal' })) as ReadAll).messageIds).toEqual([reply.messageId]);
  });

  it('refuses a filter without all, all with ids, and all: false; nothing is written', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const m1 = await a.send({ to: '@b', subject: 'one', body: 'x' });
    const withoutAll = await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () =>
      b.markRead({ messageId: m1.messageId, includeUnseen: true }),
    );
    expect(withoutAll.message).toContain('all: true');
    await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () => b.markRead({ all: true, messageId: m1.messageId }));
    await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () => b.markRead({ all: false } as never));
    await expectRejectedWithoutEvents(mailbox, 'VALIDATION_FAILED', () => b.markRead({ all: true, before: 'yesterday' }));
  });
});
