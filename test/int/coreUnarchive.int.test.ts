/**
 * Acceptance (issue 13, item 4): unarchive and the archived view. Unarchive restores the message to the
 * inbox and the counts, for its recipient only; status=archived lists what the caller archived.
 * Through the library API on every event store, with identities A (sender), B and C (recipients), D.
 */
import { registerAgents } from '../support/fixtures';
import { eventsOfType, expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

type Lister = { listMessages(q?: unknown): Promise<{ messages: Array<{ messageId: string; archivedAt?: string }> }> };
const ids = async (client: Lister, query: Record<string, unknown>) =>
  (await client.listMessages(query)).messages.map((m) => m.messageId);

describe.each(STORE_KINDS)('unarchive and the archived view ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('B archives then unarchives: back in the inbox and the counts; C, who got the same message, is unaffected', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const m1 = await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x', priority: 'high' });
    const m2 = await a.send({ to: '@b', subject: 'two', body: 'x' });
    const archived = await b.archive(m1.messageId);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 1, unread: 1, byPriority: { low: 0, normal: 1, high: 0 } });
    expect(await ids(b, {})).toEqual([m2.messageId]);
    const archivedList = (await b.listMessages({ status: 'archived' })).messages;
    expect(archivedList).toEqual([
      expect.objectContaining({ messageId: m1.messageId, archivedAt: archived.archivedAt, readAt: null }),
    ]);
    expect(await ids(c, { status: 'archived' })).toEqual([]);

    const back = await b.unarchive(m1.messageId);
    expect(back).toEqual({ messageId: m1.messageId, status: 'inbox', readAt: null, changed: true });
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 2, unread: 2, byPriority: { low: 0, normal: 1, high: 1 } });
    expect(await ids(b, { status: 'unread' })).toEqual([m2.messageId, m1.messageId]);
    expect(await ids(b, { status: 'archived' })).toEqual([]);
    expect((await b.getMessage(m1.messageId)).archivedAt).toBeNull();
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 1 });

    // Idempotent: not archived any more, nothing written.
    const before = (await eventsOfType(mailbox, 'MessageUnarchived')).length;
    expect(await b.unarchive(m1.messageId)).toEqual({ messageId: m1.messageId, status: 'inbox', readAt: null, changed: false });
    expect(await eventsOfType(mailbox, 'MessageUnarchived')).toHaveLength(before);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 2 });
  });

  // Archiving an archived message answered exactly as archiving it: nothing said that nothing changed.
  it('archive answers changed: true, then changed: false with the first archivedAt when already archived, writing nothing', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const m1 = await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
    const first = await b.archive(m1.messageId);
    expect(first).toEqual({ messageId: m1.messageId, status: 'archived', archivedAt: expect.any(String), changed: true });
    const before = (await eventsOfType(mailbox, 'MessageArchived')).length;
    expect(await b.archive(m1.messageId)).toEqual({ ...first, changed: false });
    expect(await eventsOfType(mailbox, 'MessageArchived')).toHaveLength(before);
    // C's copy is C's own: archiving it changes it.
    expect(await c.archive(m1.messageId)).toMatchObject({ changed: true });
  });

  it('a read message unarchived stays read (no count moves); archive again and the archived view shows it', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const m1 = await a.send({ to: '@b', subject: 'one', body: 'x' });
    const read = await b.markRead({ messageId: m1.messageId });
    await b.archive(m1.messageId);
    expect((await b.unarchive(m1.messageId)).readAt).toBe((read as { readAt: string }).readAt);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 0 });
    expect(await ids(b, { status: 'read' })).toEqual([m1.messageId]);
    await b.archive(m1.messageId);
    expect(await ids(b, { status: 'archived' })).toEqual([m1.messageId]);
  });

  it('the sender gets NOT_A_RECIPIENT, a stranger MESSAGE_NOT_FOUND; neither writes anything', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@d': d } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const m1 = await a.send({ to: '@b', subject: 'one', body: 'x' });
    await b.archive(m1.messageId);
    await expectRejectedWithoutEvents(mailbox, 'NOT_A_RECIPIENT', () => a.unarchive(m1.messageId));
    await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => d.unarchive(m1.messageId));
    await expectRejectedWithoutEvents(mailbox, 'FILTER_NOT_APPLICABLE', () =>
      a.listMessages({ box: 'outbox', status: 'archived' }),
    );
  });
});
