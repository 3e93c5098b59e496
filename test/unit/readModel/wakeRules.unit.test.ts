/** Which wakes are due: one per new inbox entry, with the unread count after it; none to a broadcast's sender, none when suppressed. */
import { ReadModelSpec } from '../../support/readModelSpec';
import type { WakeEvent } from '../../../src/projections/viewChanges';
import { entryOf, LogBuilder, next, nextPosition } from './scenario';

const wake = (
  entry: ReturnType<typeof entryOf>,
  recipient: string,
  isBroadcast: boolean,
  unreadCount: number,
  position: bigint,
): WakeEvent => ({
  type: 'wake/message',
  messageId: entry.messageId,
  from: entry.from,
  to: entry.to,
  recipient,
  subject: entry.subject,
  priority: entry.priority,
  isBroadcast,
  unreadCount,
  position: position.toString(),
});

describe('read model: wakes', () => {
  it('a direct message wakes its recipient once, with the unread count after the entry', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@c', '@b');
    const given = log.projected();
    const position = nextPosition(log);
    const when = next(log, (l) => l.send('@a', '@b', { priority: 'high' }));
    ReadModelSpec.given(given)
      .when(...when)
      .thenWakes([wake(entryOf(log, 'm2'), '@b', false, 2, position)]);
  });

  it('a broadcast wakes each audience member but never its own sender', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const first = nextPosition(log);
    const when = next(log, (l) => l.send('@a', 'AGENT:*', {}, ['@a', '@b', '@c']));
    const entry = entryOf(log, 'm1');
    ReadModelSpec.given([])
      .when(...when)
      .thenWakes([wake(entry, '@b', true, 1, first + 2n), wake(entry, '@c', true, 1, first + 3n)]);
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => expect(views.heartbeat('@a').unread).toBe(1)); // still delivered
  });

  it('wakeSuppressed: the entry arrives, no wake', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const when = next(log, (l) => {
      l.send('@a', '@b', { wakeSuppressed: true });
      l.send('@a', 'AGENT:*', { wakeSuppressed: true }, ['@b', '@c']);
    });
    ReadModelSpec.given([])
      .when(...when)
      .thenWakes([]);
    ReadModelSpec.given([])
      .when(...when)
      .thenViews((views) => expect(views.heartbeat('@b').unread).toBe(2));
  });

  it('a redelivered entry wakes nobody', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', '@b');
    const given = log.projected();
    const again = { ...given[given.length - 1], position: nextPosition(log) };
    ReadModelSpec.given(given).when(again).thenWakes([]);
  });
});
