/** Seen marks (issue 13): the first mark sets seenAt; unseen counts entries unread, not archived and never seen. */
import { ReadModelSpec } from '../../support/readModelSpec';
import { LogBuilder, next } from './scenario';

describe('read model: seen marks and the unseen count', () => {
  it('a new entry is unseen; its first mark sets seenAt and moves unseen, a second mark changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const given = log.projected();
    let seenAt = '';
    const when = next(log, (l) => (seenAt = l.seen('@b', m1)));
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'entrySeen', recipient: '@b', messageId: m1, seenAt },
        { kind: 'unseenMoved', identity: '@b', by: -1 },
      ]);
    ReadModelSpec.given([...given, ...when])
      .when(...next(log, (l) => l.seen('@b', m1)))
      .thenNothing();
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toMatchObject({ unread: 1, unseen: 0 });
        expect(views.listed(views.listing('@b', 'inbox')[0], 'inbox').seenAt).toBe(seenAt);
      });
  });

  it('one batch marks several entries; a mark for another recipient or for no message changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const m2 = log.send('@a', ['@b', '@c']);
    const given = log.projected();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.seen('@b', m1, m2, 'no-such-message')))
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toMatchObject({ unread: 2, unseen: 0 });
        expect(views.heartbeat('@c')).toMatchObject({ unread: 1, unseen: 1 });
      });
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.seen('@c', m1)))
      .then([]);
  });

  it('reading or archiving an unseen entry moves unseen once; seen later moves nothing; unarchive counts it again', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const m2 = log.send('@a', '@b');
    const given = log.projected();
    ReadModelSpec.given(given)
      .when(
        ...next(log, (l) => {
          l.read('@b', m1);
          l.archive('@b', m2);
        }),
      )
      .thenViews((views) => expect(views.heartbeat('@b')).toMatchObject({ unread: 0, unseen: 0 }));
    const afterArchive = [...given, ...next(log, (l) => l.archive('@b', m2))];
    ReadModelSpec.given(afterArchive)
      .when(...next(log, (l) => l.unarchive('@b', m2)))
      .thenViews((views) => expect(views.heartbeat('@b')).toMatchObject({ unread: 2, unseen: 2 }));
    const seenThenArchived = [...given, ...next(log, (l) => l.seen('@b', m2)), ...next(log, (l) => l.archive('@b', m2))];
    ReadModelSpec.given(seenThenArchived)
      .when(...next(log, (l) => l.unarchive('@b', m2)))
      .then([
        { kind: 'entryUnarchived', recipient: '@b', messageId: m2 },
        { kind: 'unreadMoved', identity: '@b', priority: 'normal', by: 1 },
      ]);
  });
});
