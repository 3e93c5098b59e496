/** The outbox (one entry per message) and last activity (the newest of sent or read; it never moves back). */
import { ReadModelSpec } from '../../support/readModelSpec';
import type { ProjectedEvent } from '../../../src/projections/viewChanges';
import { entryOf, LogBuilder, next, nextPosition } from './scenario';

describe('read model: outbox and last activity', () => {
  it('a broadcast adds one outbox entry for the sender and no inbox entry until its deliveries', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@b', '@c'); // @b and @c have views
    const given = log.projected();
    const position = nextPosition(log);
    const sent = next(log, (l) => l.send('@a', 'AGENT:*', {}, ['@b', '@c'])).slice(0, 1); // the MessageSent alone
    const entry = entryOf(log, 'm2');
    ReadModelSpec.given(given)
      .when(...sent)
      .then([
        { kind: 'messageRecorded', position, summary: { ...entry, inReplyTo: null, task: null, recipientCount: 2 } },
        { kind: 'identityHasViews', identity: '@a' },
        { kind: 'outboxEntryAdded', sender: '@a', position, entry },
        { kind: 'lastActivityMoved', identity: '@a', at: entry.sentAt },
      ]);
  });

  it('one outbox entry per message: the same MessageSent at a later position records the summary and nothing else', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', '@b');
    const given = log.projected();
    const sent = given[given.length - 1];
    const repeat: ProjectedEvent = {
      ...sent,
      position: nextPosition(log),
      changes: sent.changes.filter((fact) => fact.kind !== 'inboxAdded'),
    };
    const recorded = repeat.changes[0];
    if (recorded.kind !== 'messageRecorded') throw new Error('expected the summary first');
    ReadModelSpec.given(given)
      .when(repeat)
      .then([{ kind: 'messageRecorded', position: repeat.position, summary: recorded.summary }]);
    ReadModelSpec.given(given)
      .when(repeat)
      .thenViews((views) => expect(views.listing('@a', 'outbox')).toHaveLength(1));
  });

  it("a read older than the reader's last send leaves its last activity where it is", () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    log.send('@b', '@c'); // @b active at this sentAt
    const given = log.projected();
    const when = next(log, (l) => l.read('@b', m1));
    const receipt = when[0].changes[0];
    if (receipt.kind !== 'receiptRead') throw new Error('expected a receipt');
    receipt.readAt = '2025-01-01T00:00:00.000Z'; // a clock behind the log's
    ReadModelSpec.given(given)
      .when(...when)
      .then([
        { kind: 'entryRead', recipient: '@b', messageId: m1, readAt: '2025-01-01T00:00:00.000Z' },
        { kind: 'unreadMoved', identity: '@b', priority: 'normal', by: -1 },
        { kind: 'unseenMoved', identity: '@b', by: -1 },
      ]);
  });

  it('last activity is the newest of sent and read', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    const sentByB = log.send('@b', '@c');
    let readAt = '';
    const given = log.projected();
    const when = next(log, (l) => (readAt = l.read('@b', m1)));
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@b').lastActivityAt).toBe(readAt);
        expect(views.heartbeat('@c').lastActivityAt).toBeNull(); // receiving is not activity
        expect(readAt > log.sentAt(sentByB)).toBe(true);
      });
  });
});
