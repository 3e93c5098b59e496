/** The inbox rules: one entry per recipient, exact unread counts per priority, receipts and archives counted once. */
import { ReadModelSpec } from '../../support/readModelSpec';
import { entryOf, LogBuilder, next, nextPosition } from './scenario';

describe('read model: inbox entries and unread counts', () => {
  it('a direct message adds one entry to the recipient, counts it unread at its priority, and records the sender', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const given = log.projected();
    const position = nextPosition(log);
    const when = next(log, (l) => l.send('@a', '@b', { priority: 'high', tags: ['ops'] }));
    const entry = entryOf(log, 'm1');
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'messageRecorded', position, summary: { ...entry, inReplyTo: null, task: null, recipientCount: 1 } },
        { kind: 'identityHasViews', identity: '@a' },
        { kind: 'outboxEntryAdded', sender: '@a', position, entry },
        { kind: 'lastActivityMoved', identity: '@a', at: entry.sentAt },
        { kind: 'identityHasViews', identity: '@b' },
        { kind: 'inboxEntryAdded', recipient: '@b', position, entry, isBroadcast: false, wakeSuppressed: false },
        { kind: 'unreadMoved', identity: '@b', priority: 'high', by: 1 },
        { kind: 'unseenMoved', identity: '@b', by: 1 },
      ]);
  });

  it('one entry per recipient: the same delivery again (a later BroadcastDelivered repeat) changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', 'AGENT:*', {}, ['@b', '@c']);
    const given = log.projected();
    const repeat = { ...given[given.length - 1], position: nextPosition(log) }; // @c's delivery, at a new position
    ReadModelSpec.given(given).when(repeat).thenNothing();
    ReadModelSpec.given(given)
      .when(repeat)
      .thenViews((views) => expect(views.heartbeat('@c').unread).toBe(1));
  });

  it("a read moves the unread count of the entry's own priority once; reading again changes nothing", () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b', { priority: 'low' });
    const given = log.projected();
    let readAt = '';
    const when = next(log, (l) => (readAt = l.read('@b', m1)));
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'entryRead', recipient: '@b', messageId: m1, readAt },
        { kind: 'unreadMoved', identity: '@b', priority: 'low', by: -1 },
        { kind: 'unseenMoved', identity: '@b', by: -1 },
        { kind: 'lastActivityMoved', identity: '@b', at: readAt },
      ]);
    const again = next(log, (l) => l.read('@b', m1));
    ReadModelSpec.given([...given, ...when])
      .when(...again)
      .thenNothing();
  });

  it('archiving an unread entry moves the count; archiving it again changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const given = log.projected();
    const archivedAt = log.nextAt;
    const when = next(log, (l) => l.archive('@b', m1));
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'entryArchived', recipient: '@b', messageId: m1, archivedAt },
        { kind: 'unreadMoved', identity: '@b', priority: 'normal', by: -1 },
        { kind: 'unseenMoved', identity: '@b', by: -1 },
      ]);
    ReadModelSpec.given([...given, ...when])
      .when(...next(log, (l) => l.archive('@b', m1)))
      .thenNothing();
  });

  it('read-after-archive records the receipt and the activity but moves no count (it left the unread set once)', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    log.archive('@b', m1);
    const given = log.projected();
    let readAt = '';
    const when = next(log, (l) => (readAt = l.read('@b', m1)));
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'entryRead', recipient: '@b', messageId: m1, readAt },
        { kind: 'lastActivityMoved', identity: '@b', at: readAt },
      ]);
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toMatchObject({ unread: 0, byPriority: { low: 0, normal: 0, high: 0 } });
      });
  });

  it('archive-after-read records the archive mark and moves no count', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b', { priority: 'high' });
    log.read('@b', m1);
    const given = log.projected();
    const archivedAt = log.nextAt;
    const when = next(log, (l) => l.archive('@b', m1, false));
    ReadModelSpec.given(given)
      .when(...when)
      .then([{ kind: 'entryArchived', recipient: '@b', messageId: m1, archivedAt }]);
  });

  it('a receipt or archive for an entry the recipient does not have changes no entry, count or activity', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    log.send('@b', '@c'); // @c has views
    const given = log.projected();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.read('@c', m1)))
      .thenNothing();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.archive('@c', m1)))
      .thenNothing();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.read('@c', 'unknown-message')))
      .thenNothing();
  });

  it('an identity first named by a receipt for nothing has views from then on (listed with zero counts), and nothing else', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const given = log.projected();
    const when = next(log, (l) => l.read('@c', m1));
    ReadModelSpec.given(given)
      .when(...when)
      .then([{ kind: 'identityHasViews', identity: '@c' }]);
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@c')).toEqual({
          identity: '@c',
          tasksWaiting: 0,
          tasksWaitingSince: null,
          repliesOwed: 0,
          nextReplyDueBy: null,
          unread: 0,
          unseen: 0,
          byPriority: { low: 0, normal: 0, high: 0 },
          oldestUnreadAt: null,
          lastActivityAt: null,
        });
      });
  });

  it("counts are per recipient: a broadcast counts once in each audience member's inbox, reads only in the reader's", () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const all = log.send('@a', 'AGENT:*', { priority: 'high' }, ['@b', '@c']);
    const given = log.projected();
    const when = next(log, (l) => l.read('@c', all));
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toMatchObject({ unread: 1, byPriority: { low: 0, normal: 0, high: 1 } });
        expect(views.heartbeat('@c')).toMatchObject({ unread: 0, byPriority: { low: 0, normal: 0, high: 0 } });
        expect(views.heartbeat('@a')).toMatchObject({ unread: 0 });
      });
  });

  it('unarchiving an unread entry brings it back: +1 unread at its priority, listed again; a second unarchive changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b', { priority: 'high' });
    log.archive('@b', m1);
    const given = log.projected();
    const when = next(log, (l) => l.unarchive('@b', m1));
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'entryUnarchived', recipient: '@b', messageId: m1 },
        { kind: 'unreadMoved', identity: '@b', priority: 'high', by: 1 },
        { kind: 'unseenMoved', identity: '@b', by: 1 },
      ]);
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toMatchObject({ unread: 1, oldestUnreadAt: log.sentAt(m1) });
        expect(views.listing('@b', 'unread').map((e) => e.fields.messageId)).toEqual([m1]);
      });
    ReadModelSpec.given([...given, ...when])
      .when(...next(log, (l) => l.unarchive('@b', m1)))
      .thenNothing();
  });

  it('unarchiving a read entry moves no count; unarchiving an entry never archived, or one of another recipient, changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const m2 = log.send('@a', '@b');
    log.read('@b', m1);
    log.archive('@b', m1);
    const given = log.projected();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.unarchive('@b', m1)))
      .then([{ kind: 'entryUnarchived', recipient: '@b', messageId: m1 }]);
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.unarchive('@b', m2)))
      .thenNothing();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.unarchive('@c', m1)))
      .then([{ kind: 'identityHasViews', identity: '@c' }]);
  });
});
