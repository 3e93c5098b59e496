/**
 * Acceptance (issue 2): one broadcast, per-recipient delivery and read state,
 * exact counts, audience snapshots; MarkRead rules. Through the library API on
 * both embedded stores, with at least three identities.
 */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { registerAgents } from '../support/fixtures';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

const unreadIds = async (client: { listMessages(q?: unknown): Promise<{ messages: Array<{ messageId: string }> }> }) =>
  (await client.listMessages({ status: 'unread' })).messages.map((m) => m.messageId);

describe.each(STORE_KINDS)('broadcasts and receipts ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('A broadcasts to B and C: each sees it unread, A does not; B reading it leaves C unread; counts exact', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: 'AGENT:*', subject: 'standup', body: 'at 10', priority: 'high' });
    expect(sent.recipients.sort()).toEqual(['@b', '@c']);

    expect(await unreadIds(b)).toEqual([sent.messageId]);
    expect(await unreadIds(c)).toEqual([sent.messageId]);
    expect(await unreadIds(a)).toEqual([]);
    expect((await a.listMessages({ status: 'all' })).messages).toEqual([]);
    expect((await a.listMessages({ box: 'outbox' })).messages.map((m) => m.messageId)).toEqual([sent.messageId]);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 1, unread: 1, byPriority: { low: 0, normal: 0, high: 1 } });
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 1, unread: 1, byPriority: { low: 0, normal: 0, high: 1 } });
    expect(await a.unreadCount()).toMatchObject({ unreadCount: 0, unread: 0, byPriority: { low: 0, normal: 0, high: 0 } });

    const read = await b.markRead({ messageId: sent.messageId });
    expect(read).toMatchObject({ messageId: sent.messageId, status: 'read' });
    expect(await unreadIds(b)).toEqual([]);
    expect((await b.listMessages({ status: 'read' })).messages.map((m) => [m.messageId, m.readAt])).toEqual([
      [sent.messageId, (read as { readAt: string }).readAt],
    ]);
    expect(await unreadIds(c)).toEqual([sent.messageId]);
    expect((await c.unreadCount()).unreadCount).toBe(1);
    expect((await b.unreadCount()).unreadCount).toBe(0);
    expect((await c.getMessage(sent.messageId)).readAt).toBeNull();

    // One message, one thread, per-recipient state.
    const detail = await a.getMessage(sent.messageId);
    expect(detail.threadId).toBe(sent.messageId);
    expect(detail.receipts?.sort((x, y) => x.recipient.localeCompare(y.recipient))).toEqual([
      { recipient: '@b', readAt: (read as { readAt: string }).readAt, archivedAt: null },
      { recipient: '@c', readAt: null, archivedAt: null },
    ]);
    const heartbeats = await mailbox.asActor(ADMIN_ACTOR).heartbeats();
    const byIdentity = Object.fromEntries(heartbeats.agents.map((h) => [h.identity, h.unreadCount]));
    expect(byIdentity).toMatchObject({ '@a': 0, '@b': 0, '@c': 1 });
    expect(await eventsOfType(mailbox, 'MessageSent')).toHaveLength(1);
    expect((await eventsOfType(mailbox, 'BroadcastDelivered')).map((e) => e.data.recipient).sort()).toEqual(['@b', '@c']);
  });

  it('counts stay exact over many messages, reads and archives', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const direct = [];
    for (let i = 0; i < 12; i++)
      direct.push(await a.send({ to: '@b', subject: `d${i}`, body: 'x', priority: i % 3 === 0 ? 'low' : 'normal' }));
    const broadcasts = [];
    for (let i = 0; i < 5; i++) broadcasts.push(await c.send({ to: 'AGENT:*', subject: `b${i}`, body: 'x' }));
    // B: 12 direct (4 low, 8 normal) + 5 broadcasts unread
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 17, unread: 17, byPriority: { low: 4, normal: 13, high: 0 } });
    expect(await a.unreadCount()).toMatchObject({ unreadCount: 5, unread: 5, byPriority: { low: 0, normal: 5, high: 0 } });
    expect((await c.unreadCount()).unreadCount).toBe(0);
    await b.markRead({ messageIds: direct.slice(0, 3).map((m) => m.messageId) }); // one low, two normal
    await b.archive(direct[3].messageId); // low, unread -> archived: leaves the count
    await b.archive(direct[4].messageId);
    await b.markRead({ messageId: direct[4].messageId }); // archived already: no double decrement
    await a.markRead({ messageId: broadcasts[0].messageId });
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 12, unread: 12, byPriority: { low: 2, normal: 10, high: 0 } });
    expect((await b.listMessages({ status: 'unread', limit: 200 })).messages).toHaveLength(12);
    expect((await b.listMessages({ status: 'unread', limit: 200 })).unreadCount).toBe(12);
    expect(await a.unreadCount()).toMatchObject({ unreadCount: 4, unread: 4, byPriority: { low: 0, normal: 4, high: 0 } });
  });

  it('an agent registered after a broadcast never sees it, and cannot mark it read', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: 'AGENT:*', subject: 'before D', body: 'x' });
    const { '@d': d } = await registerAgents(mailbox, ['@d']);
    expect((await d.listMessages({ status: 'all' })).messages).toEqual([]);
    expect(await d.unreadCount()).toMatchObject({ unreadCount: 0, unread: 0, byPriority: { low: 0, normal: 0, high: 0 } });
    await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => d.markRead({ messageId: sent.messageId }));
    await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => d.getMessage(sent.messageId));
    // The next broadcast does reach D.
    const later = await b.send({ to: 'AGENT:*', subject: 'after D', body: 'x' });
    expect(later.recipients.sort()).toEqual(['@a', '@c', '@d']);
    expect(await unreadIds(d)).toEqual([later.messageId]);
    expect(await unreadIds(c)).toEqual([later.messageId, sent.messageId]);
  });

  it('a retired agent is not in later audiences but keeps what it already received', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const first = await a.send({ to: 'AGENT:*', subject: 'first', body: 'x' });
    const retired = await mailbox.asActor(ADMIN_ACTOR).retireAgent('@c');
    expect(retired).toMatchObject({ identity: '@c', changed: true });
    // Again: the same retiredAt, changed false, and no event written.
    const retiredEvents = (await eventsOfType(mailbox, 'AgentRetired')).length;
    expect(await mailbox.asActor(ADMIN_ACTOR).retireAgent('@c')).toMatchObject({
      identity: '@c',
      retiredAt: retired.retiredAt,
      changed: false,
    });
    expect(await eventsOfType(mailbox, 'AgentRetired')).toHaveLength(retiredEvents);
    const second = await a.send({ to: 'AGENT:*', subject: 'second', body: 'x' });
    expect(first.recipients.sort()).toEqual(['@b', '@c']);
    expect(second.recipients).toEqual(['@b']);
    expect(await unreadIds(b)).toEqual([second.messageId, first.messageId]);
    expect((await c.listMessages({ status: 'all' })).messages.map((m) => m.messageId)).toEqual([first.messageId]);
    expect(
      (await eventsOfType(mailbox, 'BroadcastDelivered'))
        .filter((e) => e.data.messageId === second.messageId)
        .map((e) => e.data.recipient),
    ).toEqual(['@b']);
    expect((await a.listAgents()).agents.find((agent) => agent.identity === '@c')).toMatchObject({ retired: true });
  });

  it('MarkRead by a non-party -> MESSAGE_NOT_FOUND (404, as if missing), zero events; the sender -> NOT_A_RECIPIENT (403)', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: '@b', subject: 'for B only', body: 'x' });
    const byC = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => c.markRead({ messageId: sent.messageId }));
    expect(byC.status).toBe(404);
    expect(byC.envelope.messageId).toBe(sent.messageId);
    const bySender = await expectRejectedWithoutEvents(mailbox, 'NOT_A_RECIPIENT', () =>
      a.markRead({ messageId: sent.messageId }),
    );
    expect(bySender.status).toBe(403);
    await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => c.archive(sent.messageId));
    expect(await unreadIds(b)).toEqual([sent.messageId]);
  });

  it('MarkRead twice -> the same readAt and one ReceiptRead event', async () => {
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const mailbox = await harness.open({}, { clock: { now: () => new Date(now) } });
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: 'AGENT:*', subject: 'x', body: 'x' });
    const first = await b.markRead({ messageId: sent.messageId });
    now += 60_000; // a later clock: a second event would carry another time
    const before = (await mailbox.eventStore.readAll(null, 1e6)).length;
    const second = await b.markRead({ messageId: sent.messageId });
    expect(second).toEqual(first);
    expect((await mailbox.eventStore.readAll(null, 1e6)).length).toBe(before);
    const receipts = await eventsOfType(mailbox, 'ReceiptRead');
    expect(receipts.map((e) => e.data.reader)).toEqual(['@b']);
    expect((await c.unreadCount()).unreadCount).toBe(1);
    // Bulk form: already-read and new ids together, per-id results.
    const bulk = await c.markRead({ messageIds: JSON.stringify([sent.messageId]) });
    expect(bulk).toEqual({ results: [expect.objectContaining({ messageId: sent.messageId, status: 'read' })] });
    expect((await eventsOfType(mailbox, 'ReceiptRead')).map((e) => e.data.reader)).toEqual(['@b', '@c']);
  });

  it('bulk MarkRead with a repeated id (also in capitals): one receipt and one result per message, a DUPLICATE_MESSAGE_ID warning per repeat', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const one = await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
    const two = await a.send({ to: ['@b', '@c'], subject: 'two', body: 'x' });
    const ids = [one.messageId, two.messageId, one.messageId.toUpperCase(), one.messageId];
    const bulk = (await b.markRead({ messageIds: ids })) as { results: Array<{ messageId: string }>; warnings: unknown[] };
    expect(bulk.results.map((result) => result.messageId)).toEqual([one.messageId, two.messageId]); // in the order given
    expect(bulk.warnings).toEqual(
      [2, 3].map((index) => ({
        code: 'DUPLICATE_MESSAGE_ID',
        message: `messageIds[${index}] names the same message as messageIds[0] (${one.messageId}): it was marked read once, with one result.`,
        messageId: one.messageId,
        index,
        firstIndex: 0,
      })),
    );
    const receipts = await eventsOfType(mailbox, 'ReceiptRead');
    expect(receipts.map((e) => `${e.data.reader}:${e.data.messageId}`).sort()).toEqual(
      [`@b:${one.messageId}`, `@b:${two.messageId}`].sort(),
    );
    expect((await c.unreadCount()).unreadCount).toBe(2); // C's copies untouched
    const distinct = await b.markRead({ messageIds: [one.messageId, two.messageId] }); // nothing repeated: no warning
    expect(distinct).not.toHaveProperty('warnings');
  });

  it('MarkRead of a message that does not exist -> MESSAGE_NOT_FOUND, zero events', async () => {
    const mailbox = await harness.open();
    const { '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () =>
      b.markRead({ messageId: '00000000-0000-4000-8000-000000000000' }),
    );
  });
});
