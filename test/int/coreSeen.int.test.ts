/**
 * Acceptance (issue 13, item 2): seen is not read. A message is seen the first time it is returned to its
 * recipient (a list page or a get); the marks are written in batches after the request, so the listing
 * that returns a message for the first time shows seenAt null, and every later one shows the first seenAt.
 * Library API on every event store; A sends, B and C receive, D is neither.
 */
import { registerAgents } from '../support/fixtures';
import { eventsOfType, mailboxHarness, STORE_KINDS } from './coreHarness';

describe.each(STORE_KINDS)('seen marks ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('listed -> seenAt set once, for that recipient only; counts report unseen beside unread', async () => {
    const mailbox = await harness.open({ seenFlushMs: 60_000 }); // only flushSeenMarks writes them here
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const m1 = await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
    const m2 = await a.send({ to: '@b', subject: 'two', body: 'x' });
    const m3 = await a.send({ to: '@b', subject: 'three', body: 'x' });
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 3, unseenCount: 3 });

    const first = await b.listMessages({ limit: 2 });
    expect(first.messages.map((m) => [m.messageId, m.seenAt])).toEqual([
      [m3.messageId, null],
      [m2.messageId, null],
    ]);
    // The listing did not wait for its marks (read the log directly: eventsOfType would write them first).
    expect((await mailbox.eventStore.readAll(null, 1000)).filter((e) => e.type === 'MessagesSeen')).toEqual([]);
    await mailbox.flushSeenMarks();
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 3, unseenCount: 1 });
    const second = await b.listMessages({});
    const seenAt = second.messages[0].seenAt;
    expect(seenAt).toEqual(expect.any(String));
    expect(second.messages.map((m) => [m.messageId, m.seenAt])).toEqual([
      [m3.messageId, seenAt],
      [m2.messageId, seenAt],
      [m1.messageId, null], // returned now for the first time
    ]);
    await mailbox.flushSeenMarks();
    const third = await b.listMessages({});
    expect(third.messages.map((m) => m.seenAt)).toEqual([seenAt, seenAt, expect.any(String)]);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 3, unseenCount: 0 });

    // C was not shown anything; the outbox shows no seenAt; listing it again wrote no further marks.
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 1, unseenCount: 1 });
    expect((await a.listMessages({ box: 'outbox' })).messages.every((m) => m.seenAt === null)).toBe(true);
    const marks = await eventsOfType(mailbox, 'MessagesSeen');
    expect(marks.map((e) => [e.streamName, e.data.recipient, e.data.messageIds.length])).toEqual([
      ['mailbox-seen-@b', '@b', 2],
      ['mailbox-seen-@b', '@b', 1],
    ]);
    // Seen is not read.
    expect((await b.getMessage(m2.messageId)).readAt).toBeNull();
  });

  it('a count right after a listing does not count what the listing just showed as unseen (its marks written first)', async () => {
    // Marks written only by a flush here: before, the count after the listing said unseenCount 2 until the flush.
    const mailbox = await harness.open({ seenFlushMs: 60_000 });
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: ['@b', '@c'], subject: 'one', body: 'x' });
    await a.send({ to: '@b', subject: 'two', body: 'x' });
    await c.send({ to: '@b', subject: 'three', body: 'x' });
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 3, unseenCount: 3 });
    expect((await b.listMessages({ limit: 2 })).messages).toHaveLength(2);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 3, unseenCount: 1 });
    const marks = await eventsOfType(mailbox, 'MessagesSeen');
    expect(marks.map((e) => [e.data.recipient, e.data.messageIds.length])).toEqual([['@b', 2]]);
    // Per recipient: @c was shown nothing, its count is untouched and no mark of its own was written.
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 1, unseenCount: 1 });
    // A count with nothing noted writes nothing.
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 3, unseenCount: 1 });
    expect(await eventsOfType(mailbox, 'MessagesSeen')).toHaveLength(1);
  });

  it("a count writes its caller's marks alone: the others listed are written by their own count or the next flush", async () => {
    // Before, a count wrote every recipient's pending marks and waited for them all (seconds after a burst of listings).
    const mailbox = await harness.open({ seenFlushMs: 60_000 });
    const { '@a': a, '@b': b, '@c': c, '@d': d } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    await a.send({ to: ['@b', '@c', '@d'], subject: 'one', body: 'x' });
    await a.send({ to: ['@b', '@c'], subject: 'two', body: 'x' });
    for (const agent of [b, c, d]) expect((await agent.listMessages({})).messages.length).toBeGreaterThan(0);
    const marksInLog = async () =>
      (await mailbox.eventStore.readAll(null, 1000))
        .filter((e) => e.type === 'MessagesSeen')
        .map((e) => [(e.data as { recipient: string }).recipient, (e.data as { messageIds: string[] }).messageIds.length]);

    expect(await b.unreadCount()).toMatchObject({ unreadCount: 2, unseenCount: 0 });
    expect(await marksInLog()).toEqual([['@b', 2]]);
    expect(await c.unreadCount()).toMatchObject({ unreadCount: 2, unseenCount: 0 });
    expect(await marksInLog()).toEqual([
      ['@b', 2],
      ['@c', 2],
    ]);
    await mailbox.flushSeenMarks();
    expect(await marksInLog()).toEqual([
      ['@b', 2],
      ['@c', 2],
      ['@d', 1],
    ]);
    expect(await d.unreadCount()).toMatchObject({ unreadCount: 1, unseenCount: 0 });
    expect(await marksInLog()).toHaveLength(3); // nothing left to write for @d
  });

  it('a get returns the message to its recipient: seen; the sender opening it marks nothing', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const m1 = await a.send({ to: '@b', subject: 'one', body: 'x' });
    await a.getMessage(m1.messageId);
    await mailbox.flushSeenMarks();
    expect(await eventsOfType(mailbox, 'MessagesSeen')).toEqual([]);
    await b.getMessage(m1.messageId);
    await mailbox.flushSeenMarks();
    expect((await b.listMessages({})).messages[0].seenAt).toEqual(expect.any(String));
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 1, unseenCount: 0 });
  });
});
