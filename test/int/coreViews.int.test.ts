/**
 * Issue 2, item 4: inbox and outbox views with their filters and cursor
 * pagination, wake events published only after the view is updated, and views
 * rebuilt from the log at start. Through the library API on both stores.
 */
import { randomUUID } from 'node:crypto';
import type { Mailbox, MailboxClient } from '../../src/mailbox';
import { messageStream } from '../../src/events/streams';
import type { MessageSent, NewEvent, StoredEvent } from '../../src/events/types';
import type { WakeStreamEvent } from '../../src/application/mailboxQueries';
import { registerAgents } from '../support/fixtures';
import { mailboxHarness, STORE_KINDS } from './coreHarness';

const ids = (page: { messages: Array<{ messageId: string }> }) => page.messages.map((m) => m.messageId);

describe.each(STORE_KINDS)('views ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  it('inbox filters: status, from, threadId, tags, priority; newest first; archived hidden', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const m1 = await a.send({ to: '@b', subject: 'one', body: 'x', tags: ['ops'], priority: 'high' });
    const m2 = await c.send({ to: '@b', subject: 'two', body: 'x', tags: ['ops', 'db'] });
    const m3 = await a.send({ to: '@b', subject: 're: one', body: 'x', inReplyTo: m1.messageId });
    const m4 = await c.send({ to: 'AGENT:*', subject: 'all', body: 'x', priority: 'low' });
    await b.markRead({ messageId: m2.messageId });

    expect(ids(await b.listMessages({}))).toEqual([m4.messageId, m3.messageId, m2.messageId, m1.messageId]);
    expect(ids(await b.listMessages({ status: 'unread' }))).toEqual([m4.messageId, m3.messageId, m1.messageId]);
    expect(ids(await b.listMessages({ status: 'read' }))).toEqual([m2.messageId]);
    expect(ids(await b.listMessages({ from: '@a' }))).toEqual([m3.messageId, m1.messageId]);
    expect(ids(await b.listMessages({ threadId: m1.messageId }))).toEqual([m3.messageId, m1.messageId]);
    expect(ids(await b.listMessages({ tags: ['ops'] }))).toEqual([m2.messageId, m1.messageId]);
    expect(ids(await b.listMessages({ tags: 'ops,db' }))).toEqual([m2.messageId]);
    expect(ids(await b.listMessages({ priority: 'low' }))).toEqual([m4.messageId]);
    expect(ids(await b.listMessages({ status: 'unread', from: '@c' }))).toEqual([m4.messageId]);

    const listed = (await b.listMessages({ threadId: m1.messageId })).messages[0];
    expect(listed).toMatchObject({
      messageId: m3.messageId,
      from: '@a',
      to: '@b',
      subject: 're: one',
      priority: 'normal',
      threadId: m1.messageId,
      inReplyTo: m1.messageId,
      readAt: null,
      sentAt: m3.sentAt,
    });

    await b.archive(m1.messageId);
    expect(ids(await b.listMessages({}))).toEqual([m4.messageId, m3.messageId, m2.messageId]);
    expect((await b.unreadCount()).unread).toBe(2);
    expect((await b.listMessages({})).unreadCount).toBe(2);
  });

  it("an older log's message-id thread stored in upper case is found by the threadId filter in either case", async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b']);
    const root = await a.send({ to: '@b', subject: 'root', body: 'x' });
    // Written as versions before thread ids were canonical stored a threadId given in upper case: as typed.
    const upper = root.messageId.toUpperCase();
    const [sent] = (await mailbox.eventStore.readStream(messageStream(root.messageId))) as StoredEvent<MessageSent>[];
    const olderId = randomUUID();
    const older: NewEvent<MessageSent> = {
      eventId: randomUUID(),
      type: 'MessageSent',
      data: { ...sent.data, messageId: olderId, subject: 'older', threadId: upper },
      metadata: sent.metadata,
    };
    const { position } = await mailbox.eventStore.append(messageStream(olderId), [older], 'no_stream');
    expect(await mailbox.runner.waitFor(position)).toBe(true);
    // The filter lower-cases a message id's form, as a send does: the older message was in no page of its thread.
    for (const threadId of [root.messageId, upper]) {
      expect(ids(await b.listMessages({ threadId }))).toEqual([olderId, root.messageId]);
      expect(ids(await a.listMessages({ box: 'outbox', threadId }))).toEqual([olderId, root.messageId]);
    }
    expect((await b.listMessages({ threadId: upper })).messages[0]).toMatchObject({
      messageId: olderId,
      threadId: root.messageId,
    });
    // A reply to it naming the thread in either case joins it (it was refused as contradicting the parent's thread).
    const reply = await b.send({ to: '@a', subject: 're', body: 'x', inReplyTo: olderId, threadId: upper });
    expect(reply.threadId).toBe(root.messageId);
    expect(ids(await a.listMessages({ threadId: root.messageId }))).toEqual([reply.messageId]);
  });

  it('outbox: what the caller sent, filtered by to/threadId/priority', async () => {
    const mailbox = await harness.open();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const toB = await a.send({ to: '@b', subject: 'b', body: 'x' });
    const toC = await a.send({ to: '@c', subject: 'c', body: 'x', priority: 'high' });
    const all = await a.send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    expect(ids(await a.listMessages({ box: 'outbox' }))).toEqual([all.messageId, toC.messageId, toB.messageId]);
    expect(ids(await a.listMessages({ box: 'outbox', to: '@c' }))).toEqual([toC.messageId]);
    expect(ids(await a.listMessages({ box: 'outbox', to: 'AGENT:*' }))).toEqual([all.messageId]);
    expect(ids(await a.listMessages({ box: 'outbox', priority: 'high' }))).toEqual([toC.messageId]);
    expect(ids(await a.listMessages({ box: 'inbox' }))).toEqual([]);
  });

  it('cursor pagination walks every message exactly once, newest first', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent: string[] = [];
    for (let i = 0; i < 23; i++) sent.push((await a.send({ to: '@b', subject: `m${i}`, body: 'x' })).messageId);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await b.listMessages({ status: 'unread', limit: 5, ...(cursor ? { cursor } : {}) });
      seen.push(...ids(page));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...sent].reverse());
  });

  it('wakes: sync first, then one per recipient after the view holds the message; none to the broadcaster or when suppressed', async () => {
    const mailbox = await harness.open();
    const clients = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { '@a': a, '@b': b } = clients;
    await a.send({ to: '@b', subject: 'before watching', body: 'x' });
    const received: Record<string, WakeStreamEvent[]> = { '@a': [], '@b': [], '@c': [] };
    const visibleAtWake: Array<Promise<boolean>> = [];
    const unsubscribes = await Promise.all(
      Object.entries(clients).map(([identity, client]) =>
        client.watch((event) => {
          received[identity].push(event);
          // The view must already hold the message when its wake is published.
          if (event.event === 'wake') {
            visibleAtWake.push(
              client.listMessages({ status: 'unread' }).then((page) => ids(page).includes(event.data.messageId)),
            );
          }
        }),
      ),
    );
    const broadcast = await a.send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    await a.send({ to: '@b', subject: 'quiet', body: 'x', wakeSuppressed: true });
    const direct = await a.send({ to: '@b', subject: 'loud', body: 'x', priority: 'high' });

    expect(received['@b'][0]).toEqual({ event: 'sync', data: { unreadCount: 1, byPriority: { low: 0, normal: 1, high: 0 } } });
    expect(received['@c'][0]).toMatchObject({ event: 'sync', data: { unreadCount: 0 } });
    const wakesOf = (identity: string) =>
      received[identity].filter((e) => e.event === 'wake').map((e) => e.data as { messageId: string });
    expect(wakesOf('@a')).toEqual([]);
    expect(wakesOf('@c')).toEqual([
      expect.objectContaining({ messageId: broadcast.messageId, isBroadcast: true, from: '@a', unreadCount: 1 }),
    ]);
    expect(wakesOf('@b')).toEqual([
      expect.objectContaining({ type: 'wake/message', messageId: broadcast.messageId, isBroadcast: true, unreadCount: 2 }),
      expect.objectContaining({
        messageId: direct.messageId,
        isBroadcast: false,
        priority: 'high',
        subject: 'loud',
        to: '@b',
        unreadCount: 4,
      }),
    ]);
    expect(await Promise.all(visibleAtWake)).toEqual([true, true, true]);
    expect((await b.unreadCount()).unread).toBe(4);
    await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
  });

  it('heartbeat counts: unread by priority, oldest unread, last activity', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const first = await a.send({ to: '@b', subject: '1', body: 'x', priority: 'low' });
    const second = await a.send({ to: '@b', subject: '2', body: 'x', priority: 'high' });
    let beat = await mailbox.projections.heartbeat('@b');
    expect(beat).toMatchObject({
      identity: '@b',
      unread: 2,
      byPriority: { low: 1, normal: 0, high: 1 },
      oldestUnreadAt: first.sentAt,
    });
    const read = (await b.markRead({ messageId: first.messageId })) as { readAt: string };
    beat = await mailbox.projections.heartbeat('@b');
    expect(beat).toMatchObject({
      unread: 1,
      byPriority: { low: 0, normal: 0, high: 1 },
      oldestUnreadAt: second.sentAt,
      lastActivityAt: read.readAt,
    });
    expect((await mailbox.projections.heartbeat('@a')).lastActivityAt).toBe(second.sentAt);
  });
});

describe('views are rebuilt from the log at start (SQLite)', () => {
  const harness = mailboxHarness(STORE_KINDS.find((k) => k.name === 'sqlite')!);

  async function snapshot(mailbox: Mailbox, clients: Record<string, MailboxClient>) {
    const out: Record<string, unknown> = {};
    for (const [identity, client] of Object.entries(clients)) {
      out[identity] = {
        inbox: await client.listMessages({ limit: 200 }),
        outbox: await client.listMessages({ box: 'outbox', limit: 200 }),
        count: await client.unreadCount(),
        heartbeat: await mailbox.projections.heartbeat(identity),
      };
    }
    out.agents = await mailbox.projections.listAgents();
    return out;
  }

  it('a fresh mailbox on the same file shows exactly the same views', async () => {
    const first = await harness.open();
    const clients = await registerAgents(first, ['@a', '@b', '@c', '@d']);
    const broadcast = await clients['@a'].send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    for (let i = 0; i < 5; i++)
      await clients['@b'].send({ to: '@c', subject: `${i}`, body: 'x', priority: i % 2 ? 'high' : 'low' });
    await clients['@b'].markRead({ messageId: broadcast.messageId });
    await clients['@c'].archive(broadcast.messageId);
    await first.asActor({ identity: 'admin', role: 'admin' }).retireAgent('@d');
    await snapshot(first, clients); // returns every message once: seen from now on (issue 13)
    await first.flushSeenMarks();
    const before = await snapshot(first, clients);
    await first.close();

    const second = await harness.open();
    const reopened: Record<string, MailboxClient> = {};
    for (const identity of Object.keys(clients)) reopened[identity] = second.asActor({ identity, role: 'agent' });
    expect(await snapshot(second, reopened)).toEqual(before);
  });
});
